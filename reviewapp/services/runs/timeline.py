"""Runs, the tool-call timeline of a run page (its live fragment polls it) and one tool
call opened from it (SPEC 8, issue 19)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ...actors import Actor, Role
from ...domain.timeline import Bar, CallTiming, Layout
from ...domain.timeline import layout as timeline_layout
from ...errors import Forbidden
from ...models import DiagnosticStep, Run, RunStatus, TargetType, ToolCall, Workspace
from ...queries import scope_to_actor
from ._loading import load_run, ratings_of
from .targets import TargetState, reason_choices, tool_call_name, workspace_reasons

TOOL_CALL = TargetType.TOOL_CALL.value

# The timeline reads only these columns; arguments, results and errors (up to 2,000
# characters each) are read one call at a time, when a reviewer opens it (get_tool_call).
_TIMELINE_COLUMNS = ("id", "tool_name", "status", "started_at", "completed_at", "duration_ms",
                     "compensated", "match_level", "hit_count", "step_pk", "updated_at")
# A failed row shows the first line of its error without being opened (issue 19): only
# the error's head is read, so the timeline's query stays small.
_ERROR_HEAD_CHARS = 400
ERROR_LINE_CHARS = 160


@dataclass(frozen=True, slots=True)
class TimelineCall:
    """The facts of one tool call the timeline shows (no arguments / result / error)."""

    id: str
    tool_name: str
    status: str
    started_at: datetime | None
    completed_at: datetime | None
    duration_ms: int | None
    compensated: bool
    match_level: str | None
    hit_count: int | None
    step_pk: int | None
    updated_at: datetime
    error_head: str | None = None

    @property
    def error_line(self) -> str | None:
        """The first non-blank line of the error, at most ``ERROR_LINE_CHARS``
        characters (then "…"), or None. Escaped where it is rendered."""
        for line in (self.error_head or "").splitlines():
            if line.strip():
                line = line.strip()
                return line if len(line) <= ERROR_LINE_CHARS else line[:ERROR_LINE_CHARS - 1] + "…"
        return None


@dataclass(frozen=True)
class TimelineRow:
    """One call on the timeline: its facts, its bar, the label of its step."""

    call: TimelineCall
    bar: Bar
    step_label: str | None


@dataclass(frozen=True)
class Timeline:
    """The tool-call timeline of one run. ``live`` while the run is RUNNING (the fragment
    then polls itself); ``version`` changes whenever a call or the run status changes.
    ``my_feedback`` / ``summary`` map a call id to the viewer's own rating of it and
    to every reviewer's counts; ``reasons`` / ``reason_choices`` as ``TargetState``."""

    run_pk: int
    status: str
    live: bool
    rows: list[TimelineRow]
    layout: Layout
    version: str
    my_feedback: Mapping[str, Any] = field(default_factory=dict)
    summary: Mapping[str, Any] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    reason_choices: tuple[tuple[str, str], ...] = ()
    positive_reason_choices: tuple[tuple[str, str], ...] = ()

    def target(self, row: TimelineRow) -> TargetState:
        """The thumbs state of the call of ``row``."""
        call = row.call
        return TargetState(TOOL_CALL, self.run_pk, call.id, self.run_pk,
                           self.my_feedback.get(call.id), self.summary.get(call.id),
                           self.reasons, self.reason_choices, self.positive_reason_choices,
                           name=tool_call_name(call.tool_name))


def build_timeline(session: Session, run: Run, steps: Sequence[DiagnosticStep], workspace: Workspace,
              mine: Mapping[tuple[str, int, str], Any],
              summary: Mapping[tuple[str, int, str], Any]) -> Timeline:
    # Plain column rows, not ORM objects: a 500-call run hydrates ten times faster.
    calls = [TimelineCall(*row) for row in session.execute(
        select(*(getattr(ToolCall, c) for c in _TIMELINE_COLUMNS),
               func.substr(ToolCall.error_message, 1, _ERROR_HEAD_CHARS))
        .where(ToolCall.run_pk == run.id, ToolCall.workspace_id == run.workspace_id)
        .order_by(ToolCall.started_at.is_(None), ToolCall.started_at, ToolCall.ordinal, ToolCall.id)
    )]
    step_labels = {s.id: f"{s.ordinal}. {s.name}" for s in steps}
    placed = timeline_layout([CallTiming(c.started_at, c.completed_at) for c in calls],
                             until=run.finished_at)
    rows = [TimelineRow(c, bar, step_labels.get(c.step_pk) if c.step_pk else None)
            for c, bar in zip(calls, placed.bars)]
    latest = max((c.updated_at for c in calls), default=None)
    version = f"{run.status}-{len(calls)}-{latest.timestamp() if latest else 0}"
    return Timeline(
        run.id, run.status, run.status == RunStatus.RUNNING.value, rows, placed, version,
        my_feedback={key[2]: f for key, f in mine.items() if key[0] == TOOL_CALL},
        summary={key[2]: s for key, s in summary.items() if key[0] == TOOL_CALL},
        reasons=workspace_reasons(workspace), reason_choices=reason_choices(workspace),
        positive_reason_choices=reason_choices(workspace, "positive"))


def get_timeline(session: Session, actor: Actor, run_pk: int) -> Timeline:
    """The tool-call timeline of run ``run_pk`` alone (the live fragment polls it).

    Raises ``Forbidden`` for a missing or foreign run, or an actor that is not a user.
    """
    run, _, workspace, blind, _, _ = load_run(session, actor, run_pk)
    mine, summary = ratings_of(session, actor, run, blind)  # Forbidden for a token
    steps = list(session.scalars(
        select(DiagnosticStep).where(DiagnosticStep.run_pk == run.id)
        .order_by(DiagnosticStep.ordinal)))
    return build_timeline(session, run, steps, workspace, mine, summary)


def get_tool_call(session: Session, actor: Actor, run_pk: int, call_id: str) -> ToolCall:
    """One tool call of run ``run_pk`` with its arguments, result and error (the
    timeline loads these only when a call is opened). Raises ``Forbidden`` for a missing
    or foreign run or call."""
    stmt = scope_to_actor(
        select(ToolCall).join(Run, Run.id == ToolCall.run_pk)
        .where(ToolCall.run_pk == run_pk, ToolCall.id == call_id,
               ToolCall.workspace_id == Run.workspace_id),
        actor, Run.workspace_id, Role.REVIEWER,
    )
    call = session.scalars(stmt).one_or_none()
    if call is None:
        raise Forbidden()
    return call
