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
    mapping_at,
    message_entry,
    text_at,
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
    session_id, stream_id = _first_text_of(events, "sessionId"), _first_text_of(events, "session_id")
    builder = Builder(check_run_id(_run_id(session_id, stream_id), "run id"), options)
    reader = _Reader(builder)
    result = reader.read(events)
    builder.unfinished()
    messages = reader.messages
    query = first_text(messages, "user") or ""
    if not query and stream_id and not session_id:
        builder.warn("no_query", "stream-json carries no prompt: the run has no query")
    doc = aiops_doc(builder, messages, query, _answer(messages, result), session_id or stream_id, reader.times)
    if result is not None:
        _apply_result(doc, result)
    return builder.adapted(doc)


def _run_id(session_id: str | None, stream_id: str | None) -> str:
    """``claude-code-<sessionId>``, or for a stream-json alone ``claude-code-<session_id>-stream``;
    ``RecordError`` when the lines have neither."""
    if session_id is None and stream_id is None:
        raise RecordError("no line has a sessionId / session_id: not a Claude Code session log or stream-json")
    return f"claude-code-{session_id}" if session_id else f"claude-code-{stream_id}-stream"


def _first_text_of(events: list[Mapping[str, Any]], key: str) -> str | None:
    """The first event's ``key`` that is a text."""
    return next((e[key] for e in events if isinstance(e.get(key), str)), None)


def _blocks(event: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The content blocks of a line's ``message`` that are objects (a text content is
    one text block)."""
    message = mapping_at(event, "message")
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    return [block for block in blocks if isinstance(block, Mapping)]


class _Reader:
    """The run being read: its messages, its calls by the source's ``tool_use`` id, the
    times of its user / assistant lines."""

    def __init__(self, builder: Builder) -> None:
        self.builder = builder
        self.messages: list[dict[str, Any]] = []
        self.calls: dict[str, dict[str, Any]] = {}
        self.times: list[str] = []

    def read(self, events: list[Mapping[str, Any]]) -> Mapping[str, Any] | None:
        """Every user and assistant line; the (last) ``result`` line, or None."""
        result: Mapping[str, Any] | None = None
        for line, event in enumerate(events):
            if event.get("type") == "result":
                result = event
            elif event.get("type") in ("user", "assistant"):
                self.event(line, event)
        return result

    def event(self, line: int, event: Mapping[str, Any]) -> None:
        """A user or assistant line: its text blocks are the message, its ``tool_use``
        blocks start calls, its ``tool_result`` blocks end them, at the line's time."""
        when = text_at(event, "timestamp")
        if when:
            self.times.append(when)
        texts, call_ids = [], []
        for block in _blocks(event):
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "tool_use" and (call_id := self._start(block, when)):
                call_ids.append(call_id)
            elif kind == "tool_result":
                self._finish(line, block, when)
        if texts or call_ids:
            self.messages.append(message_entry(f"l{line}", event["type"], "\n".join(texts) or None, call_ids))

    def _start(self, block: Mapping[str, Any], when: str | None) -> str | None:
        """The id of the call a ``tool_use`` block starts (None when not made)."""
        source = text_at(block, "id")
        call = self.builder.start(source, str(block.get("name") or "unknown"), block.get("input"),
                                  started_at=when)
        if call is None:
            return None
        self.calls[source or call["id"]] = call
        return call["id"]

    def _finish(self, line: int, block: Mapping[str, Any], when: str | None) -> None:
        """A ``tool_result`` block ends its call through the failure rules."""
        call = self.builder.result_for(self.calls.get(block.get("tool_use_id")), block.get("tool_use_id"),
                                       f"line {line}")
        if call is not None:
            self.builder.finish(call, text_of(block.get("content")), block, completed_at=when)


def _answer(messages: list[dict[str, Any]], result: Mapping[str, Any] | None) -> str | None:
    """The ``result`` line's text when it has one, else the last assistant text."""
    if result is not None and isinstance(result.get("result"), str) and result["result"].strip():
        return result["result"]
    return first_text(messages, "assistant", last=True)


def _apply_result(doc: dict[str, Any], result: Mapping[str, Any]) -> None:
    """The ``result`` line's verdict on the run: FAILED when it is an error or not a
    success; its facts (subtype, turns, duration, cost ...) as the orchestration trace."""
    if result.get("is_error") is True or result.get("subtype") not in (None, "success"):
        doc["status"] = "FAILED"
    doc["orchestration_trace"] = {"source": "claude-code result", **{
        k: result[k] for k in ("subtype", "num_turns", "duration_ms", "total_cost_usd", "stop_reason",
                               "terminal_reason") if k in result}}
