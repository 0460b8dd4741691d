"""The tool-call audit lifecycle: started / completed / failed (SPEC 4).

Events and complete records both land here, keyed by (workspace, call id), so an event
can never touch another tenant's row. The rules:

* ``started`` creates the row; a ``started`` that arrives after the terminal event of a
  compensated row fills in the real start, recomputes the duration, clears ``compensated``.
* ``completed`` / ``failed`` finalise the same row; without a row they create and
  finalise it at once and mark it ``compensated`` (start = the terminal event's time).
* Replays (same id, same status) change nothing; a terminal event for a row that is
  already terminal with another status is rejected.
* Secrets are redacted in arguments, results and errors before anything is stored.
* The runtime log holds tool name, argument keys, status, duration and error class only.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..domain.redaction import redact, summarize
from ..domain.times import duration_ms, parse_timestamp
from ..errors import ValidationFailed
from ..models import DiagnosticStep, Run, RunKind, ToolCall, ToolCallStatus
from ..models.base import utcnow
from .access import require_role

log = logging.getLogger("reviewapp.tool_calls")

EVENTS = ("started", "completed", "failed")
TERMINAL = (ToolCallStatus.COMPLETED.value, ToolCallStatus.FAILED.value)
MAX_ID_LENGTH = 160


@dataclass(frozen=True)
class EventResult:
    """What one event did: ``created`` | ``updated`` | ``unchanged`` | ``rejected``."""

    index: int
    id: str | None
    event: str | None
    result: str
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index, "id": self.id, "event": self.event,
                               "result": self.result}
        if self.message:
            out["message"] = self.message
        return out


@dataclass
class _Event:
    id: str
    run_id: str
    event: str
    tool_name: str | None
    arguments: Any
    output: Any
    error: Any
    timestamp: datetime
    step_id: str | None
    retrieval: Mapping[str, Any] | None


def _parse_event(raw: Mapping[str, Any], index: int, now: datetime) -> _Event:
    prefix = f"[{index}]"
    if not isinstance(raw, Mapping):
        raise ValidationFailed(prefix, "expected an object")
    call_id = raw.get("id")
    if not isinstance(call_id, str) or not call_id.strip() or len(call_id) > MAX_ID_LENGTH:
        raise ValidationFailed(f"{prefix}.id", f"required string of 1-{MAX_ID_LENGTH} characters")
    run_id = raw.get("run_id")
    if not isinstance(run_id, str) or not run_id.strip():
        raise ValidationFailed(f"{prefix}.run_id", "required string")
    event = raw.get("event")
    if event not in EVENTS:
        raise ValidationFailed(f"{prefix}.event", "must be started, completed or failed")
    tool_name = raw.get("tool_name")
    if tool_name is not None and (not isinstance(tool_name, str) or len(tool_name) > 200):
        raise ValidationFailed(f"{prefix}.tool_name", "must be a string of at most 200 characters")
    if event == "started" and not tool_name:
        raise ValidationFailed(f"{prefix}.tool_name", "required for a started event")
    try:
        timestamp = parse_timestamp(raw.get("timestamp"), f"{prefix}.timestamp") or now
    except ValueError as exc:
        raise ValidationFailed(f"{prefix}.timestamp", str(exc).split(": ", 1)[-1]) from None
    retrieval = raw.get("retrieval")
    if retrieval is not None and not isinstance(retrieval, Mapping):
        raise ValidationFailed(f"{prefix}.retrieval", "must be an object")
    step_id = raw.get("step_id")
    if step_id is not None and not isinstance(step_id, str):
        raise ValidationFailed(f"{prefix}.step_id", "must be a string")
    return _Event(call_id, run_id, event, tool_name, raw.get("arguments"), raw.get("output"),
                  raw.get("error"), timestamp, step_id, retrieval)


def _log_event(row: ToolCall, event: str, error: Any) -> None:
    keys = sorted(row.arguments.keys()) if isinstance(row.arguments, dict) else []
    error_class = None
    if error is not None:
        error_class = type(error).__name__ if not isinstance(error, str) else "str"
        if isinstance(error, Mapping) and isinstance(error.get("type"), str):
            error_class = error["type"][:80]
    log.info(
        "tool_call event=%s tool=%s argument_keys=%s status=%s duration_ms=%s error_class=%s",
        event, row.tool_name, keys, row.status, row.duration_ms, error_class,
    )


def _retrieval_values(retrieval: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validated retrieval facts {match_level, hit_count, evidence_refs} ({} when absent)."""
    if not retrieval:
        return {}
    level = retrieval.get("match_level")
    if level not in (None, "L0", "L1"):
        raise ValidationFailed("retrieval.match_level", "must be L0, L1 or null")
    hits = retrieval.get("hit_count")
    if hits is not None and (not isinstance(hits, int) or isinstance(hits, bool) or hits < 0):
        raise ValidationFailed("retrieval.hit_count", "must be a non-negative integer")
    refs = retrieval.get("evidence_refs")
    if refs is not None and not isinstance(refs, list):
        raise ValidationFailed("retrieval.evidence_refs", "must be a list")
    return {"match_level": level, "hit_count": hits,
            "evidence_refs": redact(refs) if refs is not None else None}


def _apply_retrieval(row: ToolCall, retrieval: Mapping[str, Any] | None) -> None:
    for key, value in _retrieval_values(retrieval).items():
        setattr(row, key, value)


def _finalise(row: ToolCall, status: str, output: Any, error: Any, at: datetime) -> None:
    row.status = status
    if status == ToolCallStatus.COMPLETED.value:
        row.result_summary = summarize(output)
        row.error_message = None
    else:
        row.error_message = summarize(error) or "failed"
        row.result_summary = summarize(output)
    row.completed_at = at
    row.duration_ms = duration_ms(row.started_at, row.completed_at)


def _parent_columns(run: Run) -> dict[str, int | None]:
    # Exactly one parent: the chat session or the diagnostic task (CHECK one_parent).
    if run.kind == RunKind.AIOPS.value:
        return {"chat_session_id": None, "diagnostic_task_id": run.diagnosis_session_id}
    return {"chat_session_id": run.diagnosis_session_id, "diagnostic_task_id": None}


def _step_pk(session: Session, run: Run, step_id: str | None) -> int | None:
    if not step_id:
        return None
    return session.scalar(
        select(DiagnosticStep.id).where(
            DiagnosticStep.run_pk == run.id, DiagnosticStep.step_id == step_id
        )
    )


def _next_ordinal(session: Session, run: Run) -> int:
    from sqlalchemy import func

    current = session.scalar(select(func.max(ToolCall.ordinal)).where(ToolCall.run_pk == run.id))
    return (current or 0) + 1


def apply_event(session: Session, run: Run, ev: _Event) -> tuple[str, str]:
    """Apply one parsed event to ``run`` (already access-checked). No commit.

    Returns (result, message) with result in created | updated | unchanged | rejected.
    """
    row = session.get(ToolCall, (run.workspace_id, ev.id))
    if row is not None and row.run_pk != run.id:
        return "rejected", "this call id belongs to another run"

    if ev.event == "started":
        if row is None:
            row = ToolCall(
                workspace_id=run.workspace_id, id=ev.id, run_pk=run.id, **_parent_columns(run),
                step_pk=_step_pk(session, run, ev.step_id), ordinal=_next_ordinal(session, run),
                tool_name=ev.tool_name, status=ToolCallStatus.STARTED.value,
                arguments=redact(ev.arguments), started_at=ev.timestamp, compensated=False,
            )
            _apply_retrieval(row, ev.retrieval)
            session.add(row)
            _log_event(row, ev.event, None)
            return "created", ""
        if row.compensated:
            # Late facts win over stand-ins (SPEC 4).
            row.started_at = ev.timestamp
            if row.arguments is None:
                row.arguments = redact(ev.arguments)
            row.duration_ms = duration_ms(row.started_at, row.completed_at)
            row.compensated = False
            _log_event(row, ev.event, None)
            return "updated", "late started event filled in the real start time"
        return "unchanged", "replayed started event"

    status = ev.event
    if row is None:
        row = ToolCall(
            workspace_id=run.workspace_id, id=ev.id, run_pk=run.id, **_parent_columns(run),
            step_pk=_step_pk(session, run, ev.step_id), ordinal=_next_ordinal(session, run),
            tool_name=ev.tool_name or "unknown", status=status,
            arguments=redact(ev.arguments), started_at=ev.timestamp, compensated=True,
        )
        _finalise(row, status, ev.output, ev.error, ev.timestamp)
        _apply_retrieval(row, ev.retrieval)
        session.add(row)
        _log_event(row, ev.event, ev.error)
        return "created", "no started event: row compensated"
    if row.status in TERMINAL:
        if row.status == status:
            return "unchanged", "replayed terminal event"
        return "rejected", f"call is already {row.status}"
    _finalise(row, status, ev.output, ev.error, ev.timestamp)
    _apply_retrieval(row, ev.retrieval)
    if ev.tool_name and row.tool_name != ev.tool_name and row.tool_name == "unknown":
        row.tool_name = ev.tool_name
    _log_event(row, ev.event, ev.error)
    return "updated", ""


def apply_events(
    session: Session, actor: Actor, workspace_id: int, raw_events: Sequence[Mapping[str, Any]]
) -> list[EventResult]:
    """Apply a batch of tool-call events to runs of ``workspace_id``; commit once.

    Every event is validated first (``ValidationFailed`` naming ``[i].field`` rejects the
    whole request, nothing applied). Then each event is applied on its own: a rejected
    event (unknown run, terminal after terminal, id of another run) is reported in its
    result and the rest still apply. Runs whose calls changed are re-evaluated.
    Raises ``Forbidden`` when the actor may not write into ``workspace_id``.
    """
    from .evaluations import refresh_run

    require_role(session, actor, workspace_id, Role.REVIEWER if actor.is_token else Role.ADMIN)
    now = utcnow()
    events = [_parse_event(raw, i, now) for i, raw in enumerate(raw_events)]
    run_ids = {ev.run_id for ev in events}
    runs = {
        r.run_id: r
        for r in session.scalars(
            select(Run).where(Run.workspace_id == workspace_id, Run.run_id.in_(run_ids))
        )
    }
    results: list[EventResult] = []
    touched: dict[int, Run] = {}
    for i, ev in enumerate(events):
        run = runs.get(ev.run_id)
        if run is None:
            results.append(EventResult(i, ev.id, ev.event, "rejected", "unknown run_id"))
            continue
        with session.no_autoflush:
            result, message = apply_event(session, run, ev)
        session.flush()
        if result in ("created", "updated"):
            touched[run.id] = run
        results.append(EventResult(i, ev.id, ev.event, result, message))
    for run in touched.values():
        refresh_run(session, run)
    session.commit()
    return results


def upsert_record(session: Session, run: Run, record: Mapping[str, Any], ordinal: int) -> str:
    """Store a complete tool-call record (import / run document) for ``run``. No commit.

    ``record``: {id, tool_name, status, arguments?, output?/result_summary?,
    error?/error_message?, started_at?, completed_at?, step_id?, retrieval?}. Times may be
    absent (sources without clocks): the row then keeps only its ``ordinal``. Returns
    created | updated | unchanged. Raises ``ValidationFailed`` naming the field.
    """
    call_id = record.get("id")
    if not isinstance(call_id, str) or not call_id or len(call_id) > MAX_ID_LENGTH:
        raise ValidationFailed("tool_calls[].id", f"required string of 1-{MAX_ID_LENGTH} characters")
    status = record.get("status") or ToolCallStatus.COMPLETED.value
    if status not in EVENTS:
        raise ValidationFailed("tool_calls[].status", "must be started, completed or failed")
    try:
        started_at = parse_timestamp(record.get("started_at"), "started_at")
        completed_at = parse_timestamp(record.get("completed_at"), "completed_at")
    except ValueError as exc:
        raise ValidationFailed(f"tool_calls[{call_id}]", str(exc)) from None
    output = record.get("output", record.get("result_summary"))
    error = record.get("error", record.get("error_message"))
    values: dict[str, Any] = {
        "tool_name": str(record.get("tool_name") or "unknown")[:200],
        "status": status,
        "arguments": redact(record.get("arguments")),
        "result_summary": summarize(output),
        "error_message": summarize(error) if status == "failed" else None,
        "started_at": started_at,
        "completed_at": completed_at if status != "started" else None,
        "ordinal": ordinal,
        "step_pk": _step_pk(session, run, record.get("step_id")),
        "compensated": bool(record.get("compensated", False)),
    }
    if status == "failed" and not values["error_message"]:
        values["error_message"] = "failed"
    values["duration_ms"] = duration_ms(values["started_at"], values["completed_at"])
    row = session.get(ToolCall, (run.workspace_id, call_id))
    if row is not None and row.run_pk != run.id:
        raise ValidationFailed(f"tool_calls[{call_id}].id", "this call id belongs to another run")
    values.update(_retrieval_values(record.get("retrieval")))
    if row is None:
        row = ToolCall(workspace_id=run.workspace_id, id=call_id, run_pk=run.id,
                       **_parent_columns(run), **values)
        session.add(row)
        _log_event(row, status, error)
        return "created"
    changed = False
    for key, value in values.items():
        if getattr(row, key) != value:
            setattr(row, key, value)
            changed = True
    if changed:
        _log_event(row, status, error)
    return "updated" if changed else "unchanged"
