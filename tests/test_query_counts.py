"""Statements per request on the hot paths, pinned exactly (performance issue).

A SQLAlchemy ``before_cursor_execute`` listener records every statement a request sends;
transaction control (BEGIN / COMMIT / ROLLBACK / SAVEPOINT, which SQLite and PostgreSQL
send differently) is left out, every other statement is listed as (verb, first table).
The expected lists were read off the code: an extra statement (an N+1, a second access
check, an ORM reload) fails these tests instead of slowly eating the benchmarks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, select

from reviewapp.actors import Role
from reviewapp.extensions import db
from reviewapp.models import Feedback, FeedbackEvent

_CONTROL = re.compile(r"^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|PRAGMA)\b", re.I)
_TARGET = re.compile(r"\b(?:FROM|INTO|UPDATE)\s+\"?([a-z_]+)", re.I)


def _shape(statement: str) -> tuple[str, str]:
    verb = statement.split(None, 1)[0].upper()
    match = _TARGET.search(statement)
    return verb, match.group(1) if match else ""


@pytest.fixture
def served(app_factory, login):
    """A test client of a second app on the test database: each of its requests pushes
    its own app context (fresh session, fresh ``g``), as under a real server; the
    fixture app's context would otherwise carry the logged-in user from one request to
    the next. Returns (client, engine of that app)."""
    other = app_factory()
    with other.app_context():
        engine = db.engine
    return other.test_client(), engine


@contextmanager
def recorded(engine: Any) -> Iterator[list[tuple[str, str]]]:
    """The (verb, table) of each non-control statement ``engine`` sends inside the block."""
    seen: list[tuple[str, str]] = []

    def listener(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if not _CONTROL.match(statement):
            seen.append(_shape(statement))

    event.listen(engine, "before_cursor_execute", listener)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", listener)


def test_shape_reader_on_known_statements():
    assert _shape("SELECT a.id FROM (SELECT diagnosis_run.id FROM diagnosis_run) AS a") == (
        "SELECT", "diagnosis_run")
    assert _shape('INSERT INTO "user_feedback" (id) VALUES (?)') == ("INSERT", "user_feedback")
    assert _shape("UPDATE diagnosis_run SET x=1") == ("UPDATE", "diagnosis_run")


# Login user (one primary-key read), owner check through the step's run (membership and,
# on SQLite, the stored rating in the same query), the upsert, the history event.
_UPSERT_WITH_EVENT = [
    ("SELECT", "user_account"),
    ("SELECT", "diagnosis_run"),
    ("INSERT", "user_feedback"),
    ("INSERT", "feedback_event"),
]


def test_feedback_upsert_statements(served, login, make, session):
    client, engine = served
    ws = make.workspace()
    user = make.user(ws, Role.REVIEWER)
    step_id = make.aiops_run(ws).steps[0].id
    login(user, c=client)

    def put(rating: str, reason: str | None = None) -> dict[str, Any]:
        with recorded(engine) as seen:
            response = client.put("/api/feedback/targets", json={
                "targetType": "diagnostic_step", "targetId": step_id, "rating": rating,
                "reason": reason})
        assert response.status_code == 200, response.get_data(as_text=True)
        return {"statements": seen, "body": response.get_json()["feedback"]}

    expected = list(_UPSERT_WITH_EVENT)
    if engine.dialect.name == "postgresql":
        # The run row lock every writer of a run takes first, then the owner check again
        # under it (a re-ingest may have removed the target meanwhile), then the stored
        # rating FOR UPDATE (a row lock cannot sit on the outer side of a join).
        expected[2:2] = [("SELECT", "diagnosis_run"), ("SELECT", "diagnosis_run"),
                         ("SELECT", "user_feedback")]
    created = put("positive")
    # A created rating (only then) may make its run one more that the user rated
    # (services/rated_runs.py, issue 18): the run put on the user's list of rated runs
    # (the runs list's "reviewed by me" in list order) and, being new there, counted.
    first = expected.index(("INSERT", "user_feedback")) + 1
    assert created["statements"] == [*expected[:first], ("INSERT", "rated_run"),
                                     ("INSERT", "user_rated_runs"), *expected[first:]]
    changed = put("negative", "incomplete")
    assert changed["statements"] == expected
    assert changed["body"]["id"] == created["body"]["id"]
    # Same rating again: the row is refreshed, no event (nothing changed).
    unchanged = put("negative", "incomplete")
    assert unchanged["statements"] == expected[:-1]

    session.rollback()
    assert session.scalars(select(Feedback.rating).where(Feedback.target_id == step_id)).all() \
        == ["negative"]
    assert session.scalars(select(FeedbackEvent.action).order_by(FeedbackEvent.id)).all() == [
        "create", "update"]


# Login user with the nav role (its highest membership, a subquery the reader meets first:
# one statement, issue 18), the run with its session and workspace (access check in the same
# query), its messages, steps and report, my ratings (each with whether it was given on an
# earlier version of its target's text, issue 17 item 4), everybody's ratings (joined with
# their names), previous / next in the list (one UNION ALL), the timeline's calls.
_RUN_PAGE = [
    ("SELECT", "membership"),
    # The run, its session and workspace, and whether it is blind for the viewer (issue 16):
    # the blind check's EXISTS on the queue items is the first FROM the reader meets.
    ("SELECT", "review_queue_item"),
    ("SELECT", "message"),
    ("SELECT", "diagnostic_step"),
    ("SELECT", "diagnostic_report"),
    ("SELECT", "case_library"),
    # My ratings: the earlier-version EXISTS on the revisions is the first FROM met.
    ("SELECT", "target_revision"),
    ("SELECT", "user_feedback"),
    ("SELECT", "diagnosis_run"),
    # The timeline's shown calls with the counts and axis of all (window functions, issue 18).
    ("WITH", "tool_call_audit"),
]


def _calls(n: int) -> list[dict[str, Any]]:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    return [{
        "id": f"call-{i}", "tool_name": f"tool_{i % 7}",
        "status": "failed" if i % 11 == 0 else "completed",
        "arguments": {"query": f"lookup {i}"}, "output": f"result {i} " * 20,
        "error": "Error: timeout" if i % 11 == 0 else None,
        "started_at": (start + timedelta(seconds=i)).isoformat(),
        "completed_at": (start + timedelta(seconds=i, milliseconds=700)).isoformat(),
        "retrieval": {"match_level": "L1", "hit_count": 2, "evidence_refs": []} if i % 5 == 0
        else None,
    } for i in range(n)]


@pytest.mark.parametrize("calls", [20, 150])
def test_run_page_statements_do_not_grow_with_calls(served, login, make, calls):
    client, engine = served
    ws = make.workspace()
    user = make.user(ws, Role.REVIEWER)
    run = make.run(ws, tool_calls=_calls(calls))
    make.run(ws)  # a neighbour for the previous / next links
    login(user, c=client)
    with recorded(engine) as seen:
        response = client.get(f"/runs/{run.id}")
    assert response.status_code == 200
    # The page shows the first 50 calls (issue 18), counting all of them in the same query.
    html = response.get_data(as_text=True)
    assert html.count('<li class="tl-row ') == min(calls, 50)
    assert f'<span class="count-pill">{calls}</span>' in html
    assert seen == _RUN_PAGE
