"""The column values both tool-call paths store (live events and complete records):
the stored statuses, the ``*_length`` columns, the retrieval facts, the one parent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...models import Run, RunKind, ToolCallStatus
from ..secret_scan import summary

STORED_EVENTS = ("started", "completed", "failed")
TERMINAL = (ToolCallStatus.COMPLETED.value, ToolCallStatus.FAILED.value)


def column_lengths(arguments: Any, result: Any, error: Any) -> dict[str, int | None]:
    """The ``*_length`` columns: characters of the arguments as JSON, of the result and
    of the error before their 2,000-character cut (SPEC 10: pages say "cut at N of M")."""
    return {"arguments_length": summary(arguments, 0).length, "result_length": result.length,
            "error_length": error.length}


def retrieval_values(retrieval: Mapping[str, Any] | None) -> dict[str, Any]:
    """Retrieval facts {match_level, hit_count, evidence_refs} ({} when absent); shapes
    are checked by the schema, evidence was redacted with the rest of the event."""
    if not retrieval:
        return {}
    refs = retrieval.get("evidence_refs")
    return {"match_level": retrieval.get("match_level"), "hit_count": retrieval.get("hit_count"),
            "evidence_refs": refs}


def parent_columns(run: Run) -> dict[str, int | None]:
    # Exactly one parent: the chat session or the diagnostic task (CHECK one_parent).
    if run.kind == RunKind.AIOPS.value:
        return {"chat_session_id": None, "diagnostic_task_id": run.diagnosis_session_id}
    return {"chat_session_id": run.diagnosis_session_id, "diagnostic_task_id": None}
