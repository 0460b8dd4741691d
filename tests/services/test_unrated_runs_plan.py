"""The review queue's "next run I have not rated" (``unrated_runs.next_run``) reads the
rateable runs' index per workspace instead of scanning runs and probing each one's
messages (issue 18): the database's own plan of its statements, on 12,000 runs with
fresh statistics, for a user of two workspaces and a reviewer of one.

PostgreSQL: no ``Seq Scan on diagnosis_run`` and no read of ``message`` (the rateable
rule is the run's own column now). SQLite: no ``SCAN diagnosis_run`` without an index,
no sort but the outer merge's, and no ``message`` either.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, insert, select, text

from reviewapp.actors import Role
from reviewapp.extensions import db
from reviewapp.models import DiagnosisSession, Feedback, Membership, Message, Run
from reviewapp.services import rated_runs, unrated_runs
from reviewapp.services.runs import RunFilters
from tests.plans import explain, sent

from .runs.test_scope_plan import _assert_indexed, _plan

RUNS_PER_WORKSPACE = 6_000
RATED_EVERY = 33  # the shape: ~3 % rated
RUNNING_EVERY = 100


@pytest.fixture
def queue_world(session, make):
    """Two workspaces of 6,000 runs each (bulk inserted, an answer message each, every
    100th still RUNNING); ``admin`` belongs to both and rated every 33rd run of both,
    ``reviewer`` belongs to alpha only and rated nothing. The newest runs of each
    workspace are rated by ``admin`` or RUNNING, so the queue passes over some."""
    alpha, beta = make.workspace(), make.workspace()
    admin = make.user(alpha, Role.ADMIN)
    session.add(Membership(user_id=admin.id, workspace_id=beta.id, role=Role.ADMIN.value))
    reviewer = make.user(alpha, Role.REVIEWER)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    expected: dict[str, Any] = {"admin": [], "reviewer": []}
    for ws in (alpha, beta):
        sess = DiagnosisSession(session_id=f"s-{ws.id}", workspace_id=ws.id, kind="chat")
        session.add(sess)
        session.flush()
        base = session.scalar(text("SELECT coalesce(max(id), 0) FROM diagnosis_run")) + 1
        runs, messages, ratings = [], [], []
        for i in range(RUNS_PER_WORKSPACE):
            pk = base + i
            # The newest ones: RUNNING, rated, rated ... then neither.
            running = i % RUNNING_EVERY == RUNNING_EVERY - 1 or i == RUNS_PER_WORKSPACE - 1
            rated = not running and (i % RATED_EVERY == 0 or i >= RUNS_PER_WORKSPACE - 4)
            at = start + timedelta(seconds=2 * i + (ws.id % 2))
            runs.append({"id": pk, "run_id": f"r-{ws.id}-{i}", "workspace_id": ws.id,
                         "diagnosis_session_id": sess.id, "kind": "chat", "query": f"q {i}",
                         "status": "RUNNING" if running else "SUCCESS",
                         "rateable": not running, "tool_call_count": 0,
                         "failed_tool_call_count": 0, "evidence_score": (i * 37) % 101,
                         "created_at": at, "updated_at": at})
            messages.append({"run_pk": pk, "ordinal": 0, "role": "assistant",
                             "content": f"answer {i}", "metadata": {}})
            if rated:
                ratings.append({"author_id": admin.id, "workspace_id": ws.id, "run_pk": pk,
                                "target_type": "chat_message", "target_id": pk,
                                "subject_key": "", "rating": "positive"})
            elif not running:
                expected["admin"].append((at, pk))
            if ws is alpha and not running:
                expected["reviewer"].append((at, pk))
        session.execute(insert(Run.__table__), runs)
        session.execute(insert(Message.__table__), messages)
        session.execute(insert(Feedback.__table__), ratings)
    rated_runs.rebuild(session)  # the bulk load bypassed the services (as scale_data's)
    session.commit()
    session.execute(text("ANALYZE"))
    session.commit()
    return {"admin": make.actor(admin), "reviewer": make.actor(reviewer),
            "expected": {name: [pk for _, pk in sorted(rows, reverse=True)]
                         for name, rows in expected.items()}}


def _statements(session, call) -> tuple[list[tuple[str, Any]], Any]:
    seen: list[tuple[str, Any]] = []

    def listener(conn, cursor_, statement, parameters, context, executemany):  # noqa: ANN001
        seen.append((statement, parameters))

    event.listen(db.engine, "before_cursor_execute", listener)
    try:
        result = call()
    finally:
        event.remove(db.engine, "before_cursor_execute", listener)
    return [(s, p) for s, p in seen if "diagnosis_run" in s], result


def _assert_no_scan(session, statements: list[tuple[str, Any]]) -> None:
    dialect = db.engine.dialect.name
    assert statements
    for statement, parameters in statements:
        plan = _plan(session, statement, parameters)
        _assert_indexed(plan, dialect)
        # The rateable rule is the run's column: no run's messages are probed.
        assert " message" not in plan.replace("message_1", "message"), plan


@pytest.mark.parametrize("user", ["admin", "reviewer"])
def test_next_run_reads_the_rateable_index(session, queue_world, user):
    actor, expected = queue_world[user], queue_world["expected"][user]
    statements, state = _statements(session, lambda: unrated_runs.next_run(session, actor))
    assert state.run_pk == expected[0]
    queue = [(s, p) for s, p in statements if "ORDER BY" in s]
    assert len(queue) == 1
    _assert_no_scan(session, queue)
    # Skipping it moves to the next one, then wraps around: also indexed.
    statements, state = _statements(
        session, lambda: unrated_runs.next_run(session, actor, after_run_pk=expected[0]))
    assert state.run_pk == expected[1]
    _assert_no_scan(session, [(s, p) for s, p in statements if "ORDER BY" in s])
    statements, state = _statements(
        session, lambda: unrated_runs.next_run(session, actor, after_run_pk=expected[-1]))
    assert state.run_pk == expected[0]
    _assert_no_scan(session, [(s, p) for s, p in statements if "ORDER BY" in s])


@pytest.mark.parametrize("user", ["admin", "reviewer"])
def test_the_progress_reads_the_kept_count_not_my_ratings(session, queue_world, user):
    """The whole list's "reviewed" is the user's kept count of rated rateable runs (one
    row a workspace): no statement reads their ratings, however many they made (the
    admin's ~22,700 at a million runs made it 50 / 159 ms, issue 18)."""
    actor = queue_world[user]
    state = unrated_runs.next_run(session, actor)
    _, seen = sent(lambda: state.progress)
    progress = state.progress
    rateable = 2 * (RUNS_PER_WORKSPACE - RUNS_PER_WORKSPACE // RUNNING_EVERY)
    if user == "admin":
        assert (progress.total, progress.capped) == (10_000, True)  # 11,880 rateable
        assert progress.reviewed == rateable - len(queue_world["expected"]["admin"])
    else:
        assert (progress.total, progress.capped, progress.reviewed) == (rateable // 2, False, 0)
    assert len(seen) == 2, seen
    assert not [s for s, _ in seen if "user_feedback" in s], seen
    _assert_no_scan(session, [(s, p) for s, p in seen if "diagnosis_run" in s])
    # ... but the kept count: a row per user and workspace (its key), whatever the runs.
    assert len([s for s, _ in seen if "user_rated_runs" in s]) == 1, seen


def test_a_filtered_progress_counts_from_my_ratings_per_workspace(session, queue_world):
    """With a filter, "reviewed" is counted from the user's ratings of each workspace
    (on SQLite through the ``(author_id, workspace_id, run_pk)`` index) up to the cap,
    not by testing the list's runs; the same figure as counted here from the rows."""
    actor = queue_world["admin"]
    progress, seen = sent(lambda: unrated_runs.progress(session, actor, RunFilters(kind="chat")))
    rated = len(session.scalars(select(Feedback.run_pk).where(
        Feedback.author_id == actor.user_id).distinct()).all())
    assert progress.reviewed == rated
    counts = [(s, p) for s, p in seen if "user_feedback" in s]
    assert len(counts) == 1, seen
    assert counts[0][0].count("user_feedback.workspace_id =") == 2, counts  # per workspace
    if db.engine.dialect.name == "sqlite":  # PostgreSQL hashes 183 ratings: its choice
        plan = explain(session, *counts[0])
        assert "ix_user_feedback_author_workspace_run" in plan, plan
        _assert_no_scan(session, counts)


@pytest.mark.parametrize("filters", [RunFilters(sort="score_desc"), RunFilters(kind="chat")],
                         ids=["score", "kind"])
def test_a_sorted_or_filtered_queue_reads_an_index(session, queue_world, filters):
    actor = queue_world["admin"]
    statements, state = _statements(session, lambda: unrated_runs.next_run(session, actor, filters))
    assert state.run_pk is not None
    _assert_no_scan(session, [(s, p) for s, p in statements if "ORDER BY" in s])
