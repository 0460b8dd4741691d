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
    text_at,
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
    session_id = _session_id(events)
    builder = Builder(check_run_id(f"codex-{session_id or stem}", "run id"), options)
    reader = _Reader(builder)
    for line, event in enumerate(events):
        if isinstance(event.get("payload"), Mapping):
            reader.line(line, event)
    builder.unfinished()
    answer = reader.answer
    if answer is None:
        answer = first_text(reader.messages, "assistant", last=True)
    return builder.adapted(aiops_doc(builder, reader.messages, reader.query, answer, session_id, reader.times))


def _session_id(events: list[Mapping[str, Any]]) -> str | None:
    """The rollout's session id (its ``session_meta`` payload's ``id``); ``RecordError``
    when no line is a ``session_meta`` / ``response_item`` with a payload."""
    if not any(isinstance(e.get("payload"), Mapping) and e.get("type") in ("session_meta", "response_item")
               for e in events):
        raise RecordError("no session_meta / response_item line: not a Codex rollout")
    meta = next((e["payload"] for e in events
                 if e.get("type") == "session_meta" and isinstance(e.get("payload"), Mapping)), {})
    return text_at(meta, "id")


class _Reader:
    """The run being read: its messages, its calls by ``call_id``, the query (the first
    user_message), the answer (task_complete's last agent message), the lines' times."""

    def __init__(self, builder: Builder) -> None:
        self.builder = builder
        self.messages: list[dict[str, Any]] = []
        self.calls: dict[str, dict[str, Any]] = {}
        self.query, self.answer = "", None
        self.times: list[str] = []

    def line(self, line: int, event: Mapping[str, Any]) -> None:
        """A line with a ``payload``: its time kept, read as an ``event_msg`` or a
        ``response_item`` (any other type only counts for the times)."""
        when, payload = event.get("timestamp"), event["payload"]
        if isinstance(when, str):
            self.times.append(when)
        if event.get("type") == "event_msg":
            self.event_msg(payload)
        elif event.get("type") == "response_item":
            self.response_item(line, payload, when)

    def event_msg(self, payload: Mapping[str, Any]) -> None:
        """An ``event_msg`` line: the first user message is the query, task_complete's
        last agent message the answer."""
        kind = payload.get("type")
        if kind == "user_message" and not self.query and isinstance(payload.get("message"), str):
            self.query = payload["message"]
        elif kind == "task_complete" and isinstance(payload.get("last_agent_message"), str):
            self.answer = payload["last_agent_message"]

    def response_item(self, line: int, payload: Mapping[str, Any], when: Any) -> None:
        """A ``response_item`` line: a message (developer read as system), a call, a call's output."""
        kind = payload.get("type")
        if kind == "message" and payload.get("role") in ("user", "assistant", "developer", "system"):
            role = "system" if payload["role"] == "developer" else payload["role"]
            self.messages.append({"id": f"l{line}", "role": role, "content": text_of(payload.get("content"))})
        elif kind in ("function_call", "custom_tool_call"):
            self._start(line, payload, when)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call = self.builder.result_for(self.calls.get(payload.get("call_id")), payload.get("call_id"),
                                           f"line {line}")
            if call is not None:
                self.builder.finish(call, text_of(payload.get("output")), payload, completed_at=when)

    def _start(self, line: int, payload: Mapping[str, Any], when: Any) -> None:
        """A call, listed on the assistant message just before it (if that is the last)."""
        source = text_at(payload, "call_id")
        raw = payload.get("arguments", payload.get("input"))
        call = self.builder.start(source, str(payload.get("name") or "unknown"),
                                  self.builder.arguments(raw, f"line {line}"), started_at=when)
        if call is None:
            return
        self.calls[source or call["id"]] = call
        if self.messages and self.messages[-1]["role"] == "assistant":
            self.messages[-1].setdefault("metadata", {"tool_call_ids": []})["tool_call_ids"].append(call["id"])
