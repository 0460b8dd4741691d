"""The ``gemini`` format: a Gemini CLI session log (SREGym keeps it), the whole file one
AIOps run. Pure: events in, an ``Adapted`` out; ``RecordError`` when the events are not
of the format."""

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


def _gemini_text(content: Any) -> str | None:
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str))
    return content if isinstance(content, str) else None


def adapt_gemini(events: list[Any], stem: str, options: Options = DEFAULT_OPTIONS) -> Adapted:
    """A Gemini CLI session log (a ``{sessionId, startTime}`` header, then
    ``{id, timestamp, type: user | gemini, content, toolCalls}`` records, a record
    re-written with the same id replacing the earlier one, and ``$set`` update lines) as
    one AIOps run: query = the first user text, answer and report = the last gemini
    text; each ``toolCalls[i]`` is a call started at its record's time and ended at the
    time of the user record that carries its ``functionResponse`` (else its own
    ``timestamp``), through the failure rules (``status: "error"`` = ``flag``, a
    response with an ``error`` field = ``json_error``). Run id ``gemini-<sessionId>``."""
    events = mappings(events)
    header = next((e for e in events if isinstance(e.get("sessionId"), str) and "startTime" in e), None)
    if header is None:
        raise RecordError("no {sessionId, startTime} header line: not a Gemini CLI session log")
    builder = Builder(check_run_id(f"gemini-{header['sessionId']}", "run id"), options)
    records: dict[str, Mapping[str, Any]] = {}
    first_seen: dict[str, str] = {}
    for event in events:
        if event.get("type") in ("user", "gemini") and isinstance(event.get("id"), str):
            records[event["id"]] = event  # a later version of a record replaces it
            first_seen.setdefault(event["id"], event.get("timestamp"))
    responded: dict[str, str] = {}
    for record in records.values():
        if record.get("type") == "user" and isinstance(record.get("content"), list):
            for part in record["content"]:
                response = part.get("functionResponse") if isinstance(part, Mapping) else None
                if isinstance(response, Mapping) and isinstance(response.get("id"), str):
                    responded.setdefault(response["id"], record.get("timestamp"))
    messages: list[dict[str, Any]] = []
    times = [t for t in (header.get("startTime"), *(r.get("timestamp") for r in records.values()),
                         header.get("lastUpdated")) if isinstance(t, str)]
    for rid, record in records.items():
        text = _gemini_text(record.get("content"))
        call_ids = []
        for position, tool_call in enumerate(record.get("toolCalls") or []):
            if not isinstance(tool_call, Mapping) or not isinstance(tool_call.get("name"), str):
                builder.warn("no_function_name", f"record {rid}.toolCalls[{position}]: no name; skipped")
                continue
            source = tool_call.get("id") if isinstance(tool_call.get("id"), str) else None
            call = builder.start(source, tool_call["name"], tool_call.get("args"),
                                 started_at=time_text(first_seen.get(rid)))
            if call is None:
                continue
            call_ids.append(call["id"])
            if tool_call.get("result") is None and tool_call.get("status") in (None, "executing", "scheduled"):
                continue
            result: Any = tool_call.get("result")
            if isinstance(result, list) and result and isinstance(result[0], Mapping):
                response = (result[0].get("functionResponse") or {}).get("response")
                if isinstance(response, Mapping):
                    result = response.get("output") if set(response) == {"output"} else response
            end = time_text(responded.get(source or "")) or time_text(tool_call.get("timestamp"))
            builder.finish(call, result if isinstance(result, (Mapping, str)) else text_of(result),
                           tool_call, completed_at=end)
        if record.get("type") == "user" and not text:
            continue
        if text or call_ids:
            role = "user" if record["type"] == "user" else "assistant"
            messages.append(message_entry(rid, role, text or None, call_ids))
    builder.unfinished()
    return builder.adapted(aiops_doc(builder, messages, first_text(messages, "user") or "",
                                     first_text(messages, "assistant", last=True), header["sessionId"],
                                     sorted(times)))
