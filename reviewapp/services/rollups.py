"""The dashboard's roll-ups, kept at write time (SPEC 8, issue 18; models/rollups.py).

**The day rule** (one place): a run's day is the UTC calendar day of its ``started_at``
(the agent's clock) or, when the agent sent none, of ``created_at`` (when it was
stored); its tool calls and their ratings count on the run's day. The workspace's time
zone setting is not used: days are UTC. ``run_time`` / ``run_day`` are the rule in SQL
and in Python.

**What is counted** per workspace and day: runs by ``kind``, ``status``, ``verdict``,
``score_band`` and ``verifier`` (``DIMENSIONS``), and per tool its calls, failed calls,
ratings, negative ratings and calls with a negative rating; triage items per state by
the UTC day they were opened (``TriageDayCount``, the dashboard's backlog).

**How they are kept**: a service that is about to change a run, its calls or its calls'
ratings calls ``track`` (after taking the run's lock, before writing) with the parts it
changes (``Part``); the state of those parts is read then, and again when the session
commits, and the difference goes to the roll-ups as deltas
(``INSERT ... ON CONFLICT DO UPDATE SET n = n + excluded.n``, safe under concurrency on
SQLite and PostgreSQL, written last and in key order so writers never deadlock on
them). Whatever path changed the values, and however often, the commit writes exactly
the net change; a run that was deleted counts as nothing. The tool-event hot path adds
its known deltas directly (``add_tool_calls``) instead of reading twice; so do the
triage services, which know an item's state before and after its versioned or locked
update (``move_triage_item``). A rollback drops everything pending.
``rollups_rebuild.rebuild`` recomputes everything from the base tables (``flask
dashboard rebuild``).
"""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import String, bindparam, case, cast, event, func, literal, select
from sqlalchemy.orm import Session, SessionTransaction

from ..models import (
    Feedback,
    Run,
    RunDayCount,
    TargetType,
    ToolCall,
    ToolCallStatus,
    ToolDayCount,
    TriageDayCount,
    TriageItem,
)
from ..queries import insert_for

NO_VALUE = ""  # the stored value of a dimension the run has no value for


def run_time() -> Any:
    """SQL: the time that decides a run's day, ``coalesce(started_at, created_at)``."""
    return func.coalesce(Run.started_at, Run.created_at)


def run_day(started_at: datetime | None, created_at: datetime) -> date:
    """The run's UTC day from its ``started_at`` (or, when ``None``, ``created_at``);
    naive values are UTC."""
    when = started_at if started_at is not None else created_at
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).date()


def day_sql(session: Session, column: Any) -> Any:
    """SQL: the UTC day (a ``DATE``) of a timestamp expression, as the roll-ups store it."""
    if session.get_bind().dialect.name == "postgresql":
        return cast(func.timezone("UTC", column), RunDayCount.day.type)
    return func.date(column)


def score_band(score: int | None) -> str:
    """The histogram band of an evidence score: ``"0"`` for 0-9 ... ``"9"`` for 90-100
    (scores outside 0-100 go to the nearest band); ``""`` when unscored."""
    if score is None:
        return NO_VALUE
    return str(max(0, min(9, int(score) // 10)))


def _score_band_sql() -> Any:
    # The same bands in SQL (integer division truncates; negatives land in "0").
    score = Run.evidence_score
    return case((score.is_(None), literal(NO_VALUE)), (score >= 90, literal("9")),
                (score < 10, literal("0")), else_=cast(score // 10, String))


# dimension -> (the value of a run's row in Python, the same in SQL)
DIMENSIONS: dict[str, tuple[Callable[[Any], str], Callable[[], Any]]] = {
    "kind": (lambda r: r.kind or NO_VALUE, lambda: func.coalesce(Run.kind, NO_VALUE)),
    "status": (lambda r: r.status or NO_VALUE, lambda: func.coalesce(Run.status, NO_VALUE)),
    "verdict": (lambda r: r.feedback or NO_VALUE, lambda: func.coalesce(Run.feedback, NO_VALUE)),
    "score_band": (lambda r: score_band(r.evidence_score), _score_band_sql),
    "verifier": (lambda r: r.verifier_verdict or NO_VALUE,
                 lambda: func.coalesce(Run.verifier_verdict, NO_VALUE)),
}


class Part(enum.Flag):
    """What a write changes: the run's own values, its tool calls, its calls' ratings.
    ``TRIAGE`` (the run's triage item) is not in ``ALL``: the triage services report
    their moves (``move_triage_item``); it is for a transaction that removes runs (their
    items go by cascade), never with ``move_triage_item`` for the same run."""

    RUN = enum.auto()
    TOOLS = enum.auto()
    TOOL_FEEDBACK = enum.auto()
    ALL = RUN | TOOLS | TOOL_FEEDBACK
    TRIAGE = enum.auto()


# (workspace, dimension, day, value) -> runs; (workspace, day, tool) -> counters;
# (workspace, day, state) -> triage items
RunKey = tuple[int, str, date, str]
ToolKey = tuple[int, date, str]
TriageKey = tuple[int, date, str]
TOOL_COUNTERS = ("calls", "failed", "rated", "negative", "disliked_calls")


@dataclass
class _Snapshot:
    """A run's counted state (``None`` fields: not read, or the run does not exist)."""

    parts: Part
    run: Any = None  # the row of _RUN_COLUMNS
    tools: dict[str, tuple[int, int]] = field(default_factory=dict)  # calls, failed
    feedback: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    triage: tuple[str, datetime] | None = None  # its item's state and opening time

    def contribution(self, parts: Part, pending: _Pending, sign: int) -> None:
        if self.run is None:
            return
        runs, tools = pending.runs, pending.tools
        ws, day = self.run.workspace_id, run_day(self.run.started_at, self.run.created_at)
        if Part.TRIAGE in parts and self.triage is not None:
            pending.triage[(ws, run_day(None, self.triage[1]), self.triage[0])] += sign
        if Part.RUN in parts:
            for dimension, (value_of, _) in DIMENSIONS.items():
                runs[(ws, dimension, day, value_of(self.run))] += sign
        if Part.TOOLS in parts:
            for tool, (calls, failed) in self.tools.items():
                counters = tools[(ws, day, tool)]
                counters[0] += sign * calls
                counters[1] += sign * failed
        if Part.TOOL_FEEDBACK in parts:
            for tool, (rated, negative, disliked) in self.feedback.items():
                counters = tools[(ws, day, tool)]
                counters[2] += sign * rated
                counters[3] += sign * negative
                counters[4] += sign * disliked


_RUN_COLUMNS = (Run.id, Run.workspace_id, Run.started_at, Run.created_at, Run.kind,
                Run.status, Run.feedback, Run.evidence_score, Run.verifier_verdict)
_FAILED = func.sum(case((ToolCall.status == ToolCallStatus.FAILED.value, 1), else_=0))
NEGATIVE_RATING = case((Feedback.rating == "negative", 1), else_=0)
# A rating of a tool call; the call's ratings: its run is the rating's target_id, its id
# the subject_key.
TOOL_CALL_RATING = Feedback.target_type == TargetType.TOOL_CALL.value
RATED_CALL = ((ToolCall.run_pk == Feedback.target_id) & (ToolCall.id == Feedback.subject_key)
              & (ToolCall.workspace_id == Feedback.workspace_id))


# The statements of ``_read``, built once (building them cost more than running them on
# the import path); the run pks travel as one expanding parameter.
_PKS = bindparam("pks", expanding=True)
_READ_RUNS = select(*_RUN_COLUMNS).where(Run.id.in_(_PKS))
_READ_RUNS_LOCKED = _READ_RUNS.with_for_update(key_share=True)
_READ_TOOLS = (select(ToolCall.run_pk, ToolCall.tool_name, func.count(), _FAILED)
               .where(ToolCall.run_pk.in_(_PKS)).group_by(ToolCall.run_pk, ToolCall.tool_name))
_PER_RATED_CALL = (
    select(Feedback.run_pk, ToolCall.tool_name, func.count().label("rated"),
           func.sum(NEGATIVE_RATING).label("negative"))
    .join(ToolCall, RATED_CALL)
    .where(Feedback.run_pk.in_(_PKS), TOOL_CALL_RATING)
    .group_by(Feedback.run_pk, ToolCall.tool_name, ToolCall.id).subquery())
_READ_FEEDBACK = (
    select(_PER_RATED_CALL.c.run_pk, _PER_RATED_CALL.c.tool_name, func.sum(_PER_RATED_CALL.c.rated),
           func.sum(_PER_RATED_CALL.c.negative),
           func.sum(case((_PER_RATED_CALL.c.negative > 0, 1), else_=0)))
    .group_by(_PER_RATED_CALL.c.run_pk, _PER_RATED_CALL.c.tool_name))
_READ_TRIAGE = select(TriageItem.run_pk, TriageItem.state, TriageItem.created_at).where(
    TriageItem.run_pk.in_(_PKS))


def _read(session: Session, pks: list[int], parts: Part, *, lock: bool = False
          ) -> dict[int, _Snapshot]:
    """The counted state of runs ``pks`` (absent runs: an empty snapshot). Read on the
    session's connection without autoflush: pending ORM changes are not yet "before"."""
    conn = session.connection()
    snaps = {pk: _Snapshot(parts) for pk in pks}
    params = {"pks": list(pks)}
    for row in conn.execute(_READ_RUNS_LOCKED if lock else _READ_RUNS, params):
        snaps[row.id].run = row
    if Part.TOOLS in parts:
        for pk, tool, calls, failed in conn.execute(_READ_TOOLS, params):
            snaps[pk].tools[tool] = (int(calls), int(failed or 0))
    if Part.TOOL_FEEDBACK in parts:
        for pk, tool, rated, negative, disliked in conn.execute(_READ_FEEDBACK, params):
            snaps[pk].feedback[tool] = (int(rated), int(negative or 0), int(disliked or 0))
    if Part.TRIAGE in parts:
        for pk, state, created_at in conn.execute(_READ_TRIAGE, params):
            snaps[pk].triage = (state, created_at)
    return snaps


@dataclass
class _Pending:
    """What one session's transaction has to bring to the roll-ups at commit."""

    before: dict[int, _Snapshot] = field(default_factory=dict)
    runs: dict[RunKey, int] = field(default_factory=lambda: defaultdict(int))
    tools: dict[ToolKey, list[int]] = field(
        default_factory=lambda: defaultdict(lambda: [0] * len(TOOL_COUNTERS)))
    triage: dict[TriageKey, int] = field(default_factory=lambda: defaultdict(int))


_INFO_KEY = "dashboard_rollups"


def _pending(session: Session) -> _Pending:
    pending = session.info.get(_INFO_KEY)
    if pending is None:
        pending = session.info[_INFO_KEY] = _Pending()
    return pending


def track(session: Session, run_pks: Iterable[int], parts: Part = Part.ALL, *,
          created: bool = False, lock: bool = False) -> None:
    """Remember the counted ``parts`` of runs ``run_pks`` as they are now; at commit the
    roll-ups get the difference to the state then. Call it before the write (after the
    run's lock: the before and after states must not interleave with another writer's),
    once or more per transaction (a part already tracked keeps its first state).
    ``created``: the runs did not exist before this transaction (their "before" is
    nothing). ``lock``: take the runs' lock (PostgreSQL ``FOR NO KEY UPDATE``) with the
    read. No commit."""
    pending = _pending(session)
    missing: dict[Part, list[int]] = defaultdict(list)
    for pk in dict.fromkeys(run_pks):
        known = pending.before.get(pk)
        wanted = parts if known is None else parts & ~known.parts
        if wanted:
            missing[wanted].append(pk)
    for wanted, pks in missing.items():
        snaps = {pk: _Snapshot(wanted) for pk in pks} if created else \
            _read(session, pks, wanted, lock=lock)
        for pk, snap in snaps.items():
            known = pending.before.get(pk)
            if known is None:
                pending.before[pk] = snap
                continue
            known.parts |= wanted
            if snap.run is not None:
                known.run = known.run or snap.run
            known.tools.update(snap.tools)
            known.feedback.update(snap.feedback)
            known.triage = known.triage or snap.triage


def add_tool_calls(session: Session, workspace_id: int, day: date, tool_name: str,
                   calls: int, failed: int) -> None:
    """Add known deltas of one tool's ``calls`` and ``failed`` calls on ``day`` (the
    tool-event path, which knows them without reading). Never for a run whose ``TOOLS``
    are tracked in the same transaction (they would count twice). No commit."""
    counters = _pending(session).tools[(workspace_id, day, tool_name)]
    counters[0] += calls
    counters[1] += failed


def move_triage_item(session: Session, workspace_id: int, opened_at: datetime,
                     before: str | None, after: str | None) -> None:
    """Count a triage item of ``workspace_id`` opened at ``opened_at`` (its
    ``created_at``; its UTC day is the roll-up's day) as moved from state ``before`` to
    ``after`` (``None``: it did not exist / no longer exists). The caller knows both
    states for sure: the item is locked, or its update matched the version ``before``
    was read at. Nothing when they are equal. No commit."""
    if before == after:
        return
    day, triage = run_day(None, opened_at), _pending(session).triage
    if before is not None:
        triage[(workspace_id, day, before)] -= 1
    if after is not None:
        triage[(workspace_id, day, after)] += 1


def _settle(session: Session) -> None:
    """Before commit: read the tracked runs again and write every delta."""
    pending: _Pending | None = session.info.get(_INFO_KEY)
    if pending is None:
        return
    if pending.before:
        session.flush()
        by_parts: dict[Part, list[int]] = defaultdict(list)
        for pk, snap in pending.before.items():
            by_parts[snap.parts].append(pk)
        for parts, pks in by_parts.items():
            after = _read(session, pks, parts)
            for pk in pks:
                pending.before[pk].contribution(parts, pending, -1)
                after[pk].contribution(parts, pending, +1)
        pending.before.clear()
    write_deltas(session, pending.runs, pending.tools, pending.triage)
    for deltas in (pending.runs, pending.tools, pending.triage):
        deltas.clear()


def write_deltas(session: Session, runs: Mapping[RunKey, int],
                 tools: Mapping[ToolKey, list[int]],
                 triage: Mapping[TriageKey, int] | None = None) -> None:
    """Add ``runs`` / ``tools`` / ``triage`` deltas to the roll-ups (zero deltas
    skipped), in key order, with ``INSERT ... ON CONFLICT DO UPDATE SET n = n +
    excluded.n``. No commit."""
    run_rows = [{"workspace_id": k[0], "dimension": k[1], "day": k[2], "value": k[3], "runs": n}
                for k, n in sorted(runs.items()) if n]
    tool_rows = [{"workspace_id": k[0], "day": k[1], "tool_name": k[2],
                  **dict(zip(TOOL_COUNTERS, c, strict=True))}
                 for k, c in sorted(tools.items()) if any(c)]
    triage_rows = [{"workspace_id": k[0], "day": k[1], "state": k[2], "items": n}
                   for k, n in sorted((triage or {}).items()) if n]
    conn = session.connection()
    if run_rows:
        conn.execute(_upsert(session, RunDayCount.__table__, ("runs",)), run_rows)
    if tool_rows:
        conn.execute(_upsert(session, ToolDayCount.__table__, TOOL_COUNTERS), tool_rows)
    if triage_rows:
        conn.execute(_upsert(session, TriageDayCount.__table__, ("items",)), triage_rows)


# Built once per (dialect, table): building the statement cost more than running it on
# the tool-event hot path.
_UPSERTS: dict[tuple[str, str], Any] = {}


def _upsert(session: Session, table: Any, counters: tuple[str, ...]) -> Any:
    key = (session.get_bind().dialect.name, table.name)
    if key not in _UPSERTS:
        stmt = insert_for(session, table)
        _UPSERTS[key] = stmt.on_conflict_do_update(
            index_elements=[c.name for c in table.primary_key.columns],
            set_={name: table.c[name] + stmt.excluded[name] for name in counters})
    return _UPSERTS[key]


def _before_commit(session: Session) -> None:
    if session.info.get(_INFO_KEY) is not None:
        _settle(session)


def _after_transaction_end(session: Session, transaction: SessionTransaction) -> None:
    if transaction.parent is None:  # the outermost transaction: committed or rolled back
        session.info.pop(_INFO_KEY, None)


event.listen(Session, "before_commit", _before_commit)
event.listen(Session, "after_transaction_end", _after_transaction_end)


def discard_pending(session: Session) -> None:
    """Forget what the session's transaction would add at commit (a rebuild replaces
    the counts it would have changed)."""
    session.info.pop(_INFO_KEY, None)
