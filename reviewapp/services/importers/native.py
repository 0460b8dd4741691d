"""The ``native`` format (SPEC 11): run documents as ``PUT /api/ingest/runs/<run_id>`` takes
them, one per record. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._common import (
    Adapted,
    RecordError,
    check_run_id,
)


def adapt_native(record: Any) -> Adapted:
    """A native run document (``run_document.schema.json`` with ``run_id``) as it is."""
    if not isinstance(record, Mapping):
        raise RecordError("expected a run document object")
    run_id = record.get("run_id")
    if not isinstance(run_id, str):
        raise RecordError("run_id is required in import files")
    return Adapted(check_run_id(run_id, "run_id"), dict(record),
                   tool_like=bool(record.get("tool_calls")))
