"""Faults: a process killed with SIGKILL mid-write, a database that cannot be written, a
full disk. Afterwards the database is consistent, nothing unsaved was acknowledged, and
re-sending / re-importing completes without duplicates (SPEC 6.1 "never a fake success",
SPEC 11). SQLite in WAL mode, or a private PostgreSQL database when
``REVIEWAPP_TEST_DB_URL`` is set; the disk-full test always uses SQLite.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests
from sqlalchemy import create_engine, event, func, select, text

from reviewapp import create_app
from reviewapp.actors import Actor
from reviewapp.extensions import db
from reviewapp.models import DiagnosisSession, Message, Run, ToolCall
from reviewapp.services import admin, runs

from ..shared_data import tau_bench_file
from .servers import (
    BIN,
    PG_URL,
    REPO,
    SECRET,
    AppServer,
    app_env,
    check_consistency,
    engine_for,
    free_port,
    private_database,
    truncate_all,
)

T0 = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)
TAU_RUNS, TAU_TOOL_CALLS = 200, 1164


def _seed(url: str, slug: str, running_runs: int = 0) -> tuple[int, str, list[str]]:
    """A workspace with an ingest token and ``running_runs`` RUNNING runs; returns
    (workspace id, token secret, run ids)."""
    app = create_app({"TESTING": True, "SECRET_KEY": SECRET, "DATABASE_URL": url})
    with app.app_context():
        system = Actor.system_actor()
        ws = admin.create_workspace(db.session, system, slug, slug)
        token = admin.create_token(db.session, system, ws.id, "faults").secret
        run_ids = [f"{slug}-run-{i}" for i in range(running_runs)]
        for run_id in run_ids:
            runs.upsert_run(db.session, system, ws.id, run_id,
                            {"query": "q", "status": "RUNNING", "kind": "chat"})
        ws_id = ws.id
        db.session.remove()
        db.engine.dispose()
    return ws_id, token, run_ids


@pytest.fixture(scope="module")
def pg_database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str | None]:
    """PostgreSQL leg: one private database for the module (emptied before each test)."""
    if not PG_URL:
        yield None
        return
    with private_database(tmp_path_factory.mktemp("faults")) as url:
        yield url


@pytest.fixture
def database(pg_database: str | None, tmp_path: Path) -> Iterator[str]:
    """A clean database for one test: the module's PostgreSQL database emptied, or a
    fresh SQLite file (WAL)."""
    if pg_database is not None:
        truncate_all(pg_database)
        yield pg_database
        return
    with private_database(tmp_path) as url:
        yield url


def _scalar(url: str, sql: str, **params: Any) -> Any:
    engine = engine_for(url)
    try:
        with engine.connect() as conn:
            return conn.execute(text(sql), params).scalar()
    finally:
        engine.dispose()


# --------------------------------------------------------------------------- (a) kill -9


def _batch(run_id: str, b: int, calls: int = 500) -> list[dict[str, Any]]:
    events = []
    for i in range(calls):
        at = T0 + timedelta(seconds=i)
        events.append({"id": f"b{b}-c{i}", "run_id": run_id, "event": "started",
                       "tool_name": "search_logs", "timestamp": at.isoformat(),
                       "arguments": {"query": f"error {i} " + "x" * 200}})
        events.append({"id": f"b{b}-c{i}", "run_id": run_id, "event": "completed",
                       "timestamp": (at + timedelta(milliseconds=250)).isoformat(),
                       "output": {"lines": i}})
    return events


def test_kill9_during_batch_ingest_then_resend(database: str, tmp_path: Path) -> None:
    """Batches of 1,000 events (500 calls each) are sent one after another; the app
    process is killed with SIGKILL while a batch is in flight. Every batch is then either
    complete or absent (never a part), every acknowledged one is complete, the run
    counters match the rows; after a restart, re-sending every batch succeeds, changes
    nothing already stored and leaves exactly one row per call."""
    ws_id, token, run_ids = _seed(database, "kill-ingest", running_runs=3)
    n_batches = 8
    batches = [_batch(run_ids[b % len(run_ids)], b) for b in range(n_batches)]
    headers = {"Authorization": f"Bearer {token}"}
    server = AppServer(database, tmp_path, threads=2)
    server.wait_up()
    acked: list[int] = []
    in_flight: dict[str, float | int] = {}
    stop = threading.Event()

    def sender() -> None:
        with requests.Session() as s:
            for b, events in enumerate(batches):
                if stop.is_set():
                    return
                in_flight.update(batch=b, since=time.monotonic())
                try:
                    r = s.post(f"{server.base}/api/ingest/tool-events", json=events,
                               headers=headers, timeout=60)
                except requests.RequestException:
                    return  # the process died under this request
                assert r.status_code == 200, r.text[:300]
                acked.append(b)

    thread = threading.Thread(target=sender)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            flying = in_flight.get("batch")
            if len(acked) >= 2 and flying is not None and flying not in acked \
                    and time.monotonic() - in_flight["since"] > 0.05:
                break
            time.sleep(0.01)
        killed_during = in_flight.get("batch")
        server.kill9()
        stop.set()
    finally:
        thread.join(timeout=60)
        server.stop()
    assert 2 <= len(acked) < n_batches, acked
    assert killed_during not in acked

    check_consistency(database)
    for b in range(n_batches):
        stored = _scalar(database, "SELECT count(*) FROM tool_call_audit WHERE id LIKE :p "
                         "AND status = 'completed'", p=f"b{b}-c%")
        total = _scalar(database, "SELECT count(*) FROM tool_call_audit WHERE id LIKE :p",
                        p=f"b{b}-c%")
        assert stored == total
        assert total == 500 if b in acked else total in (0, 500), (b, total)
    _assert_counters(database, ws_id)

    server = AppServer(database, tmp_path, threads=2)
    server.wait_up()
    try:
        with requests.Session() as s:
            for b, events in enumerate(batches):
                r = s.post(f"{server.base}/api/ingest/tool-events", json=events,
                           headers=headers, timeout=60)
                assert r.status_code == 200, r.text[:300]
                if b in acked:
                    assert r.json()["counts"]["unchanged"] == 1000
                assert r.json()["counts"]["rejected"] == 0
    finally:
        server.stop()
    check_consistency(database)
    assert _scalar(database, "SELECT count(*) FROM tool_call_audit") == n_batches * 500
    assert _scalar(database, "SELECT count(DISTINCT id) FROM tool_call_audit") == n_batches * 500
    _assert_counters(database, ws_id)


def _assert_counters(url: str, ws_id: int) -> None:
    engine = engine_for(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT r.tool_call_count, r.failed_tool_call_count, "
                "(SELECT count(*) FROM tool_call_audit c WHERE c.run_pk = r.id) "
                "FROM diagnosis_run r WHERE r.workspace_id = :ws"), {"ws": ws_id}).all()
    finally:
        engine.dispose()
    assert rows and all(count == actual and failed == 0 for count, failed, actual in rows), rows


_TABLE_COUNTS = {
    "sessions": "SELECT count(*) FROM diagnosis_session WHERE workspace_id = :ws",
    "runs": "SELECT count(*) FROM diagnosis_run WHERE workspace_id = :ws",
    "messages": "SELECT count(*) FROM message m JOIN diagnosis_run r ON r.id = m.run_pk "
                "WHERE r.workspace_id = :ws",
    "steps": "SELECT count(*) FROM diagnostic_step s JOIN diagnosis_run r ON r.id = s.run_pk "
             "WHERE r.workspace_id = :ws",
    "tool_calls": "SELECT count(*) FROM tool_call_audit WHERE workspace_id = :ws",
    "failed_tool_calls": "SELECT count(*) FROM tool_call_audit WHERE workspace_id = :ws "
                         "AND status = 'failed'",
    "scored_runs": "SELECT count(*) FROM diagnosis_run WHERE workspace_id = :ws "
                   "AND evidence_score IS NOT NULL",
}


def _counts(url: str, ws_id: int) -> dict[str, int]:
    return {name: _scalar(url, sql, ws=ws_id) for name, sql in _TABLE_COUNTS.items()}


def _import(url: str, slug: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "flask"), "runs", "import", "--workspace", slug, str(tau_bench_file())],
        cwd=REPO, env=app_env(url), capture_output=True, text=True, timeout=300)


def test_kill9_during_import_then_reimport(database: str) -> None:
    """``flask runs import`` of the tau-bench file is killed with SIGKILL part-way; the
    database is consistent, and importing again completes with exactly the rows of a
    clean import into another workspace (200 runs, 1,164 tool calls), no duplicates."""
    data = tau_bench_file()
    ws_id, _, _ = _seed(database, "killed")
    clean_ws, _, _ = _seed(database, "clean")
    proc = subprocess.Popen(
        [str(BIN / "flask"), "runs", "import", "--workspace", "killed", str(data)],
        cwd=REPO, env=app_env(database), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if _scalar(database, _TABLE_COUNTS["runs"], ws=ws_id) >= 20:
                break
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    partial = _counts(database, ws_id)
    assert 20 <= partial["runs"] < TAU_RUNS, partial

    check_consistency(database)
    again = _import(database, "killed")
    assert again.returncode == 0, again.stderr[-2000:]
    summary = re.search(r"runs: (\d+) created, (\d+) updated, (\d+) unchanged, (\d+) failed; "
                        r"tool calls: (\d+)", again.stdout)
    assert summary, again.stdout
    created, updated, unchanged, failed, tool_calls = map(int, summary.groups())
    assert created + updated + unchanged == TAU_RUNS and failed == 0
    assert created == TAU_RUNS - partial["runs"]
    assert tool_calls == TAU_TOOL_CALLS

    clean = _import(database, "clean")
    assert clean.returncode == 0, clean.stderr[-2000:]
    check_consistency(database)
    after = _counts(database, ws_id)
    assert after == _counts(database, clean_ws)
    assert (after["runs"], after["tool_calls"]) == (TAU_RUNS, TAU_TOOL_CALLS)
    assert after["sessions"] == TAU_RUNS  # one task per run in this data set


# --------------------------------------------------------------------------- (b) down


def _hold_write_lock(url: str) -> Any:
    """Take the database's write lock from outside the app and keep it: SQLite ``BEGIN
    IMMEDIATE`` (WAL readers still read), PostgreSQL ``LOCK TABLE diagnosis_run IN
    EXCLUSIVE MODE`` (plain reads go on; every write that touches a run waits)."""
    if PG_URL:
        engine = create_engine(url)
        conn = engine.connect()
        conn.execute(text("LOCK TABLE diagnosis_run IN EXCLUSIVE MODE"))

        def release() -> None:
            conn.rollback()
            conn.close()
            engine.dispose()
        return release
    holder = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None,
                             check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")

    def release() -> None:
        holder.execute("ROLLBACK")
        holder.close()
    return release


def _reviewer_and_answer(url: str, ws_id: int, prefix: str) -> int:
    """A reviewer ``<prefix>-reviewer`` and a finished chat run with one answer; returns
    the answer message's id."""
    app = create_app({"TESTING": True, "SECRET_KEY": SECRET, "DATABASE_URL": url})
    with app.app_context():
        system = Actor.system_actor()
        admin.create_user(db.session, system, f"{prefix}-reviewer", "fault-password-1", ws_id,
                          "reviewer")
        run = runs.upsert_run(db.session, system, ws_id, f"{prefix}-rated", {
            "query": "q", "status": "SUCCESS",
            "messages": [{"id": "a1", "role": "assistant", "content": "an answer"}]}).run
        message_id = run.messages[0].id
        db.session.remove()
        db.engine.dispose()
    return message_id


def _logged_in(server: AppServer, prefix: str) -> requests.Session:
    reviewer = requests.Session()
    login = reviewer.post(f"{server.base}/login", allow_redirects=False, timeout=60,
                          data={"username": f"{prefix}-reviewer", "password": "fault-password-1"})
    assert login.status_code == 303
    return reviewer


def _unavailable(response: requests.Response) -> None:
    assert response.status_code == 503, (response.status_code, response.text[:300])
    assert response.json()["error"]["code"] == "SYSTEM_UNAVAILABLE"
    assert "nothing was saved" in response.json()["error"]["message"]


def test_locked_database_answers_503_and_acknowledges_nothing(database: str,
                                                               tmp_path: Path) -> None:
    """While another process holds the write lock longer than the app waits (SQLite
    busy timeout / PostgreSQL lock_timeout: 300 ms here), a tool event, a run upsert and a
    verdict each answer 503 SYSTEM_UNAVAILABLE; afterwards none of them is in the
    database, and the same requests succeed once the lock is gone."""
    ws_id, token, run_ids = _seed(database, "locked", running_runs=1)
    env = app_env(database, REVIEWAPP_SQLITE_BUSY_TIMEOUT_MS="300",
                  REVIEWAPP_SQLALCHEMY_ENGINE_OPTIONS=json.dumps(
                      {"connect_args": {"options": "-c lock_timeout=300"}} if PG_URL else {}))
    server = AppServer(database, tmp_path, threads=2, env=env)
    server.wait_up()
    headers = {"Authorization": f"Bearer {token}"}
    event_body = {"id": "locked-call", "run_id": run_ids[0], "event": "started",
                  "tool_name": "search_logs", "timestamp": T0.isoformat()}
    doc = {"session_id": "locked-session", "query": "q", "status": "SUCCESS",
           "messages": [{"id": "a1", "role": "assistant", "content": "a"}]}
    verdict = {"runId": run_ids[0], "sessionId": run_ids[0], "feedback": "not_useful"}

    message_id = _reviewer_and_answer(database, ws_id, "locked")
    reviewer = _logged_in(server, "locked")
    thumbs = {"target_type": "chat_message", "target_id": message_id, "rating": "positive",
              "comment": "saved?"}

    def send() -> list[requests.Response]:
        with requests.Session() as s:
            s.headers.update(headers)
            return [s.post(f"{server.base}/api/ingest/tool-events", json=event_body, timeout=60),
                    s.put(f"{server.base}/api/ingest/runs/locked-new-run", json=doc, timeout=60),
                    s.post(f"{server.base}/api/feedback", json=verdict, timeout=60)]

    try:
        release = _hold_write_lock(database)
        try:
            for response in send():
                _unavailable(response)
            page = reviewer.post(f"{server.base}/feedback", data=thumbs, timeout=60,
                                 allow_redirects=False)
            assert page.status_code == 503, server.log()[-6000:]
            assert "nothing was saved" in page.text
        finally:
            release()
        assert _scalar(database, "SELECT count(*) FROM user_feedback") == 0
        assert _scalar(database, "SELECT count(*) FROM feedback_event") == 0
        assert _scalar(database, "SELECT count(*) FROM tool_call_audit") == 0
        assert _scalar(database, "SELECT count(*) FROM diagnosis_run WHERE run_id = "
                       "'locked-new-run'") == 0
        assert _scalar(database, "SELECT feedback FROM diagnosis_run WHERE run_id = :r",
                       r=run_ids[0]) is None
        assert _scalar(database, "SELECT count(*) FROM triage_item") == 0
        assert [r.status_code for r in send()] == [200, 201, 200]
        assert _scalar(database, "SELECT count(*) FROM tool_call_audit") == 1
        assert reviewer.post(f"{server.base}/feedback", data=thumbs, timeout=60,
                             allow_redirects=False).status_code == 303
        assert _scalar(database, "SELECT count(*) FROM user_feedback") == 1
    finally:
        server.stop()


def test_unreachable_database_answers_503(tmp_path: Path) -> None:
    """An app whose database does not answer (a PostgreSQL URL on a closed port) answers
    503 SYSTEM_UNAVAILABLE to the health check, to ingest and to the login form — never a
    500 or a success."""
    url = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/nowhere"
    server = AppServer(url, tmp_path, threads=2)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                health = requests.get(f"{server.base}/api/health", timeout=10)
                break
            except requests.ConnectionError:
                assert time.monotonic() < deadline and server.proc.poll() is None, server.log()
                time.sleep(0.1)
        assert health.status_code == 503
        assert health.json()["error"]["code"] == "SYSTEM_UNAVAILABLE"
        _unavailable(requests.post(
            f"{server.base}/api/ingest/tool-events", timeout=30,
            headers={"Authorization": "Bearer rvw_0000000000000000"},
            json={"id": "c", "run_id": "r", "event": "started", "tool_name": "t"}))
        login = requests.post(f"{server.base}/login", data={"username": "a", "password": "b"},
                              timeout=30, allow_redirects=False)
        assert login.status_code == 503
        assert "nothing was saved" in login.text
    finally:
        server.stop()


def _database_going_away(database: str, tmp_path: Path) -> None:
    """PostgreSQL stops accepting connections to the app's database and ends the app's
    sessions under a running app: a write answers 503 SYSTEM_UNAVAILABLE; once the
    database is back the row is absent and the same write succeeds. (SQLite has no
    server to lose; its "cannot write" fault is the lock test above.)"""
    ws_id, token, run_ids = _seed(database, "away", running_runs=1)
    message_id = _reviewer_and_answer(database, ws_id, "away")
    server = AppServer(database, tmp_path, threads=1)
    server.wait_up()
    reviewer = _logged_in(server, "away")
    thumbs = {"target_type": "chat_message", "target_id": message_id, "rating": "positive"}
    headers = {"Authorization": f"Bearer {token}"}
    body = {"id": "away-call", "run_id": run_ids[0], "event": "started",
            "tool_name": "search_logs", "timestamp": T0.isoformat()}
    name = database.rsplit("/", 1)[1]
    admin_engine = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin_engine.connect() as conn:
            conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'))
            conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                              "WHERE datname = :n"), {"n": name})
        try:
            for _ in range(2):  # a dead pooled connection, then a refused new one
                _unavailable(requests.post(f"{server.base}/api/ingest/tool-events",
                                           json=body, headers=headers, timeout=30))
            # A logged-in browser: the user cannot even be loaded; still a 503 page.
            page = reviewer.post(f"{server.base}/feedback", data=thumbs, timeout=30,
                                 allow_redirects=False)
            assert page.status_code == 503, server.log()[-3000:]
            assert "nothing was saved" in page.text
        finally:
            with admin_engine.connect() as conn:
                conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'))
        assert _scalar(database, "SELECT count(*) FROM tool_call_audit") == 0
        r = requests.post(f"{server.base}/api/ingest/tool-events", json=body, headers=headers,
                          timeout=30)
        assert r.status_code == 200, r.text[:300]
        assert _scalar(database, "SELECT count(*) FROM tool_call_audit") == 1
        assert _scalar(database, "SELECT count(*) FROM user_feedback") == 0
        assert reviewer.post(f"{server.base}/feedback", data=thumbs, timeout=30,
                             allow_redirects=False).status_code == 303
        assert _scalar(database, "SELECT count(*) FROM user_feedback") == 1
    finally:
        admin_engine.dispose()
        server.stop()


if PG_URL:  # collected on the PostgreSQL leg only: there is no server to lose on SQLite
    test_database_going_away_answers_503_then_recovers = _database_going_away


# --------------------------------------------------------------------------- (c) disk full


@pytest.fixture
def sqlite_app(tmp_path: Path) -> Iterator[Any]:
    """An in-process app on its own SQLite file (both legs: the fault is SQLite's)."""
    app = create_app({"TESTING": True, "SECRET_KEY": SECRET, "RATELIMIT_ENABLED": False,
                      "DATABASE_URL": f"sqlite:///{tmp_path / 'full.sqlite'}"})
    with app.app_context():
        db.create_all()
        yield app
        db.session.remove()
        db.engine.dispose()


def test_disk_full_answers_503_and_writes_nothing(sqlite_app: Any) -> None:
    """With the database capped a few pages above its size (``PRAGMA max_page_count``:
    SQLite then fails with "database or disk is full", as on a full disk), a large run
    document and a large event batch each answer 503 SYSTEM_UNAVAILABLE saying the
    database is full; neither the run nor any of its children nor any event row is
    stored, the counters are untouched; with the cap lifted the same requests succeed."""
    system = Actor.system_actor()
    ws = admin.create_workspace(db.session, system, "full", "Full")
    token = admin.create_token(db.session, system, ws.id, "full").secret
    runs.upsert_run(db.session, system, ws.id, "full-running", {"query": "q",
                                                                 "status": "RUNNING"})
    ws_id = ws.id
    db.session.remove()
    engine = db.engine
    with engine.connect() as conn:
        cap = conn.exec_driver_sql("PRAGMA page_count").scalar() + 3

    def cap_pages(dbapi_connection: Any, record: Any) -> None:
        dbapi_connection.execute(f"PRAGMA max_page_count={cap}")

    event.listen(engine, "connect", cap_pages)
    engine.dispose()
    client = sqlite_app.test_client()
    headers = {"Authorization": f"Bearer {token}"}
    doc = {"session_id": "full-session", "query": "q", "status": "SUCCESS", "answer": "a",
           "messages": [{"id": f"m{i}", "role": "assistant" if i % 2 else "user",
                         "content": f"message {i} " + "y" * 2000} for i in range(120)],
           "tool_calls": [{"id": f"full-doc-{i}", "tool_name": "search_logs",
                           "status": "completed", "arguments": {"q": "z" * 500}}
                          for i in range(60)]}
    events = [{"id": f"full-ev-{i}", "run_id": "full-running", "event": "started",
               "tool_name": "search_logs", "arguments": {"q": "w" * 1000}} for i in range(600)]
    try:
        for response in (client.put("/api/ingest/runs/full-doc", json=doc, headers=headers),
                         client.post("/api/ingest/tool-events", json=events, headers=headers)):
            assert response.status_code == 503, response.get_data(as_text=True)[:300]
            error = response.get_json()["error"]
            assert error["code"] == "SYSTEM_UNAVAILABLE"
            assert "database is full" in error["message"]
            assert "nothing was saved" in error["message"]
    finally:
        event.remove(engine, "connect", cap_pages)
        engine.dispose()

    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
    assert db.session.scalar(select(func.count()).select_from(Run)
                             .where(Run.run_id == "full-doc")) == 0
    assert db.session.scalar(select(func.count()).select_from(DiagnosisSession)
                             .where(DiagnosisSession.session_id == "full-session")) == 0
    assert db.session.scalar(select(func.count()).select_from(Message)) == 0
    assert db.session.scalar(select(func.count()).select_from(ToolCall)) == 0
    running = db.session.scalars(select(Run).where(Run.run_id == "full-running")).one()
    assert (running.tool_call_count, running.workspace_id) == (0, ws_id)
    db.session.remove()

    assert client.put("/api/ingest/runs/full-doc", json=doc, headers=headers).status_code == 201
    r = client.post("/api/ingest/tool-events", json=events, headers=headers)
    assert r.status_code == 200 and r.get_json()["counts"]["created"] == 600
    assert db.session.scalar(select(func.count()).select_from(ToolCall)) == 660
