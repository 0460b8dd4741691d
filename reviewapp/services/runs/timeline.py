"""Runs, the tool-call timeline of a run page (its live fragment polls it), the chunks
"Show the next" loads into it, and one tool call opened from it (SPEC 8, issues 18, 19).

The page shows the first ``FIRST_CALLS`` calls in timeline order and loads the rest
``MORE_CALLS`` at a time after the last one shown (keyset: the call's own id); a link to
a call further down (``Shown.through``) renders the timeline down to it. One statement
reads the shown calls with the counts and the time axis of all of them (window
functions over the run's calls), so a 500-call run costs what a 50-call run does.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Select, and_, bindparam, case, func, or_, select, true, type_coerce
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Session
from sqlalchemy.types import NullType

from ...actors import Actor, Role
from ...domain.timeline import Bar, CallTiming, Layout
from ...domain.timeline import layout as timeline_layout
from ...domain.workspace_settings import time_zone_of
from ...errors import Forbidden, ValidationFailed
from ...models import (
    DiagnosticStep,
    Run,
    RunStatus,
    TargetType,
    ToolCall,
    ToolCallStatus,
    Workspace,
)
from ...prepared import Prepared
from ...queries import scope_to_actor
from ._loading import load_run, ratings_of
from .targets import TargetState, reason_choices, tool_call_name, workspace_reasons

TOOL_CALL = TargetType.TOOL_CALL.value
FAILED = ToolCallStatus.FAILED.value
# How many calls the run page shows at first, and how many "Show the next" adds (issue 18:
# rendering is ~0.1 ms a row, most of a 500-call page).
FIRST_CALLS = 50
MORE_CALLS = 200
_MAX_CALL_ID = 160  # ToolCall.id's length

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
    """One call on the timeline: its facts, its bar, the label of its step and its
    place in timeline order (``index``, 1-based)."""

    call: TimelineCall
    bar: Bar
    step_label: str | None
    index: int = 0


@dataclass(frozen=True)
class Shown:
    """Which calls a run page shows (issue 18): the first ``FIRST_CALLS``, and further
    down to the call ``through`` (a link to one call: its row is on the page), the chunk
    of ``MORE_CALLS`` after the call ``after`` (the plain-link "Show the next"), or
    ``every`` call. An id that is no call of the run widens nothing."""

    through: str | None = None
    after: str | None = None
    every: bool = False

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> Shown:
        """From a query string: ``call`` (through), ``calls_after``, ``calls=all``.
        Raises ``ValidationFailed`` naming the field for an id over 160 characters or
        ``calls`` other than ``all``."""
        every = params.get("calls") or ""
        if every not in ("", "all"):
            raise ValidationFailed("calls", "must be all")
        ids = {}
        for name in ("call", "calls_after"):
            value = params.get(name) or None
            if value is not None and len(value) > _MAX_CALL_ID:
                raise ValidationFailed(name, f"a tool call id has at most {_MAX_CALL_ID} "
                                       "characters")
            ids[name] = value
        return cls(ids["call"], ids["calls_after"], every == "all")


@dataclass(frozen=True)
class Timeline:
    """The tool-call timeline of one run, or a chunk of it. ``rows`` are the calls shown
    (in timeline order; ``TimelineRow.index`` their place), ``total`` / ``failed`` count
    all the run's calls; ``next_call`` is the id of the first call not shown (``None``
    when the rest is shown), ``hidden_failed`` the ids of failed calls not shown, in
    order; ``names`` the tool name of each call the read returned (the conversation's
    links). ``live`` while the run is RUNNING (the fragment then polls itself);
    ``version`` changes whenever a call or the run status changes. ``my_feedback`` /
    ``summary`` map a call id to the viewer's own rating of it and to every reviewer's
    counts; ``reasons`` / ``reason_choices`` as ``TargetState``."""

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
    total: int = 0
    failed: int = 0
    next_call: str | None = None
    hidden_failed: tuple[str, ...] = ()
    names: Mapping[str, str] = field(default_factory=dict)
    first_calls: int = FIRST_CALLS

    @property
    def last_index(self) -> int:
        """The place of the last call shown (0 when none)."""
        return self.rows[-1].index if self.rows else 0

    @property
    def remaining(self) -> int:
        """How many calls come after the last one shown."""
        return self.total - self.last_index if self.next_call else 0

    @property
    def more(self) -> int:
        """How many calls "Show the next" adds."""
        return min(MORE_CALLS, self.remaining)

    def target(self, row: TimelineRow) -> TargetState:
        """The thumbs state of the call of ``row``."""
        call = row.call
        return TargetState(TOOL_CALL, self.run_pk, call.id, self.run_pk,
                           self.my_feedback.get(call.id), self.summary.get(call.id),
                           self.reasons, self.reason_choices, self.positive_reason_choices,
                           name=tool_call_name(call.tool_name))


@cache
def _calls_cte() -> tuple[Any, Any]:
    """Two views of the run's (``:run_pk``, ``:workspace_id``) calls: ``keys``, each
    call's id and status with its place in timeline order (``rn``); ``totals``, one row:
    the count of calls and of failed ones, the axis (earliest start; latest start or
    end, an end before its start left out, as ``domain.timeline.axis_bounds``) and the
    latest change. Both read narrow rows: SQLite's window functions buffer whole rows,
    so numbering the wide ones (error heads) cost twice as much."""
    c = ToolCall
    of_run = (c.run_pk == bindparam("run_pk"), c.workspace_id == bindparam("workspace_id"))
    order = (c.started_at.is_(None), c.started_at, c.ordinal, c.id)
    keys = select(c.id, c.status, func.row_number().over(order_by=order).label("rn")
                  ).where(*of_run).cte("timeline_keys")
    end = case((c.completed_at >= c.started_at, c.completed_at), else_=c.started_at)
    # The times come as the driver gives them (typed, each row would convert them
    # again, 60 conversions for 20 calls); ``_moment`` converts the first row's once.
    totals = select(
        func.count().label("total"),
        func.sum(case((c.status == FAILED, 1), else_=0)).label("failed_total"),
        type_coerce(func.min(c.started_at), NullType()).label("axis_start"),
        type_coerce(func.max(end), NullType()).label("axis_end"),
        type_coerce(func.max(c.updated_at), NullType()).label("latest"),
    ).where(*of_run).cte("timeline_totals")
    return keys, totals


def _place_of(keys: Any, name: str) -> Any:
    return select(keys.c.rn).where(keys.c.id == bindparam(name)).scalar_subquery()


@cache
def _statement(kind: str) -> Select[Any]:
    """Built once per kind (no construction per request): the timeline columns of the
    calls picked, with ``rn`` and the totals (``_calls_cte``). ``page``: the first
    ``:first`` calls, down to ``:through``, the ``:more`` after ``:after`` — each one
    call further, to know the next — and every failed call (the summary's "not shown
    yet"); ``page_refs``: those and the calls ``:refs`` names; ``every``: all calls; ``chunk``: the call ``:after``
    and the ``:more`` + 1 after it, and the failed calls after those (still "not shown yet")."""
    keys, totals = _calls_cte()
    c = ToolCall
    stmt = (select(*(getattr(c, name) for name in _TIMELINE_COLUMNS),
                   func.substr(c.error_message, 1, _ERROR_HEAD_CHARS).label("error_head"),
                   keys.c.rn, *totals.c)
            .select_from(keys)
            .join(c, and_(c.workspace_id == bindparam("workspace_id"), c.id == keys.c.id))
            .join(totals, true())
            .order_by(keys.c.rn))
    if kind in ("page", "page_refs"):
        after = _place_of(keys, "after")
        picked = [keys.c.rn <= bindparam("first") + 1,
                  keys.c.rn <= _place_of(keys, "through") + 1,
                  keys.c.rn <= after + bindparam("more") + 1,
                  keys.c.status == FAILED]
        if kind == "page_refs":  # an expanding IN is rendered anew at every execution
            picked.append(keys.c.id.in_(bindparam("refs", expanding=True)))
        return stmt.where(or_(*picked))
    if kind == "chunk":
        after = _place_of(keys, "after")
        return stmt.where(keys.c.rn >= after, or_(keys.c.rn <= after + bindparam("more") + 1,
                                                  keys.c.status == FAILED))
    return stmt


@cache
def _prepared(kind: str) -> Prepared:
    """``_statement(kind)`` run on the DBAPI cursor (``prepared.Prepared``): SQLAlchemy's
    execution cost about as much as the read itself (issue 18)."""
    return Prepared(_statement(kind))


def _read(session: Session, run: Run, kind: str, shown: Shown, refs: Collection[str] = ()
          ) -> list[Any]:
    params = {"run_pk": run.id, "workspace_id": run.workspace_id, "first": FIRST_CALLS,
              "more": MORE_CALLS, "through": shown.through, "after": shown.after}
    # Plain columns, nothing of a GET awaits a flush: read through the session's
    # connection without the ORM's result machinery; the ids the messages name are an
    # expanding IN, rendered anew for each execution (Prepared takes none).
    if kind == "page" and refs:
        params["refs"] = list(refs)
        return list(session.connection().execute(_statement("page_refs"), params))
    return _prepared(kind).rows(session.connection(), params)


def _bound(rows: Sequence[Any], shown: Shown) -> int:
    """The place of the last call a page shows, from the rows ``_statement`` read."""
    if shown.every:
        return len(rows)
    places = {row.id: row.rn for row in rows if row.id in (shown.through, shown.after)}
    return max(FIRST_CALLS, places.get(shown.through, 0),
               places[shown.after] + MORE_CALLS if shown.after in places else 0)


def _calls(rows: Sequence[Any], first: int, last: int) -> list[tuple[int, TimelineCall]]:
    return [(row.rn, TimelineCall(*row[:len(_TIMELINE_COLUMNS) + 1]))
            for row in rows if first <= row.rn <= last]


def build_timeline(session: Session, run: Run, steps: Sequence[DiagnosticStep],
                   workspace: Workspace, mine: Mapping[tuple[str, int, str], Any],
                   summary: Mapping[tuple[str, int, str], Any], shown: Shown | None = None,
                   refs: Collection[str] = ()) -> Timeline:
    """The timeline of ``run`` (access-checked by the caller) as a page shows it:
    the calls ``shown`` says, and the tool names of the calls ``refs`` lists. One
    statement, whatever the number of calls."""
    shown = shown or Shown()
    rows = _read(session, run, "every" if shown.every else "page", shown, refs)
    last = _bound(rows, shown)
    calls = _calls(rows, 1, last)
    return _timeline(run, steps, workspace, session.get_bind().dialect, mine, summary, rows, calls,
                     last, hidden_failed=tuple(
        row.id for row in rows if row.rn > last and row.status == FAILED))


@cache
def _moment(dialect: Dialect) -> Callable[[Any], datetime | None]:
    """How ``dialect``'s driver value of a timestamp column becomes an aware UTC
    datetime (``models.base.UTCDateTime``'s result processing)."""
    process = ToolCall.started_at.type.dialect_impl(dialect).result_processor(dialect, None)
    return process if process is not None else (lambda value: value)


def _timeline(run: Run, steps: Sequence[DiagnosticStep], workspace: Workspace, dialect: Dialect,
              mine: Mapping[tuple[str, int, str], Any], summary: Mapping[tuple[str, int, str], Any],
              rows: Sequence[Any], calls: list[tuple[int, TimelineCall]], last: int,
              hidden_failed: tuple[str, ...] = ()) -> Timeline:
    """The ``Timeline`` of ``calls`` (place, call), read in ``rows`` (``_statement``),
    whose last shown call is at place ``last``."""
    head = rows[0] if rows else None
    moment = _moment(dialect)
    step_labels = {s.id: f"{s.ordinal}. {s.name}" for s in steps}
    placed = timeline_layout([CallTiming(c.started_at, c.completed_at) for _, c in calls],
                             bounds=(moment(head.axis_start), moment(head.axis_end)) if head
                             else (None, None))
    latest = moment(head.latest) if head else None
    total = head.total if head else 0
    version = f"{run.status}-{total}-{latest.timestamp() if latest else 0}"
    return Timeline(
        run.id, run.status, run.status == RunStatus.RUNNING.value,
        [TimelineRow(c, bar, step_labels.get(c.step_pk) if c.step_pk else None, place)
         for (place, c), bar in zip(calls, placed.bars)], placed, version,
        my_feedback={key[2]: f for key, f in mine.items() if key[0] == TOOL_CALL},
        summary={key[2]: s for key, s in summary.items() if key[0] == TOOL_CALL},
        reasons=workspace_reasons(workspace), reason_choices=reason_choices(workspace),
        positive_reason_choices=reason_choices(workspace, "positive"),
        total=total, failed=int(head.failed_total or 0) if head else 0,
        next_call=next((row.id for row in rows if row.rn == last + 1), None),
        hidden_failed=hidden_failed, names={row.id: row.tool_name for row in rows})


def _timeline_reads(session: Session, actor: Actor, run_pk: int) -> tuple[Any, ...]:
    run, _, workspace, blind, *_ = load_run(session, actor, run_pk, dispute=False)
    mine, summary, _ = ratings_of(session, actor, run, blind)  # Forbidden for a token
    steps = list(session.scalars(_steps_statement(), {"run_pk": run.id}))
    return run, workspace, mine, summary, steps


@cache
def _steps_statement() -> Select[Any]:
    return (select(DiagnosticStep).where(DiagnosticStep.run_pk == bindparam("run_pk"))
            .order_by(DiagnosticStep.ordinal))


def get_timeline(session: Session, actor: Actor, run_pk: int,
                 shown: Shown | None = None) -> Timeline:
    """The tool-call timeline of run ``run_pk`` alone (the live fragment polls it,
    ``shown.through`` the last call the page shows), as ``build_timeline``.

    Raises ``Forbidden`` for a missing or foreign run, or an actor that is not a user.
    """
    run, workspace, mine, summary, steps = _timeline_reads(session, actor, run_pk)
    return build_timeline(session, run, steps, workspace, mine, summary, shown)


def get_timeline_chunk(session: Session, actor: Actor, run_pk: int, after: str) -> Timeline:
    """The next ``MORE_CALLS`` calls of run ``run_pk``'s timeline after the call
    ``after`` (keyset: "Show the next" loads them below the last call shown), with
    the same access checks as the page; ``next_call`` says whether more follow,
    ``hidden_failed`` the failed calls still below them (the page's "not shown yet").

    Raises ``Forbidden`` for a missing or foreign run, or an actor that is not a user;
    ``ValidationFailed`` (field ``after``) when ``after`` is empty or no call of the run.
    """
    run, workspace, mine, summary, steps = _timeline_reads(session, actor, run_pk)
    if not after:
        raise ValidationFailed("after", "name the last tool call shown")
    rows = _read(session, run, "chunk", Shown(after=after))
    if not rows or rows[0].id != after:
        raise ValidationFailed("after", "not a tool call of this run")
    last = rows[0].rn + MORE_CALLS
    return _timeline(run, steps, workspace, session.get_bind().dialect, mine, summary, rows,
                     _calls(rows, rows[0].rn + 1, last), last, hidden_failed=tuple(
        row.id for row in rows if row.rn > last and row.status == FAILED))


@dataclass(frozen=True)
class OpenedCall:
    """One tool call opened from the timeline: ``call`` (with its arguments, result and
    error) and ``time_zone``, the IANA zone its times read in on pages: the workspace's,
    as the run header's (``workspace_settings.time_zone_of``)."""

    call: ToolCall
    time_zone: str


def get_tool_call(session: Session, actor: Actor, run_pk: int, call_id: str) -> OpenedCall:
    """One tool call of run ``run_pk`` with its arguments, result and error (the
    timeline loads these only when a call is opened) and its workspace's time zone, in
    one statement. Raises ``Forbidden`` for a missing or foreign run or call (SPEC 2, 8)."""
    stmt = scope_to_actor(
        select(ToolCall, Workspace.settings).join(Run, Run.id == ToolCall.run_pk)
        .join(Workspace, Workspace.id == Run.workspace_id)
        .where(ToolCall.run_pk == run_pk, ToolCall.id == call_id,
               ToolCall.workspace_id == Run.workspace_id),
        actor, Run.workspace_id, Role.REVIEWER,
    )
    found = session.execute(stmt).one_or_none()
    if found is None:
        raise Forbidden()
    return OpenedCall(found[0], time_zone_of(found[1]))
