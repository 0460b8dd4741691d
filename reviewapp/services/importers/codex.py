"""The ``codex`` format: an OpenAI Codex CLI rollout, the whole file one AIOps run. Pure:
events in, an ``Adapted`` out; ``RecordError`` when the events are not of the format."""

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
    text_of,
)
from ._logs import aiops_doc, mappings


def adapt_codex(events: list[Any], stem: str, options: Options = DEFAULT_OPTIONS) -> Adapted:
    """An OpenAI Codex CLI rollout (``{timestamp, type, payload}`` lines) as one AIOps
    run: query = the user_message event, answer and report = task_complete's last agent
    message (else the last assistant message), ``function_call`` / ``function_call_output``
    paired by ``call_id`` through the failure rules (a ``Process exited with code N``
    header with N != 0 = ``exit_code``). Run id ``codex-<session id>``.
    Raises ``RecordError`` when no line is a Codex event."""
    events = mappings(events)
    if not any(isinstance(e.get("payload"), Mapping) and e.get("type") in ("session_meta", "response_item")
               for e in events):
        raise RecordError("no session_meta / response_item line: not a Codex rollout")
    meta = next((e["payload"] for e in events
                 if e.get("type") == "session_meta" and isinstance(e.get("payload"), Mapping)), {})
    session_id = meta.get("id") if isinstance(meta.get("id"), str) else None
    builder = Builder(check_run_id(f"codex-{session_id or stem}", "run id"), options)
    messages: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    query, answer, times = "", None, []
    for line, event in enumerate(events):
        if not isinstance(event.get("payload"), Mapping):
            continue
        when, payload = event.get("timestamp"), event["payload"]
        if isinstance(when, str):
            times.append(when)
        kind = payload.get("type")
        if event.get("type") == "event_msg":
            if kind == "user_message" and not query and isinstance(payload.get("message"), str):
                query = payload["message"]
            elif kind == "task_complete" and isinstance(payload.get("last_agent_message"), str):
                answer = payload["last_agent_message"]
            continue
        if event.get("type") != "response_item":
            continue
        if kind == "message" and payload.get("role") in ("user", "assistant", "developer", "system"):
            role = "system" if payload["role"] == "developer" else payload["role"]
            messages.append({"id": f"l{line}", "role": role, "content": text_of(payload.get("content"))})
        elif kind in ("function_call", "custom_tool_call"):
            source = payload.get("call_id") if isinstance(payload.get("call_id"), str) else None
            raw = payload.get("arguments", payload.get("input"))
            call = builder.start(source, str(payload.get("name") or "unknown"),
                                 builder.arguments(raw, f"line {line}"), started_at=when)
            if call is None:
                continue
            calls[source or call["id"]] = call
            if messages and messages[-1]["role"] == "assistant":
                messages[-1].setdefault("metadata", {"tool_call_ids": []})["tool_call_ids"].append(call["id"])
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call = builder.result_for(calls.get(payload.get("call_id")), payload.get("call_id"), f"line {line}")
            if call is not None:
                builder.finish(call, text_of(payload.get("output")), payload, completed_at=when)
    builder.unfinished()
    if answer is None:
        answer = first_text(messages, "assistant", last=True)
    return builder.adapted(aiops_doc(builder, messages, query, answer, session_id, times))
