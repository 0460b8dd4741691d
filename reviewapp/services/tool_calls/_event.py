"""One tool-call event as received: its shape check, redaction (before anything else
reads it) and the serialised, cut texts, computed before any database statement."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ...domain.json_text import join_path
from ...domain.tool_failure import ended_as
from ...errors import ValidationFailed
from .. import documents
from ..params import timestamp_at
from ..secret_scan import redact_tool_event, refuse_secret_id, summary
from ._columns import STORED_EVENTS, column_lengths, retrieval_values


@dataclass
class Event:
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
    lengths: dict[str, int | None] | None = None  # characters before the cut (column_lengths)


def _redact_event(ev: Event) -> Event:
    # The event is redacted already (parse_event); serialise and cut its texts before
    # any database statement, so the write transaction stays short.
    if ev.event in STORED_EVENTS:
        ev.clean_arguments = ev.arguments
        result, error = summary(ev.output), summary(ev.error)
        ev.result_summary, ev.error_summary = result.text, error.text
        ev.lengths = column_lengths(ev.arguments, result, error)
        ev.retrieval = retrieval_values(ev.retrieval)
    return ev


def parse_event(raw: Any, index: int, prefix: str, now: datetime, clean_run_ids: set[str]) -> Event:
    """One event checked (shape, then a ``run_id`` holding a secret: ``ValidationFailed``
    naming ``<prefix>.run_id``) and redacted; a ``completed`` event whose output meets a
    failure rule becomes ``failed`` with its output as the error
    (``domain.tool_failure.ended_as``, the rule of every ingest path). ``clean_run_ids``: the run ids of the batch
    already found free of secrets (each is scanned once per batch); grows."""
    documents.check("tool_event", raw, prefix)
    if raw["run_id"] not in clean_run_ids:
        clean_run_ids.add(refuse_secret_id(raw["run_id"], join_path(prefix, "run_id")))
    raw = redact_tool_event(raw)  # SPEC 4: before anything else reads it
    given = timestamp_at(raw.get("timestamp"), join_path(prefix, "timestamp"))
    if raw["event"] == "started" and not raw.get("tool_name"):
        raise ValidationFailed(join_path(prefix, "tool_name"),
                               "required for a started event")
    # A completed end whose output meets a failure rule is failed (domain.tool_failure).
    event, output, error = ended_as(raw["event"], raw.get("output"), raw.get("error"))
    return _redact_event(Event(
        index, raw["id"], raw["run_id"], event, raw.get("tool_name"), raw.get("arguments"),
        output, error, given or now, given is not None, raw.get("step_id"),
        raw.get("retrieval")))
