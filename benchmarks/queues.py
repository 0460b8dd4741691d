"""Benchmark of team review (issue 16). Prints figures; asserts nothing.

1. "Next item" latency, p50 / p99, on a queue of 100,000 items with 2 reviewers per
   run, whose first 20,000 runs already carry 5 answer ratings (complete items the
   queue has to skip); after each answer the reviewer rates the item's run's answer
   through the feedback service (``upsert_feedback``, which keeps the item's stored
   completion), so the queue moves as it would. Twice: one reviewer alone, alternating
   with the runs-list page alone; and 20 reviewers asking concurrently (one thread and
   one connection each, as 20 requests would) while one more client fetches the
   runs-list page under the same load — each printed beside the runs list (target:
   within 2x).
2. The agreement page at 100,000 answer ratings, p50 through the WSGI app, beside the
   runs-list page (target: within 2x).

Both on SQLite (a temporary file) and on PostgreSQL (a private database, dropped after)
when ``--database-url postgresql://...`` is given or ``REVIEWAPP_BENCH_PG_URL`` is set.

    .venv/bin/python benchmarks/queues.py [--quick] [--sqlite-only]
        [--database-url postgresql://postgres@127.0.0.1:5432/postgres] [--rounds 10]

``--quick`` uses 10,000 runs and ratings instead of 100,000.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.pages import PASSWORD, SECRET, _login, paired_p50_ms

REVIEWERS = 20
RATERS_PER_RATED_RUN = 5
BATCH = 5_000


def _app(url: str):
    from reviewapp import create_app

    return create_app({"SECRET_KEY": SECRET, "DATABASE_URL": url, "WTF_CSRF_ENABLED": False,
                       "RATELIMIT_ENABLED": False})


def _insert(conn: Any, table: Any, rows: list[dict[str, Any]]) -> None:
    for start in range(0, len(rows), BATCH):
        conn.execute(table.insert(), rows[start:start + BATCH])


def build(url: str, count: int) -> tuple[int, list[int]]:
    """``count`` runs in one workspace (bulk inserts), an answer message each, a lead
    ``bench``, 20 reviewers, ``count`` answer ratings (5 per run on the first ``count /
    5`` runs, the reviewers agreeing 80 % of the time) and a queue of every run (2
    reviewers per run) whose items carry their stored counts, as the services and the
    migration's backfill leave them. Returns (queue id, reviewer user ids)."""
    from sqlalchemy import text

    from reviewapp.actors import Actor, Role
    from reviewapp.extensions import db
    from reviewapp.models import Feedback, Message, QueueItem, ReviewQueue, Run
    from reviewapp.services import admin

    app = _app(url)
    with app.app_context():
        db.create_all()
        system = Actor.system_actor()
        ws = admin.create_workspace(db.session, system, "bench", "Bench")
        ws_id = ws.id
        admin.create_user(db.session, system, "bench", PASSWORD, ws_id, Role.LEAD.value)
        reviewers = [admin.create_user(db.session, system, f"reviewer{i}", PASSWORD, ws_id,
                                       Role.REVIEWER.value).id for i in range(REVIEWERS)]
        queue = ReviewQueue(workspace_id=ws_id, name="Everything", rule={}, sample_percent=100,
                            reviewers_per_run=2, blind=False, reservation_minutes=10)
        db.session.add(queue)
        db.session.commit()
        queue_id = queue.id
        now = datetime(2026, 11, 30, 12, tzinfo=UTC)
        base = datetime(2025, 1, 1, tzinfo=UTC)
        with db.engine.begin() as conn:
            session_pk = conn.execute(text(
                "INSERT INTO diagnosis_session (session_id, workspace_id, kind, created_at, "
                "updated_at) VALUES ('bench-session', :ws, 'chat', :now, :now) RETURNING id"),
                {"ws": ws_id, "now": now}).scalar_one()
            kinds, statuses = ("chat", "aiops"), ("SUCCESS", "SUCCESS", "FAILED")
            verdicts = ("PASS", "LOW_CONFID", "REJECT", None)
            runs = []
            for i in range(count):
                at = base + timedelta(seconds=(i // 4) * 7)
                runs.append({
                    "run_id": f"run-{i}", "workspace_id": ws_id,
                    "diagnosis_session_id": session_pk, "kind": kinds[i % 2],
                    "query": f"Question number {i} about service {i % 97}?",
                    "answer": f"Answer {i}.", "status": statuses[i % 3],
                    "evidence_score": (i * 37) % 101 if i % 10 else None,
                    "verifier_verdict": verdicts[i % 4], "tool_call_count": i % 13,
                    "failed_tool_call_count": i % 3, "created_at": at, "updated_at": at})
            _insert(conn, Run.__table__, runs)
            run_pks = list(conn.execute(text(
                "SELECT id FROM diagnosis_run ORDER BY id")).scalars())
            _insert(conn, Message.__table__, [
                {"run_pk": pk, "ordinal": 0, "role": "assistant", "content": f"Answer {pk}.",
                 "metadata": {}, "created_at": now, "updated_at": now} for pk in run_pks])
            answer = dict(conn.execute(text("SELECT run_pk, id FROM message")).all())
            rng = random.Random(16)
            ratings = []
            rated = run_pks[: count // RATERS_PER_RATED_RUN]
            for index, pk in enumerate(rated):
                truth = rng.random() < 0.6
                for k in range(RATERS_PER_RATED_RUN):
                    agree = rng.random() < 0.8
                    ratings.append({
                        "author_id": reviewers[(index + k) % REVIEWERS], "workspace_id": ws_id,
                        "run_pk": pk, "target_type": "chat_message", "target_id": answer[pk],
                        "subject_key": "", "rating": "positive" if truth == agree else "negative",
                        "created_at": now, "updated_at": now})
            _insert(conn, Feedback.__table__, ratings)
            done = set(rated)
            _insert(conn, QueueItem.__table__, [
                {"queue_id": queue_id, "run_pk": pk, "source": "rule",
                 "ratings_count": RATERS_PER_RATED_RUN if pk in done else 0,
                 "completed_at": now if pk in done else None,
                 "created_at": now, "updated_at": now} for pk in run_pks])
            conn.execute(text("ANALYZE"))
        db.engine.dispose()
    return queue_id, reviewers


def next_item_latency(url: str, queue_id: int, reviewers: list[int], rounds: int,
                      runs_list_alongside: bool = False) -> tuple[list[float], list[float]]:
    """Milliseconds of each ``next_item`` call, ``len(reviewers)`` reviewers in parallel
    (one thread and one connection each), ``rounds`` each; between two calls each
    reviewer rates the answer of the run it got (``upsert_feedback``). With
    ``runs_list_alongside``, one more thread fetches the runs-list page (a logged-in
    test client) for as long as the reviewers work: (next-item times, runs-list times),
    both under the same load."""
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from reviewapp.actors import Actor
    from reviewapp.db_setup import write_intent
    from reviewapp.extensions import db
    from reviewapp.models import Message
    from reviewapp.services import feedback, review_queues

    app = _app(url)
    times: list[float] = []
    list_times: list[float] = []
    lock = threading.Lock()
    failures: list[BaseException] = []
    parties = len(reviewers) + (1 if runs_list_alongside else 0)
    barrier = threading.Barrier(parties)
    working = [len(reviewers)]

    def work(user_id: int) -> None:
        actor = Actor.for_user(user_id, f"reviewer{user_id}")
        try:
            with app.app_context(), write_intent(), Session(db.engine) as session:
                barrier.wait()
                for _ in range(rounds):
                    t0 = time.perf_counter()
                    item = review_queues.next_item(session, actor, queue_id)
                    elapsed = (time.perf_counter() - t0) * 1000
                    with lock:
                        times.append(elapsed)
                    if item is None:
                        return
                    message = session.scalar(select(Message.id).where(
                        Message.run_pk == item.run_pk))
                    session.commit()
                    feedback.upsert_feedback(session, actor, "chat_message", message, None,
                                             "positive")
        except BaseException as exc:  # reported by the caller
            failures.append(exc)
        finally:
            with lock:
                working[0] -= 1

    def browse() -> None:
        try:
            client = _app(url).test_client()
            _login(client)
            client.get("/")
            barrier.wait()
            while working[0] > 0:
                t0 = time.perf_counter()
                response = client.get("/")
                list_times.append((time.perf_counter() - t0) * 1000)
                assert response.status_code == 200, response.status_code
        except BaseException as exc:  # reported by the caller
            failures.append(exc)

    with app.app_context():
        db.engine.dispose()
    threads = [threading.Thread(target=work, args=(u,)) for u in reviewers]
    if runs_list_alongside:
        threads.append(threading.Thread(target=browse))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]
    return times, list_times


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


@contextmanager
def _database(kind: str, pg_url: str | None):
    if kind == "sqlite":
        work = Path(tempfile.mkdtemp(prefix="reviewapp-bench-queues-"))
        yield f"sqlite:///{work / 'queues.sqlite'}"
        return
    from tests.databases import private_postgres

    with private_postgres(pg_url, "reviewapp_bench_queues") as url:
        yield url


def bench(kind: str, url: str, count: int, rounds: int) -> None:
    t0 = time.perf_counter()
    queue_id, reviewers = build(url, count)
    print(f"[{kind}] built {count:,} runs, {count:,} ratings and a queue of {count:,} items "
          f"in {time.perf_counter() - t0:.0f} s")
    client = _app(url).test_client()
    _login(client)
    agreement, runs_list = paired_p50_ms((client, "/dashboard/agreement"), (client, "/"), 7)
    print(f"[{kind}] agreement page at {count:,} ratings: p50 {agreement:.0f} ms; runs list "
          f"{runs_list:.0f} ms; ratio {agreement / runs_list:.2f} (target <= 2)")
    # One reviewer alone, then the runs list alone, alternating (a busy machine slows both).
    alone, listed = [], []
    for _ in range(rounds * 2):
        alone.extend(next_item_latency(url, queue_id, reviewers[:1], 1)[0])
        t1 = time.perf_counter()
        client.get("/")
        listed.append((time.perf_counter() - t1) * 1000)
    print(f"[{kind}] next item, one reviewer alone, queue of {count:,}: p50 "
          f"{statistics.median(alone):.1f} ms, p99 {_p(alone, 0.99):.1f} ms; runs list alone p50 "
          f"{statistics.median(listed):.1f} ms; ratio {statistics.median(alone) / statistics.median(listed):.2f}")
    # 20 reviewers at once, the runs list fetched alongside under the same load.
    times, list_times = next_item_latency(url, queue_id, reviewers, rounds, True)
    p50, lp50 = statistics.median(times), statistics.median(list_times)
    print(f"[{kind}] next item, {len(reviewers)} concurrent reviewers (each rating between "
          f"items), queue of {count:,}: p50 {p50:.1f} ms, p99 {_p(times, 0.99):.1f} ms over "
          f"{len(times)} calls; runs list under the same load p50 {lp50:.1f} ms, p99 "
          f"{_p(list_times, 0.99):.1f} ms over {len(list_times)}; ratio p50 {p50 / lp50:.2f} "
          f"(target <= 2)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sqlite-only", action="store_true")
    parser.add_argument("--database-url", default=os.environ.get("REVIEWAPP_BENCH_PG_URL"))
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    count = 10_000 if args.quick else 100_000
    kinds = ["sqlite"] + ([] if args.sqlite_only or not args.database_url else ["postgresql"])
    for kind in kinds:
        with _database(kind, args.database_url) as url:
            bench(kind, url, count, args.rounds)


if __name__ == "__main__":
    main()
