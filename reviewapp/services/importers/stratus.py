"""The ``stratus`` format: a Stratus agent trajectory (SREGym keeps it; staged LangChain
messages), the whole file one AIOps run with a step per stage. Pure: events in, an
``Adapted`` out; ``RecordError`` when the events are not of the format."""

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
from ._logs import aiops_doc, mappings

_STRATUS_ROLES = {"HumanMessage": "user", "AIMessage": "assistant", "SystemMessage": "system",
                  "human": "user", "ai": "assistant", "system": "system"}


def adapt_stratus(events: list[Any], stem: str, options: Options = DEFAULT_OPTIONS) -> Adapted:
    """A Stratus agent trajectory (a ``metadata`` line, ``stage_start`` lines, and per
    stage an ``event`` line with the stage's whole LangChain ``messages`` list) as one
    AIOps run with a diagnostic step per stage: query = the first stage's human message,
    answer and report = the last stage's submission (``*submit*`` call's ``ans``), else
    the last AI text; ``AIMessage.tool_calls`` are calls, each ``ToolMessage`` ends the
    stage's next open call (by ``tool_call_id`` when given, else in order) through the
    failure rules. Only the last ``event`` line of a stage counts. No clocks. Run id
    ``stratus-<problem_id>-<timestamp>``."""
    events = mappings(events)
    meta = next((e for e in events if e.get("type") == "metadata"), None)
    stages: dict[str, Mapping[str, Any]] = {}
    for event in events:
        if event.get("type") == "event" and isinstance(event.get("messages"), list):
            stages[str(event.get("stage") or f"stage-{len(stages)}")] = event
    if meta is None or not stages:
        raise RecordError("no metadata line and stage events: not a Stratus trajectory")
    name = "-".join(str(meta[k]) for k in ("problem_id", "timestamp") if isinstance(meta.get(k), str)) or stem
    builder = Builder(check_run_id(f"stratus-{name}"[:160], "run id"), options)
    messages: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    answer = None
    for stage, event in stages.items():
        pending: list[dict[str, Any]] = []
        by_id: dict[str, dict[str, Any]] = {}
        submitted = None
        for index, message in enumerate(event["messages"]):
            if not isinstance(message, Mapping):
                continue
            kind = message.get("type")
            if kind in ("ToolMessage", "tool"):
                builder.tool_like = True
                call = by_id.pop(message.get("tool_call_id"), None) if message.get("tool_call_id") else None
                if call is None and pending:
                    call = pending[0]
                if call is None:
                    builder.warn("unknown_result", f"{stage}.messages[{index}]: tool message without a call; skipped")
                    continue
                pending.remove(call)
                builder.finish(call, text_of(message.get("content")), message)
                continue
            role = _STRATUS_ROLES.get(str(kind))
            if role is None:
                builder.warn("role_skipped", f"{stage}.messages[{index}]: type {kind!r} not imported")
                continue
            call_ids = []
            for position, tool_call in enumerate(message.get("tool_calls") or []):
                if not isinstance(tool_call, Mapping) or not isinstance(tool_call.get("name"), str):
                    builder.warn("no_function_name", f"{stage}.messages[{index}].tool_calls[{position}]: no name")
                    continue
                source = tool_call.get("id") if isinstance(tool_call.get("id"), str) else None
                arguments = tool_call.get("args")
                if "submit" in tool_call["name"].lower() and isinstance(arguments, Mapping):
                    submitted = next((v for v in arguments.values() if isinstance(v, str) and v.strip()), submitted)
                call = builder.start(source, tool_call["name"], arguments)
                if call is None:
                    continue
                call["step_id"] = stage
                pending.append(call)
                if source:
                    by_id[source] = call
                call_ids.append(call["id"])
            content = text_of(message.get("content")) or None
            if content or call_ids:
                messages.append(message_entry(f"{stage}-{index}", role, content, call_ids))
        last_ai = next((text_of(m.get("content")) for m in reversed(event["messages"])
                        if isinstance(m, Mapping) and m.get("type") == "AIMessage" and m.get("content")), None)
        summary = submitted or last_ai
        steps.append({"id": stage[:160], "name": stage[:200], "summary": summary,
                      "status": "submitted" if event.get("submitted") else "finished"})
        answer = summary or answer
    builder.unfinished()
    query = first_text(messages, "user") or ""
    doc = aiops_doc(builder, messages, query, answer, None, [])
    doc["steps"] = steps
    return builder.adapted(doc)
