"""The tool-call audit lifecycle: started / completed / failed (SPEC 4).

Events and complete records both land here, keyed by (workspace, call id), so an event
can never touch another tenant's row. The rules:

* ``started`` creates the row; a ``started`` that arrives after the terminal event of a
  compensated row fills in the real start, recomputes the duration, clears ``compensated``.
* ``completed`` / ``failed`` finalise the same row; without a row they create and
  finalise it at once and mark it ``compensated`` (start = the terminal event's time, so
  the duration is 0 and the UI says it is not the tool's real duration).
* Replays (same id, same status) change nothing; a terminal event for a row that is
  already terminal with another status is rejected; ``duration_ms`` is never negative:
  an event whose time puts the end before the start is still applied (nothing received
  is dropped) with duration 0 ms, and its result carries a ``warning`` saying so.
* Timestamps outside the years 2000-2100 are refused (``ValidationFailed``).
* ``delta`` (streamed partial output) is accepted and never stored.
* Secrets are redacted in arguments, results and errors before anything is stored,
  then results / errors are serialised and cut to 2,000 characters.
* The runtime log holds tool name, argument keys, status, duration and error class only.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..domain.json_text import join_path
from ..domain.times import duration_ms, parse_timestamp
from ..errors import PayloadTooLarge, ValidationFailed
from ..models import DiagnosticStep, Run, RunKind, RunStatus, ToolCall, ToolCallStatus
from ..models.base import utcnow
from . import documents, rollups
from .access import require_role
from .evaluations import refresh_run
from .retry import retry_on_conflict
from .run_text import store_run_text
from .secret_scan import redact_text, redact_tool_event, summary

log = logging.getLogger("reviewapp.tool_calls")

STORED_EVENTS = ("started", "completed", "failed")
TERMINAL = (ToolCallStatus.COMPLETED.value, ToolCallStatus.FAILED.value)
DEFAULT_MAX_EVENTS = 1000


@dataclass(frozen=True)
class EventResult:
    """What one event did: ``created`` | ``updated`` | ``unchanged`` | ``rejected`` |
    ``ignored`` (a ``delta``), with a short ``message`` saying why when useful, and a
    ``warning`` when the event was applied but its facts contradict the row (an end
    before the start: the duration is recorded as 0 ms, SPEC 4)."""

    index: int
    id: str | None
    event: str | None
    result: str
    message: str = ""
    warning: str = ""
    field: str = ""  # the path of a shape error (e.g. ``[3].timestamp``); its result is rejected

    def to_dict(self) -> dict[str, Any]:
        """``{"index", "id", "event", "result"[, "field"][, "message"][, "warning"]}`` for
        the API answer; ``id`` / ``event`` are null when the event did not carry a valid one."""
        out: dict[str, Any] = {"index": self.index, "id": self.id, "event": self.event,
                               "result": self.result}
        if self.field:
            out["field"] = self.field
        if self.message:
            out["message"] = self.message
        if self.warning:
            out["warning"] = self.warning
        return out


@dataclass
class _Event:
    index: int
    id: str
    run_id: str
    event: str
    tool_name: str | None
    arguments: Any
    output: Any
    error: Any
    timestamp: datetime
    timestamp_given: bool
    step_id: str | None
    retrieval: dict[str, Any]  # validated, redacted column values ({} when absent)
    clean_arguments: Any = None  # redacted
    result_summary: str | None = None  # redacted, serialised, cut
    error_summary: str | None = None  # redacted, serialised, cut
    lengths: dict[str, int | None] | None = None  # characters before the cut (_lengths)


def _redact_event(ev: _Event) -> _Event:
    # The event is redacted already (_parse_event); serialise and cut its texts before
    # any database statement, so the write transaction stays short.
    if ev.event in STORED_EVENTS:
        ev.clean_arguments = ev.arguments
        result, error = summary(ev.output), summary(ev.error)
        ev.result_summary, ev.error_summary = result.text, error.text
        ev.lengths = _lengths(ev.arguments, result, error)
        ev.retrieval = _retrieval_values(ev.retrieval)
    return ev


def _lengths(arguments: Any, result: Any, error: Any) -> dict[str, int | None]:
    """The ``*_length`` columns: characters of the arguments as JSON, of the result and
    of the error before their 2,000-character cut (SPEC 10: pages say "cut at N of M")."""
    return {"arguments_length": summary(arguments, 0).length, "result_length": result.length,
            "error_length": error.length}


def _parse_event(raw: Any, index: int, prefix: str, now: datetime) -> _Event:
    documents.check("tool_event", raw, prefix)
    raw = redact_tool_event(raw)  # SPEC 4: before anything else reads it
    try:
        given = parse_timestamp(raw.get("timestamp"), "timestamp")
    except ValueError as exc:
        raise ValidationFailed(join_path(prefix, "timestamp"),
                               str(exc).split(": ", 1)[-1]) from None
    if raw["event"] == "started" and not raw.get("tool_name"):
        raise ValidationFailed(join_path(prefix, "tool_name"),
                               "required for a started event")
    return _redact_event(_Event(
        index, raw["id"], raw["run_id"], raw["event"], raw.get("tool_name"), raw.get("arguments"),
        raw.get("output"), raw.get("error"), given or now, given is not None, raw.get("step_id"),
        raw.get("retrieval")))


# An exception class name (``ValueError``, ``botocore.exceptions.ClientError``,
# ``TimeoutExpired``): the only part of an error the runtime log may hold (SPEC 4).
_ERROR_CLASS = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]{0,60}(?:\.[A-Za-z_][A-Za-z0-9_]{0,60}){0,6}"
    r"(?:Error|Exception|Timeout|TimeoutExpired|Exit|Interrupt|Failure|Fault|Refused)")
_ERROR_CLASS_AT_START = re.compile(r"\s{0,20}(" + _ERROR_CLASS.pattern + r")\b")


def error_class(error: Any) -> str | None:
    """A value-free label for an error, for the runtime log (SPEC 4): the exception class
    name of an error object's ``type`` / ``class`` / ``error_class`` field or that a text
    starts with (``ValueError: ...`` -> ``ValueError``), only when it looks like one and
    holds nothing redaction would remove; else ``"error"``. ``None`` when no error."""
    if error is None:
        return None
    label = None
    if isinstance(error, Mapping):
        for key in ("type", "class", "error_class"):
            value = error.get(key)
            if isinstance(value, str) and _ERROR_CLASS.fullmatch(value):
                label = value
                break
    elif isinstance(error, str):
        match = _ERROR_CLASS_AT_START.match(error[:600])
        label = match.group(1) if match else None
    if label is None or redact_text(label) != label:
        return "error"
    return label


def log_safe(text: str) -> str:
    """``text`` with control characters (line breaks included) escaped as ``\\xNN``, so
    no value can start a forged log line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256
                   else f"\\u{ord(c):04x}" for c in text)


def _retrieval_values(retrieval: Mapping[str, Any] | None) -> dict[str, Any]:
    """Retrieval facts {match_level, hit_count, evidence_refs} ({} when absent); shapes
    are checked by the schema, evidence was redacted with the rest of the event."""
    if not retrieval:
        return {}
    refs = retrieval.get("evidence_refs")
    return {"match_level": retrieval.get("match_level"), "hit_count": retrieval.get("hit_count"),
            "evidence_refs": refs}


def _parent_columns(run: Run) -> dict[str, int | None]:
    # Exactly one parent: the chat session or the diagnostic task (CHECK one_parent).
    if run.kind == RunKind.AIOPS.value:
        return {"chat_session_id": None, "diagnostic_task_id": run.diagnosis_session_id}
    return {"chat_session_id": run.diagnosis_session_id, "diagnostic_task_id": None}


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
_BUMP_COUNTERS = _RUN.update().where(_RUN.c.id == bindparam("pk")).values(
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


class _Batch:
    """The state one batch of events works on, read with a few set-based queries and
    written with one multi-row INSERT and one multi-row UPDATE (SQLAlchemy Core: the
    event path is the hot path of ingestion; see benchmarks/ingest.py).

    ``runs``: the batch's runs of the workspace; ``rows``: the call rows the batch may
    touch, as column dicts; ``new`` / ``dirty``: rows to insert / update; ``added`` /
    ``failed``: per run pk, calls created and calls that became ``failed``.
    """

    def __init__(self, session: Session, workspace_id: int, events: Sequence[_Event]) -> None:
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


def _new_row(run: Any, ev: _Event, batch: _Batch, *, status: str, compensated: bool) -> dict[str, Any]:
    now = utcnow()
    aiops = run.kind == RunKind.AIOPS.value
    row: dict[str, Any] = {
        "workspace_id": batch.workspace_id, "id": ev.id, "run_pk": run.id,
        # Exactly one parent: the chat session or the diagnostic task (CHECK one_parent).
        "chat_session_id": None if aiops else run.diagnosis_session_id,
        "diagnostic_task_id": run.diagnosis_session_id if aiops else None,
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


def _finalise_row(row: dict[str, Any], ev: _Event) -> None:
    lengths = ev.lengths or {}
    row["status"] = ev.event
    row["result_summary"] = ev.result_summary
    row["result_length"] = lengths.get("result_length")
    row["error_message"] = (ev.error_summary or "failed") if ev.event == "failed" else None
    row["error_length"] = lengths.get("error_length") if ev.error_summary and ev.event == "failed" else None
    row["completed_at"] = ev.timestamp
    row["duration_ms"] = duration_ms(row["started_at"], ev.timestamp)


def _log_row(row: Mapping[str, Any], event: str, error: Any) -> None:
    # Never values (SPEC 4): the tool name and the argument keys (both redacted before
    # storage, escaped here), the state, the duration and the error class.
    if not log.isEnabledFor(logging.INFO):
        return
    arguments = row["arguments"]
    keys = ",".join(sorted(log_safe(str(k)) for k in arguments)) if isinstance(arguments, dict) else ""
    log.info(
        "tool_call event=%s tool=%s argument_keys=%s status=%s duration_ms=%s error_class=%s",
        event, log_safe(row["tool_name"]), keys, row["status"], row["duration_ms"],
        error_class(error),
    )


def _apply(batch: _Batch, run: Any, ev: _Event) -> tuple[str, str, str]:
    """Apply one event to ``run`` (already in the actor's workspace) in memory.
    Returns (result, message, warning)."""
    result, message = _apply_event(batch, run, ev)
    row = batch.rows.get(ev.id)
    warning = ""
    if result == "updated" and row is not None and ev.event in ("started", *TERMINAL):
        warning = _order_warning(row, ev.event)
    return result, message, warning


def _apply_event(batch: _Batch, run: Any, ev: _Event) -> tuple[str, str]:
    row = batch.rows.get(ev.id)
    if row is not None and row["run_pk"] != run.id:
        return "rejected", "this call id belongs to another run"

    if ev.event == "started":
        if row is None:
            row = _new_row(run, ev, batch, status=ToolCallStatus.STARTED.value, compensated=False)
            batch.create(row)
            _log_row(row, ev.event, None)
            return "created", ""
        if not row["compensated"]:
            return "unchanged", "replayed started event"
        # Late facts win over stand-ins (SPEC 4): the real start, the real arguments.
        if row["tool_name"] == "unknown" and ev.tool_name:
            row["tool_name"] = ev.tool_name
        if row["arguments"] is None and ev.arguments is not None:
            row["arguments"] = ev.clean_arguments
            row["arguments_length"] = (ev.lengths or {}).get("arguments_length")
        if row["step_pk"] is None:
            row["step_pk"] = batch.step_pk(run, ev.step_id)
        batch.touch(row, row["status"])
        if not ev.timestamp_given:
            # Receipt time is not the start of a call that already ended: invent nothing.
            return "updated", "late started event without timestamp: start time still unknown"
        row["started_at"] = ev.timestamp
        row["duration_ms"] = duration_ms(row["started_at"], row["completed_at"])
        row["compensated"] = False
        _log_row(row, ev.event, None)
        return "updated", "late started event filled in the real start time"

    status = ev.event
    if row is None:
        row = _new_row(run, ev, batch, status=status, compensated=True)
        _finalise_row(row, ev)
        batch.create(row)
        _log_row(row, ev.event, ev.error)
        return "created", "no started event: row compensated"
    if row["status"] in TERMINAL:
        if row["status"] == status:
            return "unchanged", "replayed terminal event"
        return "rejected", f"call is already {row['status']}"
    was = row["status"]
    _finalise_row(row, ev)
    row.update(ev.retrieval)
    if row["arguments"] is None and ev.arguments is not None:
        row["arguments"] = ev.clean_arguments
        row["arguments_length"] = (ev.lengths or {}).get("arguments_length")
    batch.touch(row, was)
    _log_row(row, ev.event, ev.error)
    return "updated", ""


def apply_events(
    session: Session, actor: Actor, workspace_id: int, raw_events: Sequence[Any], *,
    batch: bool = True, max_events: int = DEFAULT_MAX_EVENTS,
) -> list[EventResult]:
    """Apply tool-call lifecycle events to runs of ``workspace_id``; commit once (SPEC 4).

    ``raw_events``: decoded JSON objects of ``schemas/tool_event.schema.json``; ``batch``
    says whether they came as an array (error paths then start with ``[i]``). Every event
    is validated on its own: in a batch, an event with a shape error (unknown field, bad
    value, unreadable or out-of-range timestamp) gets a ``rejected`` result carrying its
    ``field`` path (e.g. ``[3].timestamp``) and message, and the valid events are still
    applied; a single event (``batch=False``) with a shape error raises
    ``ValidationFailed`` naming the field. Then each event is applied in order on its
    own: a rejected event (unknown run_id, terminal after another terminal, an id that
    belongs to another run) is reported in its result and the rest still apply. Results
    come back in request order, one per event.
    Events without timestamp take the time the server received them.
    The runs' call counters follow; a finished run whose calls changed is re-scored
    (``evaluations.refresh_run``); a RUNNING run is scored when it finishes (SPEC 5.1).
    Raises ``Forbidden`` (actor may not write into ``workspace_id``), ``ValidationFailed``,
    ``PayloadTooLarge`` (more than ``max_events``).
    """
    require_role(session, actor, workspace_id, Role.REVIEWER if actor.is_token else Role.ADMIN)
    if len(raw_events) > max_events:
        raise PayloadTooLarge(f"a batch holds at most {max_events} events, got {len(raw_events)}")
    if not raw_events:
        raise ValidationFailed("$", "send one event or a non-empty array of events")
    now = utcnow()
    if not batch:
        events = [_parse_event(raw, i, "", now) for i, raw in enumerate(raw_events)]
        return retry_on_conflict(session, lambda: _apply_all(session, workspace_id, events))
    events, invalid = [], []
    for index, raw in enumerate(raw_events):
        try:
            events.append(_parse_event(raw, index, f"[{index}]", now))
        except ValidationFailed as exc:
            invalid.append(_invalid_result(index, raw, exc))
    applied = retry_on_conflict(
        session, lambda: _apply_all(session, workspace_id, events)) if events else []
    return sorted([*applied, *invalid], key=lambda r: r.index)


def _invalid_result(index: int, raw: Any, error: ValidationFailed) -> EventResult:
    """The ``rejected`` result of an event that failed its shape check, with what it
    carried of id and event (``None`` when they are not valid themselves)."""
    fields = raw if isinstance(raw, Mapping) else {}
    call_id = fields.get("id")
    event = fields.get("event")
    message = error.reason
    return EventResult(index, call_id if isinstance(call_id, str) and len(call_id) <= 160 else None,
                       event if event in ("started", "completed", "failed", "delta") else None,
                       "rejected", message, field=error.field)


def _apply_all(session: Session, workspace_id: int, events: list[_Event]) -> list[EventResult]:
    stored = [ev for ev in events if ev.event in STORED_EVENTS]
    batch = _Batch(session, workspace_id, stored) if stored else None
    results: list[EventResult] = []
    touched: dict[int, Any] = {}
    for ev in events:
        if batch is None or ev.event not in STORED_EVENTS:
            results.append(EventResult(ev.index, ev.id, ev.event, "ignored",
                                       "delta events are shown live, never stored"))
            continue
        run = batch.runs.get(ev.run_id)
        if run is None:
            results.append(EventResult(ev.index, ev.id, ev.event, "rejected", "unknown run_id"))
            continue
        result, message, warning = _apply(batch, run, ev)
        if result in ("created", "updated"):
            touched[run.id] = run
        results.append(EventResult(ev.index, ev.id, ev.event, result, message, warning))
    if batch is not None:
        batch.write()
    bumps = [{"pk": run.id, "added": batch.added.get(run.id, 0), "failed": batch.failed.get(run.id, 0),
              "now": utcnow()}
             for run in touched.values() if run.status == RunStatus.RUNNING.value]
    if bumps:
        # Counters follow the calls; scoring waits for the end of the run (SPEC 5.1).
        batch.conn.execute(_BUMP_COUNTERS, bumps)
    for run in touched.values():
        if run.status != RunStatus.RUNNING.value:
            refresh_run(session, session.get(Run, run.id))
    store_run_text(session, touched)  # the calls' text is searched (SPEC 8)
    session.commit()
    return results


def check_records(records: Sequence[Mapping[str, Any]]) -> None:
    """Checks of schema-valid tool-call records that need no database: unique ids within
    the document, readable times in 2000-2100, ``completed_at`` not before
    ``started_at``. Raises ``ValidationFailed`` naming ``tool_calls[i].field``."""
    seen: set[str] = set()
    for index, record in enumerate(records):
        if record["id"] in seen:
            raise ValidationFailed(f"tool_calls[{index}].id", "duplicate call id in this run")
        seen.add(record["id"])
        times = {}
        for key in ("started_at", "completed_at"):
            try:
                times[key] = parse_timestamp(record.get(key), key)
            except ValueError as exc:
                raise ValidationFailed(f"tool_calls[{index}].{key}",
                                       str(exc).split(": ", 1)[-1]) from None
        start, end = times["started_at"], times["completed_at"]
        if start is not None and end is not None and end < start:
            # A record is the agent's final word: a contradiction in it is refused
            # (events, which arrive one by one, are clamped and warned about instead).
            raise ValidationFailed(f"tool_calls[{index}].completed_at",
                                   f"{end.isoformat()} is before the start {start.isoformat()}")


def upsert_records(session: Session, run: Run, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Store the complete tool-call records of a run document (import / ``PUT``) for
    ``run``, in order (``ordinal`` = position). No commit.

    ``records`` are already schema-checked: {id, tool_name, status?, arguments?, output?,
    error?, started_at?, completed_at?, step_id?, retrieval?, compensated?}. Times may be
    absent (sources without clocks): the row then keeps only its ``ordinal``. A record is
    the agent's final word on its call, so it overwrites what events stored. Returns
    ``created`` | ``updated`` | ``unchanged`` per record.
    Raises ``ValidationFailed`` naming ``tool_calls[i].field`` (bad time, duplicate id,
    id of another run).
    """
    check_records(records)
    seen = {record["id"] for record in records}
    existing = {
        r.id: r for r in session.scalars(
            select(ToolCall).where(ToolCall.workspace_id == run.workspace_id,
                                   ToolCall.id.in_(seen)))
    } if seen else {}
    steps: dict[str, int] = {}
    if any(r.get("step_id") for r in records):
        steps = dict(session.execute(
            select(DiagnosticStep.step_id, DiagnosticStep.id).where(
                DiagnosticStep.run_pk == run.id, DiagnosticStep.step_id.is_not(None))
        ).all())
    return [_upsert_record(session, run, record, index, existing, steps)
            for index, record in enumerate(records)]


def _upsert_record(session: Session, run: Run, record: Mapping[str, Any], index: int,
                   existing: dict[str, ToolCall], steps: dict[str, int]) -> str:
    path = f"tool_calls[{index}]"
    times = {}
    for key in ("started_at", "completed_at"):
        try:
            times[key] = parse_timestamp(record.get(key), key)
        except ValueError as exc:
            raise ValidationFailed(f"{path}.{key}", str(exc).split(": ", 1)[-1]) from None
    status = record.get("status") or ToolCallStatus.COMPLETED.value
    # ``record`` was redacted with its run document (runs.upsert_run): serialise and cut.
    output, error = record.get("output"), record.get("error")
    result, error_text = summary(output), summary(error)
    lengths = _lengths(record.get("arguments"), result, error_text)
    if status != "failed" or error_text.text is None:
        lengths["error_length"] = None
    values: dict[str, Any] = {
        "tool_name": record["tool_name"],
        "status": status,
        "arguments": record.get("arguments"),
        "result_summary": result.text,
        "error_message": (error_text.text or "failed") if status == "failed" else None,
        **lengths,
        "started_at": times["started_at"],
        "completed_at": times["completed_at"] if status != "started" else None,
        "ordinal": index + 1,
        "step_pk": steps.get(record.get("step_id") or ""),
        "compensated": bool(record.get("compensated", False)),
        "match_level": None, "hit_count": None, "evidence_refs": None,
    }
    values["duration_ms"] = duration_ms(values["started_at"], values["completed_at"])
    values.update(_retrieval_values(record.get("retrieval")))
    row = existing.get(record["id"])
    if row is not None and row.run_pk != run.id:
        raise ValidationFailed(f"{path}.id", "this call id belongs to another run")
    if row is None:
        row = ToolCall(workspace_id=run.workspace_id, id=record["id"], run_pk=run.id,
                       **_parent_columns(run), **values)
        session.add(row)
        _log_row(values, status, error)
        return "created"
    changed = False
    for key, value in {**values, **_parent_columns(run)}.items():
        if getattr(row, key) != value:
            setattr(row, key, value)
            changed = True
    if changed:
        _log_row(values, status, error)
    return "updated" if changed else "unchanged"
