"""Complete tool-call records of a run document (import, ``PUT /api/v1/runs``): the
agent's final word on each call, stored in order (SPEC 4, 9)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ...domain.times import duration_ms
from ...domain.tool_failure import ended_as
from ...errors import ValidationFailed
from ...models import DiagnosticStep, Run, ToolCall, ToolCallStatus
from ..params import timestamp_at
from ..run_text import call_text_of, store_call_text
from ..secret_scan import summary
from ._columns import column_lengths, parent_columns, retrieval_values
from .runtime_log import log_row

# A tool call's ``step_id`` names a step of its own run (the run document's ``steps``,
# stored before its tool calls; events come after the run's document): one that names
# none is refused rather than stored without its step (new-user finding: silent loss).
NO_SUCH_STEP = "names no step of this run (send the step in the run document's steps first)"


def check_records(records: Sequence[Mapping[str, Any]]) -> None:
    """Checks of schema-valid tool-call records that need no database: unique ids within
    the document, readable times in 2000-2100, ``completed_at`` not before
    ``started_at``. Raises ``ValidationFailed`` naming ``tool_calls[i].field``."""
    seen: set[str] = set()
    for index, record in enumerate(records):
        if record["id"] in seen:
            raise ValidationFailed(f"tool_calls[{index}].id", "duplicate call id in this run")
        seen.add(record["id"])
        start, end = _times(record, f"tool_calls[{index}]")
        if start is not None and end is not None and end < start:
            # A record is the agent's final word: a contradiction in it is refused
            # (events, which arrive one by one, are clamped and warned about instead).
            raise ValidationFailed(f"tool_calls[{index}].completed_at",
                                   f"{end.isoformat()} is before the start {start.isoformat()}")


def _times(record: Mapping[str, Any], path: str) -> tuple[datetime | None, datetime | None]:
    """A record's (started_at, completed_at), each ``None`` when absent. Raises
    ``ValidationFailed`` naming ``<path>.started_at`` / ``.completed_at``."""
    return (timestamp_at(record.get("started_at"), f"{path}.started_at"),
            timestamp_at(record.get("completed_at"), f"{path}.completed_at"))


def upsert_records(session: Session, run: Run, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Store the complete tool-call records of a run document (import / ``PUT``) for
    ``run``, in order (``ordinal`` = position). No commit.

    ``records`` are already schema-checked: {id, tool_name, status?, arguments?, output?,
    error?, started_at?, completed_at?, step_id?, retrieval?, compensated?}. Times may be
    absent (sources without clocks): the row then keeps only its ``ordinal``. A record is
    the agent's final word on its call, so it overwrites what events stored. A
    ``completed`` record (or one without status) whose output meets a failure rule is
    stored ``failed``, its output the error (``domain.tool_failure.ended_as``). Returns
    ``created`` | ``updated`` | ``unchanged`` per record.
    Raises ``ValidationFailed`` naming ``tool_calls[i].field`` (bad time, duplicate id,
    id of another run, a ``step_id`` that names no step of the run: ``NO_SUCH_STEP``).
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
    for index, record in enumerate(records):
        if record.get("step_id") and record["step_id"] not in steps:
            raise ValidationFailed(f"tool_calls[{index}].step_id", NO_SUCH_STEP)
    before = {call_id: call_text_of(row) for call_id, row in existing.items()}
    results = [_upsert_record(session, run, record, index, existing, steps)
               for index, record in enumerate(records)]
    # The index rows of the calls created or whose text changed (SPEC 8): their own text.
    indexed = [row for call_id, row in existing.items()
               if before.get(call_id) != call_text_of(row)]
    if indexed:
        session.flush()
        store_call_text(session, indexed)
    return results


def _upsert_record(session: Session, run: Run, record: Mapping[str, Any], index: int,
                   existing: dict[str, ToolCall], steps: dict[str, int]) -> str:
    path = f"tool_calls[{index}]"
    started_at, completed_at = _times(record, path)
    # A completed call whose output meets a failure rule is failed (domain.tool_failure).
    status, output, error = ended_as(record.get("status") or ToolCallStatus.COMPLETED.value,
                                     record.get("output"), record.get("error"))
    # ``record`` was redacted with its run document (runs.upsert_run): serialise and cut.
    result, error_text = summary(output), summary(error)
    lengths = column_lengths(record.get("arguments"), result, error_text)
    if status != "failed" or error_text.text is None:
        lengths["error_length"] = None
    values: dict[str, Any] = {
        "tool_name": record["tool_name"],
        "status": status,
        "arguments": record.get("arguments"),
        "result_summary": result.text,
        "error_message": (error_text.text or "failed") if status == "failed" else None,
        **lengths,
        "started_at": started_at,
        "completed_at": completed_at if status != "started" else None,
        "ordinal": index + 1,
        "step_pk": steps.get(record.get("step_id") or ""),
        "compensated": bool(record.get("compensated", False)),
        "match_level": None, "hit_count": None, "evidence_refs": None,
    }
    values["duration_ms"] = duration_ms(values["started_at"], values["completed_at"])
    values.update(retrieval_values(record.get("retrieval")))
    row = existing.get(record["id"])
    if row is not None and row.run_pk != run.id:
        raise ValidationFailed(f"{path}.id", "this call id belongs to another run")
    if row is None:
        row = ToolCall(workspace_id=run.workspace_id, id=record["id"], run_pk=run.id,
                       **parent_columns(run), **values)
        session.add(row)
        existing[record["id"]] = row
        log_row(values, status, error)
        return "created"
    changed = False
    for key, value in {**values, **parent_columns(run)}.items():
        if getattr(row, key) != value:
            setattr(row, key, value)
            changed = True
    if changed:
        log_row(values, status, error)
    return "updated" if changed else "unchanged"
