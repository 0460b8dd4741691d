"""Recomputing the dashboard's roll-ups from the base tables (``flask dashboard
rebuild``; SPEC 8, issue 18): the same counts the services keep at write time
(``services/rollups.py``, which holds the day rule and the dimensions), set-based; and
the users' counts of rated runs (``services/rated_runs.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Integer, String, case, delete, func, literal, select, union_all
from sqlalchemy.orm import Session

from ..models import (
    Feedback,
    Run,
    RunDayCount,
    ToolCall,
    ToolCallStatus,
    ToolDayCount,
    TriageDayCount,
    TriageItem,
)
from . import rated_runs
from .rollups import (
    DIMENSIONS,
    NEGATIVE_RATING,
    RATED_CALL,
    TOOL_CALL_RATING,
    TOOL_COUNTERS,
    day_sql,
    discard_pending,
    run_time,
)


@dataclass(frozen=True)
class RebuildSummary:
    """Rows written by ``rebuild``: run-dimension rows, tool rows, triage rows and
    (user, workspace) rows of rated runs."""

    run_rows: int
    tool_rows: int
    triage_rows: int = 0
    rated_rows: int = 0


def rebuild(session: Session, workspace_id: int | None = None) -> RebuildSummary:
    """Recompute the roll-ups of ``workspace_id`` (``None``: every workspace) from the
    runs, tool calls, ratings and triage items, replacing what was there, and the users'
    counts of rated runs (``rated_runs.rebuild``); commit. On PostgreSQL the
    roll-up tables are locked for the duration (writers wait), so nothing written
    meanwhile is lost or counted twice. Set-based: one INSERT ... SELECT per table."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(select(literal(1)))  # begin
        session.connection().exec_driver_sql(
            "LOCK TABLE dashboard_run_day, dashboard_tool_day, dashboard_triage_day,"
            " user_rated_runs, rated_run IN EXCLUSIVE MODE")
    tables = (RunDayCount.__table__, ToolDayCount.__table__, TriageDayCount.__table__)
    scope: list[Any] = [] if workspace_id is None else [Run.workspace_id == workspace_id]
    for table in tables:
        stmt = delete(table)
        if workspace_id is not None:
            stmt = stmt.where(table.c.workspace_id == workspace_id)
        session.execute(stmt)
    day = day_sql(session, run_time())
    _insert_run_rows(session, day, scope)
    _insert_tool_rows(session, day, scope)
    _insert_triage_rows(session, workspace_id)
    summary = RebuildSummary(*(
        int(session.scalar(select(func.count()).select_from(table).where(
            *([] if workspace_id is None else [table.c.workspace_id == workspace_id]))) or 0)
        for table in tables), rated_rows=rated_runs.rebuild(session, workspace_id))
    discard_pending(session)  # nothing pending may add to the fresh counts
    session.commit()
    return summary


def _insert_run_rows(session: Session, day: Any, scope: list[Any]) -> None:
    """The run roll-ups of the runs in ``scope``: one INSERT ... SELECT counting the runs
    per workspace, dimension, day and value (every dimension of ``DIMENSIONS``)."""
    per_dimension = [
        select(Run.workspace_id, literal(name, String).label("dimension"), day.label("day"),
               value_sql().label("value"))
        .where(*scope)
        for name, (_, value_sql) in DIMENSIONS.items()
    ]
    runs = union_all(*per_dimension).subquery()
    session.execute(RunDayCount.__table__.insert().from_select(
        ["workspace_id", "dimension", "day", "value", "runs"],
        select(runs.c.workspace_id, runs.c.dimension, runs.c.day, runs.c.value, func.count())
        .group_by(runs.c.workspace_id, runs.c.dimension, runs.c.day, runs.c.value)))


def _insert_tool_rows(session: Session, day: Any, scope: list[Any]) -> None:
    """The tool roll-ups of the runs in ``scope``: one INSERT ... SELECT summing, per
    workspace, day and tool, its calls and failed calls and its calls' ratings
    (rated, negative, calls with a negative rating)."""
    zero = literal(0, Integer)
    calls = (
        select(Run.workspace_id, day.label("day"), ToolCall.tool_name,
               literal(1, Integer).label("calls"),
               case((ToolCall.status == ToolCallStatus.FAILED.value, 1), else_=0).label("failed"),
               zero.label("rated"), zero.label("negative"), zero.label("disliked_calls"))
        .join(Run, Run.id == ToolCall.run_pk).where(*scope))
    per_call = (
        select(Run.workspace_id, day.label("day"), ToolCall.tool_name,
               zero.label("calls"), zero.label("failed"), func.count().label("rated"),
               func.sum(NEGATIVE_RATING).label("negative"),
               case((func.sum(NEGATIVE_RATING) > 0, 1), else_=0).label("disliked_calls"))
        .select_from(Feedback).join(ToolCall, RATED_CALL).join(Run, Run.id == Feedback.run_pk)
        .where(*scope, TOOL_CALL_RATING)
        .group_by(Run.workspace_id, day, ToolCall.tool_name, ToolCall.id))
    both = union_all(calls, per_call).subquery()
    session.execute(ToolDayCount.__table__.insert().from_select(
        ["workspace_id", "day", "tool_name", *TOOL_COUNTERS],
        select(both.c.workspace_id, both.c.day, both.c.tool_name,
               *(func.sum(both.c[name]) for name in TOOL_COUNTERS))
        .group_by(both.c.workspace_id, both.c.day, both.c.tool_name)))


def _insert_triage_rows(session: Session, workspace_id: int | None) -> None:
    """The triage roll-ups: one INSERT ... SELECT counting the items per workspace, state
    and UTC day they were opened."""
    day = day_sql(session, TriageItem.created_at)
    scope = [] if workspace_id is None else [TriageItem.workspace_id == workspace_id]
    session.execute(TriageDayCount.__table__.insert().from_select(
        ["workspace_id", "state", "day", "items"],
        select(TriageItem.workspace_id, TriageItem.state, day, func.count()).where(*scope)
        .group_by(TriageItem.workspace_id, TriageItem.state, day)))
