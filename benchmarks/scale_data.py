"""A database of N runs in the shape of issue 18, built with bulk inserts (SQLAlchemy
Core ``insert`` executemany, 20,000 rows a statement batch; never the ORM one by one).

Shape: two workspaces (``alpha``, ``beta``, half the runs each, in blocks of 8), one
session per 4 runs, one assistant answer per run (so every finished run is rateable),
5 tool calls per run (1 in 7 runs has a failed one), evidence scores and verifier
verdicts on 9 runs in 10, 1 run in 100 still RUNNING, 1 in 33 (3 %) rated by a user
(answer thumbs; the run's verdict follows), a triage item for every run rated
"not useful" and a case for every AIOps run rated "useful". Runs are spread over the
180 days before the build, so "the last 7 days" holds about 4 % of them at any size.

Users (password ``PASSWORD``): ``admin`` (admin of both workspaces) and ``reviewer``
(reviewer of ``alpha`` only). The schema comes from the migrations (``flask db
upgrade``), as in production.

    from benchmarks.scale_data import build
    info = build("sqlite:////tmp/x.sqlite", 100_000)
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, insert, text

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

PASSWORD = "scale-bench-password-1"
SECRET = "scale-bench-secret"
TOOL_CALLS_PER_RUN = 5
RUNS_PER_SESSION = 4
RATED_EVERY = 33  # ~3 % of runs rated
SPAN = timedelta(days=180)
BATCH = 20_000


@dataclass(frozen=True)
class Built:
    """What a benchmark needs to address the data: the URL, the run count, the
    workspace ids (alpha, beta), a run both users may see (pk and agent run id), and the
    moment the newest run was created (UTC)."""

    url: str
    runs: int
    alpha: int
    beta: int
    sample_run_pk: int
    sample_run_id: str
    newest: datetime


def app_config(url: str) -> dict[str, Any]:
    """The reviewapp configuration the benchmarks run the app with."""
    return {"SECRET_KEY": SECRET, "DATABASE_URL": url, "WTF_CSRF_ENABLED": False,
            "RATELIMIT_ENABLED": False}


def migrate(url: str) -> None:
    """``flask db upgrade`` on the database at ``url`` (a subprocess of this venv's flask;
    raises CalledProcessError if it fails)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVIEWAPP_")}
    env.update({"REVIEWAPP_DATABASE_URL": url, "REVIEWAPP_SECRET_KEY": SECRET,
                "FLASK_APP": "app.py"})
    subprocess.run([str(Path(sys.executable).parent / "flask"), "db", "upgrade"], cwd=REPO,
                   env=env, check=True, capture_output=True)


def _accounts(url: str) -> tuple[int, int, int, int]:
    """Workspaces and users through the services (passwords hashed as in production)."""
    from reviewapp import create_app
    from reviewapp.actors import Actor, Role
    from reviewapp.extensions import db
    from reviewapp.services import admin

    app = create_app(app_config(url))
    with app.app_context():
        system = Actor.system_actor()
        alpha = admin.create_workspace(db.session, system, "alpha", "Alpha on-call").id
        beta = admin.create_workspace(db.session, system, "beta", "Beta on-call").id
        admin_id = admin.create_user(db.session, system, "admin", PASSWORD, alpha,
                                     Role.ADMIN.value).id
        admin.add_member(db.session, system, beta, "admin", Role.ADMIN.value)
        reviewer_id = admin.create_user(db.session, system, "reviewer", PASSWORD, alpha,
                                        Role.REVIEWER.value).id
        db.session.commit()
        db.engine.dispose()
    return alpha, beta, admin_id, reviewer_id


def _derived(url: str, count: int) -> None:
    """What the services keep beside the rows and the bulk insert bypassed: the text
    search index (``run_text.reindex_runs``, per batch) and the dashboard's roll-ups
    (``dashboard.rebuild``), so the search and dashboard rows time real data."""
    from reviewapp import create_app
    from reviewapp.actors import Actor
    from reviewapp.extensions import db
    from reviewapp.services import dashboard, run_text

    app = create_app(app_config(url))
    with app.app_context():
        for start in range(1, count + 1, BATCH):
            run_text.reindex_runs(db.session, range(start, min(count, start + BATCH - 1) + 1))
            db.session.commit()
        dashboard.rebuild(db.session, Actor.system_actor())
        db.engine.dispose()


def build(url: str, count: int, *, progress: bool = True) -> Built:
    """Migrate the empty database at ``url`` and fill it with ``count`` runs (shape in the
    module docstring). Returns where things are. Takes about a minute per 100,000 runs."""
    from reviewapp.models import (
        Case,
        DiagnosisSession,
        Feedback,
        Message,
        Run,
        ToolCall,
        TriageItem,
    )

    migrate(url)
    alpha, beta, admin_id, reviewer_id = _accounts(url)
    newest = datetime.now(UTC).replace(microsecond=0)
    step = SPAN / max(count, 1)
    engine = create_engine(url)
    tables = {m: m.__table__ for m in (DiagnosisSession, Run, Message, ToolCall, Feedback,
                                       TriageItem, Case)}
    sample = count // 2 - (count // 2) % 16  # first run of an alpha block
    with engine.begin() as conn:
        for start in range(0, count, BATCH):
            rows: dict[Any, list[dict[str, Any]]] = {m: [] for m in tables}
            for i in range(start, min(count, start + BATCH)):
                _rows(i, count, newest, step, alpha, beta, admin_id, reviewer_id, rows)
            for model in tables:  # parents first
                if rows[model]:
                    conn.execute(insert(tables[model]), rows[model])
            if progress and start and start % 200_000 == 0:
                print(f"    ... {start:,} runs", file=sys.stderr)
        if engine.dialect.name == "postgresql":
            for table, column in (("diagnosis_session", "id"), ("diagnosis_run", "id"),
                                  ("message", "id"), ("user_feedback", "id"),
                                  ("triage_item", "id")):
                conn.execute(text(
                    f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                    f"(SELECT coalesce(max({column}), 0) + 1 FROM {table}), false)"))
    engine.dispose()
    _derived(url, count)
    engine = create_engine(url)
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.execution_options(isolation_level="AUTOCOMMIT").execute(text("VACUUM ANALYZE"))
        else:
            conn.execute(text("ANALYZE"))
            conn.commit()
    engine.dispose()
    return Built(url, count, alpha, beta, sample + 1, f"run-{sample}", newest)


def _rows(i: int, count: int, newest: datetime, step: timedelta, alpha: int, beta: int,
          admin_id: int, reviewer_id: int, rows: dict[Any, list[dict[str, Any]]]) -> None:
    from reviewapp.models import (
        Case,
        DiagnosisSession,
        Feedback,
        Message,
        Run,
        ToolCall,
        TriageItem,
    )

    s = i // RUNS_PER_SESSION
    workspace = alpha if (s // 2) % 2 == 0 else beta
    kind = "chat" if s % 2 == 0 else "aiops"
    at = newest - step * (count - 1 - i)
    pk = i + 1
    if i % RUNS_PER_SESSION == 0:
        rows[DiagnosisSession].append({
            "id": s + 1, "session_id": f"session-{s}", "workspace_id": workspace, "kind": kind,
            "query": None, "answer": None, "status": None, "self_evaluation": None,
            "feedback": None, "created_at": at, "updated_at": at})
    status = "RUNNING" if i % 100 == 99 else ("FAILED" if i % 10 == 3 else "SUCCESS")
    score = None if i % 10 == 0 else (i * 37) % 101
    verifier = None if score is None else ("PASS" if score >= 70 else
                                           "LOW_CONFID" if score >= 40 else "REJECT")
    failed = 1 if i % 7 == 0 else 0
    rated = i % RATED_EVERY == 0 and status != "RUNNING"
    verdict = None
    if rated:
        verdict = "not_useful" if (i // RATED_EVERY) % 3 == 0 else "useful"
    rows[Run].append({
        "id": pk, "run_id": f"run-{i}", "workspace_id": workspace, "diagnosis_session_id": s + 1,
        "kind": kind, "query": f"Why is service {i % 97} slow after deploy {i}?",
        "answer": f"Deploy {i} exhausted the connection pool of service {i % 97}.",
        "status": status, "self_evaluation": None, "feedback": verdict,
        "orchestration_trace": None, "alert": None, "external_outcome": None,
        "external_outcome_detail": None, "started_at": at, "finished_at": at + timedelta(seconds=30),
        "evidence_score": score, "verifier_verdict": verifier,
        "tool_call_count": TOOL_CALLS_PER_RUN, "failed_tool_call_count": failed,
        # What runs.rateable keeps: finished, and every run has an answer message.
        "rateable": status != "RUNNING",
        "created_at": at, "updated_at": at})
    rows[Message].append({
        "id": pk, "run_pk": pk, "message_id": None, "ordinal": 0, "role": "assistant",
        "content": f"Deploy {i} exhausted the connection pool.", "metadata": {},
        "created_at": at, "updated_at": at})
    for k in range(TOOL_CALLS_PER_RUN):
        bad = failed and k == TOOL_CALLS_PER_RUN - 1
        rows[ToolCall].append({
            "workspace_id": workspace, "id": f"call-{i}-{k}", "run_pk": pk,
            "chat_session_id": s + 1 if kind == "chat" else None,
            "diagnostic_task_id": s + 1 if kind == "aiops" else None, "step_pk": None,
            "ordinal": k, "tool_name": f"tool_{(i + k) % 9}",
            "status": "failed" if bad else "completed", "arguments": None,
            "result_summary": f"{k} rows for service {i % 97}",
            "error_message": "Error: timeout" if bad else None,
            "started_at": at + timedelta(seconds=k), "completed_at": at + timedelta(seconds=k + 1),
            "duration_ms": 1000, "compensated": False, "match_level": None, "hit_count": None,
            "evidence_refs": None, "arguments_length": None, "result_length": None,
            "error_length": None, "created_at": at, "updated_at": at})
    if not rated:
        return
    author = reviewer_id if workspace == alpha and (i // RATED_EVERY) % 2 == 0 else admin_id
    rows[Feedback].append({
        "id": i // RATED_EVERY + 1, "author_id": author, "workspace_id": workspace, "run_pk": pk,
        "target_type": "chat_message", "target_id": pk, "subject_key": "",
        "rating": "negative" if verdict == "not_useful" else "positive", "reason": None,
        "comment": None, "correction": None, "created_at": at, "updated_at": at})
    if verdict == "not_useful":
        rows[TriageItem].append({
            "id": i // RATED_EVERY + 1, "workspace_id": workspace, "run_pk": pk, "state": "new",
            "opened_reason": "not_useful", "assignee_id": None, "fault_category": None,
            "note": None, "resolved_at": None, "version": 1, "created_at": at, "updated_at": at})
    elif kind == "aiops":
        rows[Case].append({
            "case_id": f"00000000-0000-4000-8000-{pk:012d}", "workspace_id": workspace,
            "diagnosis_id": f"run-{i}", "run_pk": pk, "source_type": "AUTO",
            "fault_category": "GENERAL", "title": f"Connection pool exhausted by deploy {i}",
            "root_cause": f"Deploy {i} leaked connections.", "solution": "Roll back.",
            "error_code": None, "service": f"service-{i % 97}", "created_by": "system",
            "version": 1, "withdrawn_at": None, "run_not_useful_at": None,
            "created_at": at, "updated_at": at})
