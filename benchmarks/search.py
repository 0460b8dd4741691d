"""Benchmark of the runs list's text search (issue 18). Prints figures; asserts nothing.

Builds a small and a large database (default 10,000 and 200,000 runs; ``--sizes``) in
two workspaces, 5 tool calls per run, with bulk inserts (the index rows are made with the
same folding as the services, ``domain.search_text``), then times ``runs.list_runs`` with
a search, p50 over repeats, for an admin of both workspaces and a reviewer of one:

* a word in no run (the issue's case), a ticket number in one run, a CJK phrase in 2 %
  of the runs, and a phrase in every run (ranked or newest first, see the note printed);
* the text condition alone (``count`` of the matching runs, as the list's capped count
  reads them).

SQLite always; PostgreSQL too when ``--pg URL`` is given (a scratch database is made and
dropped). Run: ``.venv/bin/python benchmarks/search.py --pg postgresql://postgres@127.0.0.1:5432/postgres``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

WORDS = ("disk", "latency", "pod", "restart", "memory", "queue", "backlog", "replica", "timeout",
         "certificate", "rollout", "cache", "eviction", "kernel", "socket", "throttle", "shard")
TERMS = {
    "no run": "quokka",
    "one run": "ticket t1234 ",
    "2 % (CJK)": "订单服务超时",
    "every run": "slow in",
}
REPEAT = 7


def _text(i: int, n: int) -> str:
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n))


def build(url: str, count: int) -> None:
    """``count`` runs (half per workspace) with 5 tool calls each, their index rows, an
    admin of both workspaces (``both``) and a reviewer of the first (``one``)."""
    from sqlalchemy import insert, text

    from reviewapp import create_app, search_index
    from reviewapp.actors import Actor, Role
    from reviewapp.domain.search_text import call_text, fold, other_text
    from reviewapp.extensions import db
    from reviewapp.models import DiagnosisSession, Run, ToolCall
    from reviewapp.services import admin

    app = create_app({"SECRET_KEY": "b", "DATABASE_URL": url})
    with app.app_context():
        db.create_all()
        system = Actor.system_actor()
        spaces = [admin.create_workspace(db.session, system, f"w{k}", f"W{k}").id for k in (1, 2)]
        admin.create_user(db.session, system, "both", "bench-password-1", spaces[0], Role.ADMIN.value)
        admin.create_user(db.session, system, "one", "bench-password-1", spaces[0], Role.REVIEWER.value)
        db.session.execute(text("INSERT INTO membership (user_id, workspace_id, role, created_at, updated_at) "
                                "SELECT id, :ws, 'admin', created_at, updated_at FROM user_account "
                                "WHERE username = 'both'"), {"ws": spaces[1]})
        db.session.commit()
        now = datetime(2026, 1, 1, tzinfo=UTC)
        sessions = {ws: db.session.execute(insert(DiagnosisSession).returning(DiagnosisSession.id), [
            {"session_id": "bench", "workspace_id": ws, "kind": "chat", "created_at": now,
             "updated_at": now}]).scalar_one() for ws in spaces}
        key = "rowid" if db.engine.dialect.name == "sqlite" else "run_pk"
        add_index = text(f"INSERT INTO {search_index.SEARCH_TABLE} ({key}, query, answer, other) "
                         "VALUES (:run_pk, :query, :answer, :other)")
        batch = 10_000
        for start in range(0, count, batch):
            runs, calls = [], []
            for i in range(start, min(count, start + batch)):
                ws = spaces[i % 2]
                query = f"Why is svc-{i % 97} slow in eu-{i % 5}? ticket T{i} " + _text(i, 6)
                if i % 50 == 0:
                    query += " 订单服务超时"
                runs.append({"id": i + 1, "run_id": f"run-{i}", "workspace_id": ws,
                             "diagnosis_session_id": sessions[ws], "kind": "chat", "query": query,
                             "answer": "Most likely: " + _text(i, 40), "status": "SUCCESS",
                             "tool_call_count": 5, "failed_tool_call_count": int(i % 20 == 0),
                             "created_at": now + timedelta(seconds=i), "updated_at": now})
                for c in range(5):
                    calls.append({"workspace_id": ws, "id": f"c-{i}-{c}", "run_pk": i + 1,
                                  "chat_session_id": sessions[ws], "ordinal": c, "tool_name": f"tool_{c}",
                                  "status": "failed" if c == 4 and i % 20 == 0 else "completed",
                                  "arguments": {"service": f"svc-{i % 97}", "window": "15m"},
                                  "result_summary": f"svc-{i % 97}: p99 {i % 900} ms " + _text(i + c, 8),
                                  "error_message": "Error: timeout" if c == 4 and i % 20 == 0 else None,
                                  "compensated": False, "created_at": now, "updated_at": now})
            db.session.execute(insert(Run), runs)
            db.session.execute(insert(ToolCall), calls)
            db.session.execute(add_index, [
                {"run_pk": r["id"], "query": fold(r["query"]), "answer": fold(r["answer"]),
                 "other": other_text(r["run_id"], "bench", ())} for r in runs])
            search_index.write_calls(db.session.connection(), [
                {"workspace_id": c["workspace_id"], "call_id": c["id"], "run_pk": c["run_pk"],
                 "text": call_text(c["tool_name"], c["arguments"], c["result_summary"], c["error_message"])}
                for c in calls])
            db.session.commit()
        if db.engine.dialect.name == "postgresql":
            db.session.execute(text("SELECT setval(pg_get_serial_sequence('diagnosis_run', 'id'), :n)"),
                               {"n": count + 1})
            db.session.commit()
            with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.execute(text("VACUUM ANALYZE"))
        else:
            db.session.execute(text("ANALYZE"))
            db.session.commit()
        db.engine.dispose()


def measure(url: str) -> dict[tuple[str, str], float]:
    """p50 ms per (user, term): the list page's service call, and the bare match count."""
    from sqlalchemy import func, select

    from reviewapp import create_app
    from reviewapp.actors import Actor
    from reviewapp.extensions import db
    from reviewapp.models import Run, User
    from reviewapp.services import runs
    from reviewapp.services.runs import RunFilters

    app = create_app({"SECRET_KEY": "b", "DATABASE_URL": url})
    out: dict[tuple[str, str], float] = {}
    notes: set[str] = set()
    with app.app_context():
        session = db.session
        for username in ("both", "one"):
            user = session.scalars(select(User).where(User.username == username)).one()
            actor = Actor.for_user(user.id, username)
            for label, term in TERMS.items():
                filters = RunFilters.from_params({"q": term})
                times = []
                for _ in range(REPEAT):
                    t0 = time.perf_counter()
                    page = runs.list_runs(session, actor, filters=filters)
                    times.append((time.perf_counter() - t0) * 1000)
                    session.rollback()
                if page.search_note:
                    notes.add(page.search_note)
                out[(f"list, {username}", label)] = statistics.median(times)
            if username == "both":
                for label, term in TERMS.items():
                    stmt = runs.filtered_runs(actor, RunFilters(q=term.strip()), None)
                    count_stmt = select(func.count()).select_from(stmt.with_only_columns(Run.id).subquery())
                    times = []
                    for _ in range(REPEAT):
                        t0 = time.perf_counter()
                        session.scalar(count_stmt)
                        times.append((time.perf_counter() - t0) * 1000)
                        session.rollback()
                    out[("exact count of matches", label)] = statistics.median(times)
        db.engine.dispose()
    for note in notes:
        print("  note:", note)
    return out


def _pg_scratch(server: str):
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"bench_search_{uuid.uuid4().hex[:8]}"
    admin_engine = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin_engine.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(server).set(database=name).render_as_string(hide_password=False)

    def drop() -> None:
        with admin_engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin_engine.dispose()
    return url, drop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,200000")
    parser.add_argument("--pg", default=None, help="a PostgreSQL server URL (scratch database)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[str, dict[int, dict[tuple[str, str], float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            path = Path(tmp) / f"search-{size}.sqlite"
            t0 = time.perf_counter()
            build(f"sqlite:///{path}", size)
            print(f"SQLite {size:,} runs built in {time.perf_counter() - t0:.0f} s", flush=True)
            results.setdefault("SQLite", {})[size] = measure(f"sqlite:///{path}")
            path.unlink()
    if args.pg:
        for size in sizes:
            url, drop = _pg_scratch(args.pg)
            try:
                t0 = time.perf_counter()
                build(url, size)
                print(f"PostgreSQL {size:,} runs built in {time.perf_counter() - t0:.0f} s", flush=True)
                results.setdefault("PostgreSQL", {})[size] = measure(url)
            finally:
                drop()
    small, large = sizes[0], sizes[-1]
    print(f"\np50 ms, {small:,} -> {large:,} runs (ratio)")
    for database, by_size in results.items():
        print(f"\n{database}")
        for key in by_size[small]:
            a, b = by_size[small][key], by_size[large][key]
            print(f"  {key[0]:<24} {key[1]:<12} {a:8.1f} -> {b:8.1f}  ({b / a:4.2f}x)")
    print(json.dumps({db: {str(s): {f"{k[0]} / {k[1]}": round(v, 2) for k, v in r.items()}
                           for s, r in by_size.items()} for db, by_size in results.items()}))


if __name__ == "__main__":
    main()
