"""Benchmark of the dashboard from roll-ups (issue 18). Prints figures; asserts nothing.

For each database (SQLite file; PostgreSQL in a scratch database it drops) and each size
(``--small`` and ``--large`` runs), builds the issue's shape in bulk: two workspaces,
runs spread over the same 120 days whatever the size (10 % without ``started_at``),
5 tool calls per run over 20 tools (1 in 12 failed), 3 % of runs with a verdict, a
rating on the first call of 1 run in 150, a triage item for every not_useful run.
Then ``flask dashboard rebuild``'s service fills the roll-ups (the migration's backfill
does the same work; its time is printed) and the dashboard page is requested through
the WSGI app as an admin of both workspaces: all time and the last 7 days, p50 / p95
over ``--repeat`` requests, small and large measured in alternation so a busy machine
slows both alike. The ratio large / small is the figure of merit (target <= 1.3).

Run: ``.venv/bin/python benchmarks/dashboard.py`` (SQLite and, when reachable,
PostgreSQL at ``--pg``; about ten minutes at 1,000,000 runs on a quiet 2-core machine).
``--large 200000`` for a quicker look.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PASSWORD = "bench-password-123"
SPAN_DAYS = 120
CALLS_PER_RUN = 5
TOOLS = [f"tool_{i:02d}" for i in range(20)]
BATCH = 20_000


def make_app(url: str) -> Any:
    from reviewapp import create_app

    return create_app({"SECRET_KEY": "bench", "DATABASE_URL": url, "WTF_CSRF_ENABLED": False,
                       "RATELIMIT_ENABLED": False})


def build(url: str, count: int, now: datetime) -> float:
    """The schema, two workspaces, an admin of both, ``count`` runs and their parts in
    bulk, then the roll-ups; returns the rebuild's seconds."""
    from reviewapp.actors import Actor, Role
    from reviewapp.extensions import db
    from reviewapp.models import DiagnosisSession
    from reviewapp.services import admin, dashboard

    app = make_app(url)
    with app.app_context():
        db.create_all()
        system = Actor.system_actor()
        spaces = [admin.create_workspace(db.session, system, f"bench-{i}", f"Bench {i}")
                  for i in range(2)]
        user = admin.create_user(db.session, system, "bench", PASSWORD, spaces[0].id,
                                 Role.ADMIN.value)
        admin.add_member(db.session, system, spaces[1].id, "bench", Role.ADMIN.value)
        sessions = []
        for ws in spaces:
            ds = DiagnosisSession(session_id="bench", workspace_id=ws.id, kind="chat")
            db.session.add(ds)
            db.session.flush()
            sessions.append(ds.id)
        db.session.commit()
        ws_ids, user_id = [ws.id for ws in spaces], user.id
        dialect = db.engine.dialect.name
        db.session.remove()
        db.engine.dispose()
    with bulk_writer(url, dialect) as write:
        start = now - timedelta(days=SPAN_DAYS)
        step = timedelta(days=SPAN_DAYS) / count
        verdicts = ("PASS", "LOW_CONFID", "REJECT", None)
        pk = 0
        for first in range(0, count, BATCH):
            run_rows, call_rows, rating_rows, triage_rows = [], [], [], []
            for i in range(first, min(count, first + BATCH)):
                pk += 1
                side = i % 2
                at = start + step * i
                feedback = ("useful" if i % 3 else "not_useful") if i % 33 == 0 else None
                run_rows.append({
                    "id": pk, "run_id": f"run-{i}", "workspace_id": ws_ids[side],
                    "diagnosis_session_id": sessions[side], "kind": "aiops" if i % 5 == 1 else "chat",
                    "query": f"Question {i}?", "answer": f"Answer {i}.",
                    "status": ("SUCCESS", "SUCCESS", "FAILED")[i % 3],
                    "evidence_score": (i * 37) % 101 if i % 10 else None,
                    "verifier_verdict": verdicts[i % 4], "feedback": feedback,
                    "tool_call_count": CALLS_PER_RUN, "failed_tool_call_count": 0,
                    "started_at": at if i % 10 else None, "created_at": at, "updated_at": at,
                })
                aiops = run_rows[-1]["kind"] == "aiops"
                for j in range(CALLS_PER_RUN):
                    call_rows.append({
                        "workspace_id": ws_ids[side], "id": f"c{i}-{j}", "run_pk": pk,
                        "chat_session_id": None if aiops else sessions[side],
                        "diagnostic_task_id": sessions[side] if aiops else None,
                        "ordinal": j + 1, "tool_name": TOOLS[(i + j * 7) % len(TOOLS)],
                        "status": "failed" if (i + j) % 12 == 0 else "completed",
                        "compensated": False, "created_at": at, "updated_at": at,
                    })
                if i % 150 == 7:
                    rating_rows.append({
                        "author_id": user_id, "workspace_id": ws_ids[side], "run_pk": pk,
                        "target_type": "tool_call", "target_id": pk, "subject_key": f"c{i}-0",
                        "rating": "negative" if i % 300 == 7 else "positive",
                        "created_at": at, "updated_at": at})
                if feedback == "not_useful":
                    triage_rows.append({"workspace_id": ws_ids[side], "run_pk": pk,
                                        "state": ("new", "triaged", "resolved")[i % 3],
                                        "opened_reason": "not_useful", "version": 1,
                                        "created_at": at, "updated_at": at})
            for table, rows in (("diagnosis_run", run_rows), ("tool_call_audit", call_rows),
                                ("user_feedback", rating_rows), ("triage_item", triage_rows)):
                write(table, rows)
    with app.app_context():
        if dialect == "postgresql":
            db.session.execute(db.text("SELECT setval('diagnosis_run_id_seq', :n)"), {"n": pk})
            db.session.commit()
            with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
                c.exec_driver_sql("VACUUM ANALYZE")
        else:
            db.session.execute(db.text("ANALYZE"))
            db.session.commit()
        t0 = time.perf_counter()
        dashboard.rebuild(db.session, system)
        seconds = time.perf_counter() - t0
        db.session.remove()
        db.engine.dispose()
    return seconds


@contextmanager
def bulk_writer(url: str, dialect: str) -> Iterator[Callable[[str, list[dict[str, Any]]], None]]:
    """``write(table, rows)`` through the driver itself (the ORM would take half an hour
    for six million rows): SQLite ``executemany``, PostgreSQL ``COPY``."""
    if dialect == "postgresql":
        import psycopg
        from sqlalchemy.engine import make_url

        conn = psycopg.connect(make_url(url).set(drivername="postgresql").render_as_string(
            hide_password=False))

        def write(table: str, rows: list[dict[str, Any]]) -> None:
            if not rows:
                return
            columns = list(rows[0])
            with conn.cursor() as cur, cur.copy(
                    f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row([row[c] for c in columns])
            conn.commit()
    else:
        import sqlite3

        conn = sqlite3.connect(url.removeprefix("sqlite:///"))

        def value(v: Any) -> Any:
            # The ORM's SQLite form of a UTC timestamp (see models.base.UTCDateTime).
            return v.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f") \
                if isinstance(v, datetime) else v

        def write(table: str, rows: list[dict[str, Any]]) -> None:
            if not rows:
                return
            columns = list(rows[0])
            conn.executemany(
                f"INSERT INTO {table} ({', '.join(columns)}) "
                f"VALUES ({', '.join('?' for _ in columns)})",
                [[value(row[c]) for c in columns] for row in rows])
            conn.commit()
    try:
        yield write
    finally:
        conn.close()


def client_for(url: str) -> Any:
    app = make_app(url)
    client = app.test_client()
    response = client.post("/login", data={"username": "bench", "password": PASSWORD})
    assert response.status_code == 303, response.status_code
    return client


def measure(clients: list[Any], path: str, repeat: int) -> list[tuple[float, float]]:
    """(p50, p95) in ms of ``path`` for each client, requested in alternation."""
    for client in clients:
        for _ in range(3):
            assert client.get(path).status_code == 200
    times: list[list[float]] = [[] for _ in clients]
    for _ in range(repeat):
        for side, client in enumerate(clients):
            t0 = time.perf_counter()
            response = client.get(path)
            times[side].append((time.perf_counter() - t0) * 1000)
            assert response.status_code == 200, (path, response.status_code)
    return [(statistics.median(t), statistics.quantiles(t, n=20)[-1]) for t in times]


def scratch_pg(base: str, name: str) -> str:
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    engine = create_engine(make_url(base).set(database="postgres"),
                           isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}"')
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    engine.dispose()
    return make_url(base).set(database=name).render_as_string(hide_password=False)


def drop_pg(base: str, name: str) -> None:
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    engine = create_engine(make_url(base).set(database="postgres"),
                           isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    engine.dispose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=25)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/postgres",
                        help="PostgreSQL server ('' to skip)")
    parser.add_argument("--only", choices=("sqlite", "postgresql"), default=None)
    args = parser.parse_args()
    now = datetime.now(UTC)
    week = (now - timedelta(days=6)).date().isoformat()
    paths = {"all time": "/dashboard/", "last 7 days": f"/dashboard/?date_from={week}"}
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        targets: list[tuple[str, list[str], list[str]]] = []
        if args.only in (None, "sqlite"):
            targets.append(("SQLite", [f"sqlite:///{tmp}/dash-{n}.sqlite"
                                       for n in (args.small, args.large)], []))
        if args.pg and args.only in (None, "postgresql"):
            names = [f"bench_dashboard_{n}" for n in (args.small, args.large)]
            try:
                urls = [scratch_pg(args.pg, name) for name in names]
                targets.append(("PostgreSQL", urls, names))
            except Exception as exc:  # noqa: BLE001 - no server: SQLite only
                print(f"PostgreSQL skipped: {exc.__class__.__name__}: {exc}")
        try:
            for label, urls, _ in targets:
                for url, n in zip(urls, (args.small, args.large), strict=True):
                    t0 = time.perf_counter()
                    seconds = build(url, n, now)
                    print(f"{label}: {n:,} runs built in {time.perf_counter() - t0:.0f} s, "
                          f"roll-ups rebuilt in {seconds:.1f} s", flush=True)
                clients = [client_for(url) for url in urls]
                for what, path in paths.items():
                    (s50, s95), (l50, l95) = measure(clients, path, args.repeat)
                    lines.append(f"| {label} | dashboard, {what} | {s50:.1f} / {s95:.1f} | "
                                 f"{l50:.1f} / {l95:.1f} | {l50 / s50:.2f} |")
                    print(lines[-1], flush=True)  # a later failure keeps what was measured
        finally:
            for _, _, names in targets:
                for name in names:
                    drop_pg(args.pg, name)
    print(f"\n| database | request | {args.small:,} runs p50 / p95 ms | "
          f"{args.large:,} runs p50 / p95 ms | ratio p50 |")
    print("|---|---|---|---|---|")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
