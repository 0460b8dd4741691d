"""Adapters of whole-file formats, where one file (a list of events) is one AIOps run:
Claude Code session logs and ``stream-json`` stdout, OpenAI Codex CLI rollouts. Pure:
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
    message_entry,
    text_of,
)


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


def adapt_claude_code(events: list[Any], stem: str, options: Options = DEFAULT_OPTIONS) -> Adapted:
    """A Claude Code session log (``{type, uuid, sessionId, timestamp, message}`` lines) or
    its ``--output-format stream-json`` stdout (``session_id``, no clocks, a final
    ``result`` line) as one AIOps run: query = the first user prompt, answer and report =
    the ``result`` line's text, else the last assistant text; ``tool_use`` blocks are calls
    started at their line's time, ``tool_result`` blocks end them at theirs through the
    failure rules (``is_error: true`` = ``flag``). Run id ``claude-code-<sessionId>``; a
    stream-json read alone is the run ``claude-code-<session_id>-stream`` (it carries no
    prompt); read beside its session log (``reading._claude_code_pair``) its ``result``
    line joins the log's events and both files are the one run ``claude-code-<sessionId>``.
    Raises ``RecordError`` when no line is a Claude Code event."""
    events = mappings(events)
    session_id = next((e["sessionId"] for e in events if isinstance(e.get("sessionId"), str)), None)
    stream_id = next((e["session_id"] for e in events if isinstance(e.get("session_id"), str)), None)
    if session_id is None and stream_id is None:
        raise RecordError("no line has a sessionId / session_id: not a Claude Code session log or stream-json")
    run_id = f"claude-code-{session_id}" if session_id else f"claude-code-{stream_id}-stream"
    builder = Builder(check_run_id(run_id, "run id"), options)
    messages: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    times: list[str] = []
    result: Mapping[str, Any] | None = None
    for line, event in enumerate(events):
        if event.get("type") == "result":
            result = event
            continue
        if event.get("type") not in ("user", "assistant"):
            continue
        when = event.get("timestamp") if isinstance(event.get("timestamp"), str) else None
        if when:
            times.append(when)
        message = event.get("message") if isinstance(event.get("message"), Mapping) else {}
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        texts, call_ids = [], []
        for block in blocks:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "tool_use":
                source = block.get("id") if isinstance(block.get("id"), str) else None
                call = builder.start(source, str(block.get("name") or "unknown"), block.get("input"),
                                     started_at=when)
                if call is not None:
                    calls[source or call["id"]] = call
                    call_ids.append(call["id"])
            elif kind == "tool_result":
                call = builder.result_for(calls.get(block.get("tool_use_id")), block.get("tool_use_id"), f"line {line}")
                if call is not None:
                    builder.finish(call, text_of(block.get("content")), block, completed_at=when)
        if texts or call_ids:
            messages.append(message_entry(f"l{line}", event["type"], "\n".join(texts) or None, call_ids))
    builder.unfinished()
    answer = first_text(messages, "assistant", last=True)
    status_failed = False
    if result is not None:
        if isinstance(result.get("result"), str) and result["result"].strip():
            answer = result["result"]
        status_failed = result.get("is_error") is True or result.get("subtype") not in (None, "success")
    query = first_text(messages, "user") or ""
    if not query and stream_id and not session_id:
        builder.warn("no_query", "stream-json carries no prompt: the run has no query")
    doc = aiops_doc(builder, messages, query, answer, session_id or stream_id, times)
    if status_failed:
        doc["status"] = "FAILED"
    if result is not None:
        doc["orchestration_trace"] = {"source": "claude-code result", **{
            k: result[k] for k in ("subtype", "num_turns", "duration_ms", "total_cost_usd", "stop_reason",
                                   "terminal_reason") if k in result}}
    return builder.adapted(doc)


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

