"""The lifecycle of one call row (started / completed / failed, compensation, replays,
late facts) applied in memory to a batch's rows, then written set-based (SPEC 4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from ...domain.times import duration_ms
from ...models import DiagnosticStep, Run, ToolCall, ToolCallStatus
from ...models.base import utcnow
from .. import rollups
from ..run_text import call_text_of
from ._columns import TERMINAL, parent_columns
from ._event import Event
from .runtime_log import log_row

_TOOL_CALL = ToolCall.__table__
_MUTABLE = ("tool_name", "status", "arguments", "result_summary", "error_message", "started_at",
            "completed_at", "duration_ms", "compensated", "step_pk", "match_level", "hit_count",
            "evidence_refs", "arguments_length", "result_length", "error_length", "updated_at")
_RUN = Run.__table__
# Statements built once: on the hot path, building them per request cost more than
# running them.
_RUN_COLUMNS = select(
    _RUN.c.id, _RUN.c.run_id, _RUN.c.kind, _RUN.c.diagnosis_session_id, _RUN.c.status,
    _RUN.c.tool_call_count, _RUN.c.started_at, _RUN.c.created_at,
).where(_RUN.c.workspace_id == bindparam("workspace_id"))
# The runs are locked (PostgreSQL ``FOR NO KEY UPDATE``, in id order; SQLite's writers are
# serialised by ``BEGIN IMMEDIATE`` and it has no row locks) before their calls are read:
# every writer of a run's calls (events, run upserts, finish) holds this lock, so two
# requests never both see a call as ``started`` and both finalise it, and the counters
# and the ordinals are computed from committed rows.
_SELECT_RUNS = _RUN_COLUMNS.where(
    _RUN.c.run_id.in_(bindparam("run_ids", expanding=True))
).order_by(_RUN.c.id).with_for_update(key_share=True)
# Single-value variants: a lone event (the common live case) skips IN-list expansion.
_SELECT_RUN_ONE = _RUN_COLUMNS.where(
    _RUN.c.run_id == bindparam("run_id")).with_for_update(key_share=True)
_SELECT_ROWS = select(_TOOL_CALL).where(
    _TOOL_CALL.c.workspace_id == bindparam("workspace_id"),
    _TOOL_CALL.c.id.in_(bindparam("ids", expanding=True)))
_SELECT_ROW_ONE = select(_TOOL_CALL).where(
    _TOOL_CALL.c.workspace_id == bindparam("workspace_id"), _TOOL_CALL.c.id == bindparam("id"))
BUMP_COUNTERS = _RUN.update().where(_RUN.c.id == bindparam("pk")).values(
    tool_call_count=_RUN.c.tool_call_count + bindparam("added"),
    failed_tool_call_count=_RUN.c.failed_tool_call_count + bindparam("failed"),
    updated_at=bindparam("now"),
)
_UPDATE_ROW = (
    _TOOL_CALL.update()
    .where(_TOOL_CALL.c.workspace_id == bindparam("key_workspace_id"),
           _TOOL_CALL.c.id == bindparam("key_id"))
    .values({name: bindparam(name) for name in _MUTABLE})
)


class Batch:
    """The state one batch of events works on, read with a few set-based queries and
    written with one multi-row INSERT and one multi-row UPDATE (SQLAlchemy Core: the
    event path is the hot path of ingestion; see benchmarks/ingest.py).

    ``runs``: the batch's runs of the workspace; ``rows``: the call rows the batch may
    touch, as column dicts; ``new`` / ``dirty``: rows to insert / update; ``added`` /
    ``failed``: per run pk, calls created and calls that became ``failed``.
    """

    def __init__(self, session: Session, workspace_id: int, events: Sequence[Event]) -> None:
        self.session = session
        self.conn = session.connection()
        self.workspace_id = workspace_id
        run_ids = sorted({ev.run_id for ev in events})
        call_ids = sorted({ev.id for ev in events})
        found_runs = self.conn.execute(
            _SELECT_RUN_ONE, {"workspace_id": workspace_id, "run_id": run_ids[0]}
        ) if len(run_ids) == 1 else self.conn.execute(
            _SELECT_RUNS, {"workspace_id": workspace_id, "run_ids": run_ids})
        self.runs = {r.run_id: r for r in found_runs}
        found_rows = self.conn.execute(
            _SELECT_ROW_ONE, {"workspace_id": workspace_id, "id": call_ids[0]}
        ) if len(call_ids) == 1 else self.conn.execute(
            _SELECT_ROWS, {"workspace_id": workspace_id, "ids": call_ids})
        self.rows: dict[str, dict[str, Any]] = {r["id"]: dict(r) for r in found_rows.mappings()}
        # (tool_name, status) as stored, for the dashboard's roll-ups (count_calls)
        self.stored = {call_id: (r["tool_name"], r["status"]) for call_id, r in self.rows.items()}
        # the searched text as stored, so only calls whose text changes are re-indexed
        self.texts = {call_id: call_text_of(r) for call_id, r in self.rows.items()}
        self.new: dict[str, dict[str, Any]] = {}
        self.dirty: set[str] = set()
        self.added: dict[int, int] = {}
        self.failed: dict[int, int] = {}
        self._steps: dict[int, dict[str, int]] = {}

    def next_ordinal(self, run: Any) -> int:
        # Call order for sources without clocks: after the run's existing calls.
        self.added[run.id] = self.added.get(run.id, 0) + 1
        return run.tool_call_count + self.added[run.id]

    def step_pk(self, run: Any, step_id: str | None) -> int | None:
        if not step_id:
            return None
        if run.id not in self._steps:
            # A Result has keys(): dict(result) would read it as a mapping, hence the loop.
            self._steps[run.id] = {  # noqa: C416
                step: pk for step, pk in self.session.execute(
                    select(DiagnosticStep.step_id, DiagnosticStep.id).where(
                        DiagnosticStep.run_pk == run.id, DiagnosticStep.step_id.is_not(None)))
            }
        return self._steps[run.id].get(step_id)

    def create(self, row: dict[str, Any]) -> None:
        self.rows[row["id"]] = self.new[row["id"]] = row
        if row["status"] == ToolCallStatus.FAILED.value:
            self.failed[row["run_pk"]] = self.failed.get(row["run_pk"], 0) + 1

    def touch(self, row: dict[str, Any], was: str) -> None:
        row["updated_at"] = utcnow()
        if row["id"] not in self.new:
            self.dirty.add(row["id"])
        if row["status"] == ToolCallStatus.FAILED.value and was != row["status"]:
            self.failed[row["run_pk"]] = self.failed.get(row["run_pk"], 0) + 1

    def count_calls(self) -> None:
        """Give the dashboard's roll-ups the calls' net change before ``write``: a created
        call counts on its run's day, a changed one moves from what it was to what it is
        (``rollups.add_tool_calls``); a call renamed from ``unknown`` takes its ratings
        with it (``rollups.track``)."""
        runs = {run.id: run for run in self.runs.values()}
        renamed: set[int] = set()
        failed = ToolCallStatus.FAILED.value
        for call_id in [*self.new, *sorted(self.dirty)]:
            row = self.rows[call_id]
            run = runs[row["run_pk"]]
            day = rollups.run_day(run.started_at, run.created_at)
            was = self.stored.get(call_id)
            if was == (row["tool_name"], row["status"]):
                continue
            if was is not None:
                renamed.update([run.id] if was[0] != row["tool_name"] else [])
                rollups.add_tool_calls(self.session, self.workspace_id, day, was[0], -1,
                                       -int(was[1] == failed))
            rollups.add_tool_calls(self.session, self.workspace_id, day, row["tool_name"], 1,
                                   int(row["status"] == failed))
        if renamed:
            rollups.track(self.session, sorted(renamed), rollups.Part.TOOL_FEEDBACK)

    def text_changed(self) -> list[dict[str, Any]]:
        """The rows created, and the rows whose searched text (``run_text.
        CALL_TEXT_COLUMNS``) differs from what was stored: the ones to re-index."""
        return [*self.new.values(), *(self.rows[call_id] for call_id in sorted(self.dirty)
                                      if self.texts[call_id] != call_text_of(self.rows[call_id]))]

    def write(self) -> None:
        self.count_calls()
        if self.new:
            self.conn.execute(_TOOL_CALL.insert(), list(self.new.values()))
        if self.dirty:
            self.conn.execute(_UPDATE_ROW, [
                {"key_workspace_id": self.workspace_id, "key_id": call_id,
                 **{name: self.rows[call_id][name] for name in _MUTABLE}}
                for call_id in sorted(self.dirty)
            ])


def _new_row(run: Any, ev: Event, batch: Batch, *, status: str, compensated: bool) -> dict[str, Any]:
    now = utcnow()
    row: dict[str, Any] = {
        "workspace_id": batch.workspace_id, "id": ev.id, "run_pk": run.id, **parent_columns(run),
        "step_pk": batch.step_pk(run, ev.step_id), "ordinal": batch.next_ordinal(run),
        "tool_name": ev.tool_name or "unknown", "status": status,
        "arguments": ev.clean_arguments, "result_summary": None, "error_message": None,
        "started_at": ev.timestamp, "completed_at": None, "duration_ms": None,
        "compensated": compensated, "match_level": None, "hit_count": None, "evidence_refs": None,
        "arguments_length": (ev.lengths or {}).get("arguments_length"),
        "result_length": None, "error_length": None,
        "created_at": now, "updated_at": now,
    }
    row.update(ev.retrieval)
    return row


def _order_warning(row: Mapping[str, Any], event: str) -> str:
    """The warning for a row whose end is before its start ("" when in order): SPEC 4
    keeps the duration at 0 ms and drops nothing received, so the agent hears of it."""
    start, end = row["started_at"], row["completed_at"]
    if start is None or end is None or end >= start:
        return ""
    if event == "started":
        return f"started at {start.isoformat()} is after the end {end.isoformat()}: duration recorded as 0 ms"
    return f"{event} at {end.isoformat()} is before the start {start.isoformat()}: duration recorded as 0 ms"


def _finalise_row(row: dict[str, Any], ev: Event) -> None:
    lengths = ev.lengths or {}
    row["status"] = ev.event
    row["result_summary"] = ev.result_summary
    row["result_length"] = lengths.get("result_length")
    row["error_message"] = (ev.error_summary or "failed") if ev.event == "failed" else None
    row["error_length"] = lengths.get("error_length") if ev.error_summary and ev.event == "failed" else None
    row["completed_at"] = ev.timestamp
    row["duration_ms"] = duration_ms(row["started_at"], ev.timestamp)



def apply_event(batch: Batch, run: Any, ev: Event) -> tuple[str, str, str]:
    """Apply one event to ``run`` (already in the actor's workspace) in memory.
    Returns (result, message, warning)."""
    result, message = _apply_event(batch, run, ev)
    row = batch.rows.get(ev.id)
    warning = ""
    if result == "updated" and row is not None and ev.event in ("started", *TERMINAL):
        warning = _order_warning(row, ev.event)
    return result, message, warning


def _apply_event(batch: Batch, run: Any, ev: Event) -> tuple[str, str]:
    row = batch.rows.get(ev.id)
    if row is not None and row["run_pk"] != run.id:
        return "rejected", "this call id belongs to another run"
    if ev.event == "started":
        return _apply_started(batch, run, ev, row)
    return _apply_terminal(batch, run, ev, row)


def _fill_arguments(row: dict[str, Any], ev: Event) -> None:
    # Late facts win over stand-ins (SPEC 4): arguments a compensated row lacked.
    if row["arguments"] is None and ev.arguments is not None:
        row["arguments"] = ev.clean_arguments
        row["arguments_length"] = (ev.lengths or {}).get("arguments_length")


def _apply_started(batch: Batch, run: Any, ev: Event, row: dict[str, Any] | None) -> tuple[str, str]:
    if row is None:
        row = _new_row(run, ev, batch, status=ToolCallStatus.STARTED.value, compensated=False)
        batch.create(row)
        log_row(row, ev.event, None)
        return "created", ""
    if not row["compensated"]:
        return "unchanged", "replayed started event"
    # Late facts win over stand-ins (SPEC 4): the real start, the real arguments.
    if row["tool_name"] == "unknown" and ev.tool_name:
        row["tool_name"] = ev.tool_name
    _fill_arguments(row, ev)
    if row["step_pk"] is None:
        row["step_pk"] = batch.step_pk(run, ev.step_id)
    batch.touch(row, row["status"])
    if not ev.timestamp_given:
        # Receipt time is not the start of a call that already ended: invent nothing.
        return "updated", "late started event without timestamp: start time still unknown"
    row["started_at"] = ev.timestamp
    row["duration_ms"] = duration_ms(row["started_at"], row["completed_at"])
    row["compensated"] = False
    log_row(row, ev.event, None)
    return "updated", "late started event filled in the real start time"


def _apply_terminal(batch: Batch, run: Any, ev: Event, row: dict[str, Any] | None) -> tuple[str, str]:
    status = ev.event
    if row is None:
        row = _new_row(run, ev, batch, status=status, compensated=True)
        _finalise_row(row, ev)
        batch.create(row)
        log_row(row, ev.event, ev.error)
        return "created", "no started event: row compensated"
    if row["status"] in TERMINAL:
        if row["status"] == status:
            return "unchanged", "replayed terminal event"
        return "rejected", f"call is already {row['status']}"
    was = row["status"]
    _finalise_row(row, ev)
    row.update(ev.retrieval)
    _fill_arguments(row, ev)
    batch.touch(row, was)
    log_row(row, ev.event, ev.error)
    return "updated", ""
