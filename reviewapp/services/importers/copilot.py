"""The ``copilot`` format: a GitHub Copilot CLI event stream (SREGym keeps it), the whole
file one AIOps run. Pure: events in, an ``Adapted`` out; ``RecordError`` when the
events are not of the format."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._common import (
    DEFAULT_OPTIONS,
    Adapted,
    Builder,
    Options,
    RecordError,
    check_run_id,
    first_text,
    message_entry,
    text_of,
)
from ._logs import aiops_doc, mappings, time_text


def adapt_copilot(events: list[Any], stem: str, options: Options = DEFAULT_OPTIONS) -> Adapted:
    """A GitHub Copilot CLI event stream (``{type, data, id, timestamp}`` lines) as one
    AIOps run: query = the ``user.message``, answer and report = the last
    ``assistant.message`` text; ``toolRequests`` are calls, started at
    ``tool.execution_start`` and ended at ``tool.execution_complete`` through the failure
    rules (``success: false`` = ``flag``); the ``result`` line's ``exitCode`` != 0 makes
    the run FAILED. Run id ``copilot-<sessionId>``."""
    events = mappings(events)
    if not any(isinstance(e.get("type"), str) and isinstance(e.get("data"), Mapping)
               and e["type"].startswith(("session.", "user.", "assistant.", "tool.")) for e in events):
        raise RecordError("no session.* / user.* / assistant.* / tool.* event: not a Copilot CLI log")
    result = next((e for e in events if e.get("type") == "result"), {})
    session_id = result.get("sessionId") if isinstance(result.get("sessionId"), str) else None
    builder = Builder(check_run_id(f"copilot-{session_id or stem}", "run id"), options)
    messages: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    query, times = "", []
    for line, event in enumerate(events):
        kind, data, when = event.get("type"), event.get("data"), time_text(event.get("timestamp"))
        if when and not event.get("ephemeral"):
            times.append(when)
        if not isinstance(data, Mapping):
            continue
        if kind == "user.message" and isinstance(data.get("content"), str):
            query = query or data["content"]
            messages.append({"id": f"l{line}", "role": "user", "content": data["content"]})
        elif kind == "assistant.message":
            call_ids = []
            for position, request in enumerate(data.get("toolRequests") or []):
                if not isinstance(request, Mapping) or not isinstance(request.get("name"), str):
                    builder.warn("no_function_name", f"line {line}.toolRequests[{position}]: no name; skipped")
                    continue
                source = request.get("toolCallId") if isinstance(request.get("toolCallId"), str) else None
                call = builder.start(source, request["name"],
                                     builder.arguments(request.get("arguments"), f"line {line}"), started_at=when)
                if call is not None:
                    calls[source or call["id"]] = call
                    call_ids.append(call["id"])
            content = data.get("content") if isinstance(data.get("content"), str) else None
            if content or call_ids:
                messages.append(message_entry(f"l{line}", "assistant", content or None, call_ids))
        elif kind == "tool.execution_start":
            call = calls.get(data.get("toolCallId"))
            if call is not None and when:
                call["started_at"] = when
        elif kind == "tool.execution_complete":
            call = builder.result_for(calls.get(data.get("toolCallId")), data.get("toolCallId"), f"line {line}")
            if call is None:
                continue
            outcome = data.get("result")
            output = outcome.get("content") if isinstance(outcome, Mapping) and "content" in outcome else outcome
            error = data.get("error")
            envelope = {**data, "error": text_of(error.get("message") if isinstance(error, Mapping) else error)}
            builder.finish(call, text_of(output), envelope, completed_at=when)
    builder.unfinished()
    doc = aiops_doc(builder, messages, query, first_text(messages, "assistant", last=True), session_id, times)
    code = result.get("exitCode")
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        doc["status"] = "FAILED"
    return builder.adapted(doc)
