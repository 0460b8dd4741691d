"""The ``claude-code`` format: a Claude Code session log or its ``stream-json`` stdout,
the whole file one AIOps run. Pure: events in, an ``Adapted`` out; ``RecordError`` when
the events are not of the format."""

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
