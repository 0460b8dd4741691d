"""Benchmark of team review (issue 16). Prints figures; asserts nothing.

1. "Next item" latency, p50 / p99, for 20 reviewers asking concurrently (one thread and
   one connection each, as 20 requests would) on a queue of 100,000 items with 2
   reviewers per run; after each answer the reviewer rates the item's run, so the queue
   moves as it would. The first 20,000 runs already carry 5 ratings (complete items the
   queue has to skip).
2. The agreement page at 100,000 answer ratings, p50 through the WSGI app, beside the
   plain runs-list page of the same database in the same run (target: within 2x).

SQLite (the embedded default). Run: ``.venv/bin/python benchmarks/queues.py``;
``--quick`` uses 10,000 runs and ratings instead of 100,000.
"""

from __future__ import annotations

import random
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.pages import PASSWORD, _app, _login, build_list_db, paired_p50_ms

REVIEWERS = 20
RATERS_PER_RATED_RUN = 5


def build(path: Path, count: int) -> tuple[int, list[int]]:
    """``count`` runs (benchmarks.pages), an answer message each, a lead ``bench``, 20
    reviewers, ``count`` answer ratings (5 per run on the first ``count / 5`` runs, the
    reviewers agreeing 80 % of the time) and a queue of every run (2 reviewers per run).
    Returns (queue id, reviewer user ids)."""
    from reviewapp.actors import Actor, Role
    from reviewapp.extensions import db
    from reviewapp.models import ReviewQueue
    from reviewapp.services import admin

    build_list_db(path, count)
    app = _app(path)
    with app.app_context():
        system = Actor.system_actor()
        ws_id = db.session.execute(db.text("SELECT id FROM workspace")).scalar()
        db.session.execute(db.text("UPDATE membership SET role = 'lead'"))  # bench leads
        reviewers = [admin.create_user(db.session, system, f"reviewer{i}", PASSWORD, ws_id,
                                       Role.REVIEWER.value).id for i in range(REVIEWERS)]
        queue = ReviewQueue(workspace_id=ws_id, name="Everything", rule={}, sample_percent=100,
                            reviewers_per_run=2, blind=False, reservation_minutes=10)
        db.session.add(queue)
        db.session.commit()
        queue_id = queue.id
        db.engine.dispose()
    conn = sqlite3.connect(path)
    run_pks = [pk for (pk,) in conn.execute("SELECT id FROM diagnosis_run ORDER BY id")]
    now = "2026-11-30 12:00:00.000000"
    conn.executemany(
        "INSERT INTO message (run_pk, ordinal, role, content, metadata, created_at, updated_at) "
        "VALUES (?, 0, 'assistant', ?, '{}', ?, ?)",
        [(pk, f"Answer {pk}.", now, now) for pk in run_pks])
    answer = dict(conn.execute("SELECT run_pk, id FROM message"))
    rng = random.Random(16)
    rows = []
    for index, pk in enumerate(run_pks[: count // RATERS_PER_RATED_RUN]):
        truth = rng.random() < 0.6
        for k in range(RATERS_PER_RATED_RUN):
            agree = rng.random() < 0.8
            rating = "positive" if truth == agree else "negative"
            rows.append((reviewers[(index + k) % REVIEWERS], ws_id, pk, answer[pk], rating, now, now))
    conn.executemany(
        "INSERT INTO user_feedback (author_id, workspace_id, run_pk, target_type, target_id, "
        "subject_key, rating, created_at, updated_at) VALUES (?, ?, ?, 'chat_message', ?, '', ?, ?, ?)",
        rows)
    conn.executemany(
        "INSERT INTO review_queue_item (queue_id, run_pk, source, created_at, updated_at) "
        "VALUES (?, ?, 'rule', ?, ?)", [(queue_id, pk, now, now) for pk in run_pks])
    conn.commit()
    conn.execute("ANALYZE")
    conn.close()
    return queue_id, reviewers


def next_item_latency(path: Path, queue_id: int, reviewers: list[int], rounds: int
                      ) -> list[float]:
    """Milliseconds of each ``next_item`` call, 20 reviewers in parallel, ``rounds`` each."""
    from sqlalchemy.orm import Session

    from reviewapp.actors import Actor
    from reviewapp.db_setup import write_intent
    from reviewapp.extensions import db
    from reviewapp.models import Feedback, Message
    from reviewapp.services import review_queues

    app = _app(path)
    times: list[float] = []
    lock = threading.Lock()
    failures: list[BaseException] = []
    barrier = threading.Barrier(len(reviewers))

    def work(user_id: int) -> None:
        actor = Actor.for_user(user_id, f"u{user_id}")
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
                    message = session.scalar(db.select(Message.id).where(
                        Message.run_pk == item.run_pk))
                    session.add(Feedback(author_id=user_id, workspace_id=1, run_pk=item.run_pk,
                                         target_type="chat_message", target_id=message,
                                         subject_key="", rating="positive"))
                    session.commit()
        except BaseException as exc:  # reported by the caller
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(u,)) for u in reviewers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]
    return times


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    quick = "--quick" in sys.argv
    count = 10_000 if quick else 100_000
    work = Path(tempfile.mkdtemp(prefix="reviewapp-bench-queues-"))
    path = work / "queues.sqlite"
    t0 = time.perf_counter()
    queue_id, reviewers = build(path, count)
    print(f"work folder: {work}; built {count:,} runs, {count:,} ratings and a queue of "
          f"{count:,} items in {time.perf_counter() - t0:.0f} s")

    client = _app(path).test_client()
    _login(client)
    agreement, runs_list = paired_p50_ms((client, "/dashboard/agreement"), (client, "/"), 7)
    print(f"agreement page at {count:,} ratings: p50 {agreement:.0f} ms; runs list {runs_list:.0f} ms; "
          f"ratio {agreement / runs_list:.1f} (target <= 2)")

    times = next_item_latency(path, queue_id, reviewers, 10)
    _, runs_list = paired_p50_ms((client, "/"), (client, "/"), 7)
    print(f"next item, {len(reviewers)} concurrent reviewers, queue of {count:,}: "
          f"p50 {statistics.median(times):.0f} ms, p99 {_p(times, 0.99):.0f} ms over {len(times)} calls; "
          f"runs list p50 {runs_list:.0f} ms; ratio p50 {statistics.median(times) / runs_list:.1f} "
          f"(target <= 2)")


if __name__ == "__main__":
    main()
