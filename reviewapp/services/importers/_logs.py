"""What the whole-file formats (one file, a list of events, is one AIOps run) share: the
run document of a log, its events that are objects, an event's time. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._common import Builder


def aiops_doc(builder: Builder, messages: list[dict[str, Any]], query: str, answer: str | None,
              session_id: str | None, times: list[str]) -> dict[str, Any]:
    """The AIOps run document of a whole-file log: status SUCCESS (FAILED when a terminal
    call gave up), answer = a terminal call's answer, else ``answer``; the report is the
    answer; times = the first and last of ``times`` (ISO 8601)."""
    if builder.final_answer is not None:
        answer = builder.final_answer
    doc: dict[str, Any] = {
        "session_id": session_id or builder.run_id, "kind": "aiops", "query": query, "answer": answer,
        "status": "FAILED" if builder.gave_up else "SUCCESS", "messages": messages,
        "tool_calls": builder.calls,
        "started_at": times[0] if times else None, "finished_at": times[-1] if times else None}
    if answer:
        doc["report"] = {"content": answer}
    return doc


def mappings(events: list[Any]) -> list[Mapping[str, Any]]:
    """The events that are JSON objects."""
    return [e for e in events if isinstance(e, Mapping)]


def time_text(value: Any) -> str | None:
    """A non-empty text (an event's ISO 8601 time as the log gives it), else None."""
    return value if isinstance(value, str) and value else None
