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
    text_at,
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
    records, first_seen = _latest_records(events)
    responded = _response_times(records)
    times = _times(header, records)
    messages = [entry for rid, record in records.items()
                if (entry := _message(builder, rid, record, time_text(first_seen.get(rid)), responded))]
    builder.unfinished()
    return builder.adapted(aiops_doc(builder, messages, first_text(messages, "user") or "",
                                     first_text(messages, "assistant", last=True), header["sessionId"],
                                     sorted(times)))


def _times(header: Mapping[str, Any], records: dict[str, Mapping[str, Any]]) -> list[str]:
    """The header's start, every record's time and the header's last update that are texts."""
    return [t for t in (header.get("startTime"), *(r.get("timestamp") for r in records.values()),
                        header.get("lastUpdated")) if isinstance(t, str)]


def _message(builder: Builder, rid: str, record: Mapping[str, Any], first_seen: str | None,
             responded: dict[str, Any]) -> dict[str, Any] | None:
    """The message of record ``rid`` with the calls its ``toolCalls`` start; None for a
    user record without text (it carries call results) or a record with neither."""
    text = _gemini_text(record.get("content"))
    call_ids = [call_id for position, tool_call in enumerate(record.get("toolCalls") or [])
                if (call_id := _call(builder, rid, position, tool_call, first_seen, responded))]
    if record.get("type") == "user" and not text:
        return None
    if not (text or call_ids):
        return None
    role = "user" if record["type"] == "user" else "assistant"
    return message_entry(rid, role, text or None, call_ids)


def _latest_records(events: list[Mapping[str, Any]]) -> tuple[dict[str, Mapping[str, Any]], dict[str, Any]]:
    """The user / gemini records by id, a later version of a record replacing it (in
    the place it first had), and the time each id was first seen."""
    records: dict[str, Mapping[str, Any]] = {}
    first_seen: dict[str, Any] = {}
    for event in events:
        if event.get("type") in ("user", "gemini") and isinstance(event.get("id"), str):
            records[event["id"]] = event
            first_seen.setdefault(event["id"], event.get("timestamp"))
    return records, first_seen


def _response_times(records: dict[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Call id -> the time of the (first) user record carrying its ``functionResponse``."""
    responded: dict[str, Any] = {}
    for record in records.values():
        if record.get("type") == "user" and isinstance(record.get("content"), list):
            for part in record["content"]:
                response = part.get("functionResponse") if isinstance(part, Mapping) else None
                if isinstance(response, Mapping) and isinstance(response.get("id"), str):
                    responded.setdefault(response["id"], record.get("timestamp"))
    return responded


def _call(builder: Builder, rid: str, position: int, tool_call: Any, started_at: str | None,
          responded: dict[str, Any]) -> str | None:
    """The id of the call ``toolCalls[position]`` of record ``rid`` starts (None when
    skipped), ended through the failure rules once it is no longer executing."""
    if not isinstance(tool_call, Mapping) or not isinstance(tool_call.get("name"), str):
        builder.warn("no_function_name", f"record {rid}.toolCalls[{position}]: no name; skipped")
        return None
    source = text_at(tool_call, "id")
    call = builder.start(source, tool_call["name"], tool_call.get("args"), started_at=started_at)
    if call is None:
        return None
    if tool_call.get("result") is None and tool_call.get("status") in (None, "executing", "scheduled"):
        return call["id"]
    result = _result(tool_call.get("result"))
    end = time_text(responded.get(source or "")) or time_text(tool_call.get("timestamp"))
    builder.finish(call, result if isinstance(result, (Mapping, str)) else text_of(result),
                   tool_call, completed_at=end)
    return call["id"]


def _result(result: Any) -> Any:
    """A call's result: a ``[{functionResponse: {response}}]`` list read as its response
    (its ``output`` alone when that is all it holds); anything else as it is."""
    if isinstance(result, list) and result and isinstance(result[0], Mapping):
        response = (result[0].get("functionResponse") or {}).get("response")
        if isinstance(response, Mapping):
            return response.get("output") if set(response) == {"output"} else response
    return result
