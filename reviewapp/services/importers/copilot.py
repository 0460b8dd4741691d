"""The ``copilot`` format: a GitHub Copilot CLI event stream (SREGym keeps it), the whole
file one AIOps run. Pure: events in, an ``Adapted`` out; ``RecordError`` when the
events are not of the format."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

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


def adapt_copilot(events: list[Any], stem: str, options: Options = DEFAULT_OPTIONS) -> Adapted:
    """A GitHub Copilot CLI event stream (``{type, data, id, timestamp}`` lines) as one
    AIOps run: query = the ``user.message``, answer and report = the last
    ``assistant.message`` text; ``toolRequests`` are calls, started at
    ``tool.execution_start`` and ended at ``tool.execution_complete`` through the failure
    rules (``success: false`` = ``flag``); the ``result`` line's ``exitCode`` != 0 makes
    the run FAILED. Run id ``copilot-<sessionId>``."""
    events = mappings(events)
    if not any(_is_copilot_event(e) for e in events):
        raise RecordError("no session.* / user.* / assistant.* / tool.* event: not a Copilot CLI log")
    result = next((e for e in events if e.get("type") == "result"), {})
    session_id = text_at(result, "sessionId")
    reader = _Reader(Builder(check_run_id(f"copilot-{session_id or stem}", "run id"), options))
    for line, event in enumerate(events):
        reader.event(line, event)
    times = reader.times
    builder = reader.builder
    builder.unfinished()
    doc = aiops_doc(builder, reader.messages, reader.query,
                    first_text(reader.messages, "assistant", last=True), session_id, times)
    if _exit_code(result.get("exitCode")):
        doc["status"] = "FAILED"
    return builder.adapted(doc)


def _is_copilot_event(event: Mapping[str, Any]) -> bool:
    """A ``session.*`` / ``user.*`` / ``assistant.*`` / ``tool.*`` event with its ``data``."""
    kind = event.get("type")
    return (isinstance(kind, str) and isinstance(event.get("data"), Mapping)
            and kind.startswith(("session.", "user.", "assistant.", "tool.")))


def _exit_code(code: Any) -> int:
    """The ``result`` line's ``exitCode`` when it is an integer (not a boolean), else 0."""
    return code if isinstance(code, int) and not isinstance(code, bool) else 0


class _Reader:
    """The run being read: its messages, its calls by the source's ``toolCallId``, the
    query (the first user message); one method per event type (``HANDLERS``)."""

    def __init__(self, builder: Builder) -> None:
        self.builder = builder
        self.messages: list[dict[str, Any]] = []
        self.calls: dict[str, dict[str, Any]] = {}
        self.query = ""
        self.times: list[str] = []

    def event(self, line: int, event: Mapping[str, Any]) -> None:
        """One line: its time kept (an ephemeral one's aside), its ``data`` read by the
        handler of its type (other types only count for the times)."""
        when = time_text(event.get("timestamp"))
        if when and not event.get("ephemeral"):
            self.times.append(when)
        kind = event.get("type")
        handle = self.HANDLERS.get(kind) if isinstance(kind, str) else None
        if handle is not None and isinstance(event.get("data"), Mapping):
            handle(self, line, event["data"], when)

    def user_message(self, line: int, data: Mapping[str, Any], when: str | None) -> None:
        """The user's message (the first one is the query)."""
        if isinstance(data.get("content"), str):
            self.query = self.query or data["content"]
            self.messages.append({"id": f"l{line}", "role": "user", "content": data["content"]})

    def assistant_message(self, line: int, data: Mapping[str, Any], when: str | None) -> None:
        """An assistant message; its ``toolRequests`` start calls."""
        call_ids = []
        for position, request in enumerate(data.get("toolRequests") or []):
            if not isinstance(request, Mapping) or not isinstance(request.get("name"), str):
                self.builder.warn("no_function_name", f"line {line}.toolRequests[{position}]: no name; skipped")
                continue
            source = text_at(request, "toolCallId")
            call = self.builder.start(source, request["name"],
                                      self.builder.arguments(request.get("arguments"), f"line {line}"),
                                      started_at=when)
            if call is not None:
                self.calls[source or call["id"]] = call
                call_ids.append(call["id"])
        content = text_at(data, "content")
        if content or call_ids:
            self.messages.append(message_entry(f"l{line}", "assistant", content or None, call_ids))

    def execution_start(self, line: int, data: Mapping[str, Any], when: str | None) -> None:
        """A call's execution starts: its start time."""
        call = self.calls.get(data.get("toolCallId"))
        if call is not None and when:
            call["started_at"] = when

    def execution_complete(self, line: int, data: Mapping[str, Any], when: str | None) -> None:
        """A call's execution ends: its result through the failure rules."""
        call = self.builder.result_for(self.calls.get(data.get("toolCallId")), data.get("toolCallId"),
                                       f"line {line}")
        if call is None:
            return
        outcome = data.get("result")
        output = outcome.get("content") if isinstance(outcome, Mapping) and "content" in outcome else outcome
        error = data.get("error")
        envelope = {**data, "error": text_of(error.get("message") if isinstance(error, Mapping) else error)}
        self.builder.finish(call, text_of(output), envelope, completed_at=when)

    HANDLERS: ClassVar[dict[Any, Callable[[_Reader, int, Mapping[str, Any], str | None], None]]] = {
        "user.message": user_message,
        "assistant.message": assistant_message,
        "tool.execution_start": execution_start,
        "tool.execution_complete": execution_complete,
    }
