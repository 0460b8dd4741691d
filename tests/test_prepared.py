"""``reviewapp.prepared``: a statement run on the DBAPI cursor gives what
``Connection.execute`` gives (rows, converted values), on both databases; the engine's
statement listeners still see it; a database error is SQLAlchemy's wrapped error."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import bindparam, event, select
from sqlalchemy.exc import IntegrityError

from reviewapp.actors import Role
from reviewapp.models import FeedbackEvent, Membership, Run, Workspace
from reviewapp.prepared import Prepared

_WHEN = datetime(2026, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)


def _event_values(run: Run, **changes) -> dict:
    return {"feedback_id": 7, "actor_id": None, "workspace_id": run.workspace_id,
            "run_pk": run.id, "target_type": "diagnostic_step", "target_id": 3,
            "subject_key": "", "action": "update", "before": {"rating": "positive"},
            "after": {"rating": "negative", "comment": "检查日志 🔍"},
            "created_at": _WHEN, "updated_at": _WHEN, **changes}


_KEYS = ["feedback_id", "actor_id", "workspace_id", "run_pk", "target_type", "target_id",
         "subject_key", "action", "before", "after", "created_at", "updated_at"]
_INSERT = Prepared(FeedbackEvent.__table__.insert().returning(
    FeedbackEvent.id, FeedbackEvent.before, FeedbackEvent.after, FeedbackEvent.created_at),
    column_keys=_KEYS)
_READ = Prepared(
    select(FeedbackEvent.id, FeedbackEvent.after, FeedbackEvent.created_at, Workspace.settings)
    .join(Workspace, Workspace.id == FeedbackEvent.workspace_id)
    .where(FeedbackEvent.run_pk == bindparam("run_pk"), FeedbackEvent.action != "create")
    .order_by(FeedbackEvent.id))


def test_rows_and_values_as_sqlalchemy_gives_them(session, make):
    ws = make.workspace()
    run = make.aiops_run(ws)
    session.commit()
    conn = session.connection()
    written = _INSERT.one_or_none(conn, _event_values(run))
    assert written.before == {"rating": "positive"}
    assert written.after == {"rating": "negative", "comment": "检查日志 🔍"}
    assert written.created_at == _WHEN and written.created_at.utcoffset().total_seconds() == 0
    _INSERT.execute(conn, _event_values(run, action="create", after=None))

    rows = _READ.rows(conn, {"run_pk": run.id})
    core = conn.execute(_READ.stmt, {"run_pk": run.id}).all()
    assert [tuple(r) for r in rows] == [tuple(r) for r in core]
    assert len(rows) == 1 and rows[0].id == written.id and rows[0]._asdict()["after"] == written.after
    assert _READ.one_or_none(conn, {"run_pk": run.id + 1000}) is None


def test_literals_are_bound_and_expanding_lists_refused(session, make):
    ws = make.workspace()
    user = make.user(ws, Role.LEAD)
    make.user(ws, Role.REVIEWER)
    stmt = Prepared(select(Membership.user_id).where(
        Membership.workspace_id == bindparam("ws"), Membership.role == "lead"))
    conn = session.connection()
    assert [r.user_id for r in stmt.rows(conn, {"ws": ws.id})] == [user.id]
    assert stmt.rows(conn, {"ws": ws.id + 1000}) == []
    listed = Prepared(select(Membership.user_id).where(Membership.role.in_(["lead", "admin"])))
    with pytest.raises(ValueError, match="expanding"):
        listed.rows(conn, {})


def test_statement_listeners_still_see_each_statement(session, make, app):
    ws = make.workspace()
    run = make.aiops_run(ws)
    conn = session.connection()
    seen: list[str] = []

    def listener(conn, cursor, statement, *args):
        seen.append(statement)

    engine = conn.engine
    event.listen(engine, "before_cursor_execute", listener)
    try:
        rows = _READ.rows(session.connection(), {"run_pk": run.id})
    finally:
        event.remove(engine, "before_cursor_execute", listener)
    assert rows == []
    assert len(seen) == 1 and seen[0].lstrip().upper().startswith("SELECT")


@pytest.mark.parametrize("listening", [False, True])
def test_database_errors_are_sqlalchemy_errors(session, make, listening):
    ws = make.workspace()
    run = make.aiops_run(ws)
    session.commit()
    conn = session.connection()
    engine = conn.engine

    def listener(*args):
        pass

    if listening:
        event.listen(engine, "before_cursor_execute", listener)
    try:
        with pytest.raises(IntegrityError):  # no such workspace: foreign key
            _INSERT.execute(session.connection(), _event_values(run, workspace_id=run.workspace_id + 1000))
    finally:
        if listening:
            event.remove(engine, "before_cursor_execute", listener)
    session.rollback()


@pytest.mark.parametrize("listening", [False, True])
def test_a_read_apart_gives_the_rows_and_listeners_see_it(session, make, listening):
    """``one_or_none_apart``: the same row as in the session, read on a pooled connection
    outside it; listeners see the statement."""
    ws = make.workspace()
    run = make.aiops_run(ws)
    session.commit()
    written = _INSERT.one_or_none(session.connection(), _event_values(run))
    session.commit()
    engine = session.get_bind()
    run_pk = run.id
    seen: list[str] = []

    def listener(conn, cursor, statement, *args):
        seen.append(statement)

    if listening:
        event.listen(engine, "before_cursor_execute", listener)
    try:
        row = _READ.one_or_none_apart(engine, {"run_pk": run_pk})
        missing = _READ.one_or_none_apart(engine, {"run_pk": run_pk + 1000})
    finally:
        if listening:
            event.remove(engine, "before_cursor_execute", listener)
    assert (row.id, row.after, row.created_at) == (written.id, written.after, _WHEN)
    assert missing is None
    assert len(seen) == (2 if listening else 0)
