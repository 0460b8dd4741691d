"""The ``openai-messages`` format: chat-completions message lists, one run per record
(``tau-bench`` reads its trajectories through ``chat_messages_doc`` too). Pure: a record
in, an ``Adapted`` out; ``RecordError`` when it is not of the format."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._common import (
    DEFAULT_OPTIONS,
    Adapted,
    Builder,
    Options,
    RecordError,
    Warn,
    check_run_id,
    first_text,
    message_entry,
    message_time,
    text_at,
    text_of,
)

# Fields of a chat message that only a tool-calling conversation has.
TOOL_FIELDS = ("tool_calls", "function_call", "tool_call_id")


def chat_messages_doc(messages: Any, builder: Builder) -> dict[str, Any]:
    """A chat-completions message list as a chat run document (without status /
    outcome), its calls made through ``builder`` (failure rules, terminal pseudo-tools).
    Raises ``RecordError`` when ``messages`` is not a list of message objects with roles."""
    if not isinstance(messages, list) or not all(isinstance(m, Mapping) for m in messages):
        raise RecordError("expected a list of message objects")
    if messages and not any(isinstance(m.get("role"), str) for m in messages):
        raise RecordError("no message has a role; not a chat-completions message list")
    chat = _Chat(builder)
    for index, message in enumerate(messages):
        chat.read(index, message)
    out_messages = chat.messages
    builder.unfinished()
    doc: dict[str, Any] = {"kind": "chat", "messages": out_messages, "tool_calls": builder.calls,
                           "query": first_text(out_messages, "user") or "",
                           "answer": first_text(out_messages, "assistant", last=True)}
    if builder.final_answer is not None:
        doc["answer"] = builder.final_answer
    return doc


class _Chat:
    """A message list being read: the run's messages, and each name's or source id's
    calls still waiting for their result (in order)."""

    def __init__(self, builder: Builder) -> None:
        self.builder = builder
        self.messages: list[dict[str, Any]] = []
        self.pending: dict[str, list[dict[str, Any]]] = {}

    def read(self, index: int, message: Mapping[str, Any]) -> None:
        """``messages[index]``: a tool / function result ends its call; a system (or
        developer), user or assistant message is kept with the calls it requests; any
        other role is skipped with a warning."""
        role = message.get("role")
        where = f"messages[{index}]"
        if any(message.get(f) for f in TOOL_FIELDS):
            self.builder.tool_like = True
        if role in ("tool", "function"):
            self._result(where, message)
            return
        if role == "developer":
            role = "system"
        if role not in ("system", "user", "assistant"):
            self.builder.warn("role_skipped", f"{where}: role {role!r} not imported")
            return
        call_ids, final = self._requests(where, message)
        self.messages.append(message_entry(f"m{index}", role, text_of(message.get("content")), call_ids))
        if final is not None and self.builder.final_answer is not None:
            # The answer the terminal call carries, as the message reviewers rate.
            self.messages.append({"id": f"m{index}-answer", "role": "assistant",
                                  "content": self.builder.final_answer,
                                  "metadata": {"extra": {"final_answer_tool": final[:200]}}})

    def _result(self, where: str, message: Mapping[str, Any]) -> None:
        """A tool result ends the oldest waiting call of its ``tool_call_id`` (or name)."""
        source = message.get("tool_call_id") or message.get("name")
        queue = self.pending.get(source or "")
        call = self.builder.result_for(queue.pop(0) if queue else None, source, where)
        if call is not None:
            self.builder.finish(call, text_of(message.get("content")), message, completed_at=message_time(message))

    def _requests(self, where: str, message: Mapping[str, Any]) -> tuple[list[str], str | None]:
        """The ids of the calls a message's ``tool_calls`` (and legacy ``function_call``)
        start, and the name of the terminal pseudo-tool it called, if any."""
        requested = list(message.get("tool_calls") or [])
        if isinstance(message.get("function_call"), Mapping):
            requested.append({"id": None, "function": message["function_call"]})
        call_ids, final = [], None
        for position, tool_call in enumerate(requested):
            function = tool_call.get("function") if isinstance(tool_call, Mapping) else None
            if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
                self.builder.warn("no_function_name", f"{where}.tool_calls[{position}]: no function name; skipped")
                continue
            source = text_at(tool_call, "id")
            arguments = self.builder.arguments(function.get("arguments"), f"{where}.tool_calls[{position}]")
            call = self.builder.start(source, function["name"], arguments, started_at=message_time(message))
            if call is None:
                final = function["name"]
                continue
            self.pending.setdefault(source or function["name"], []).append(call)
            call_ids.append(call["id"])
        return call_ids, final


def openai_messages_run(
    messages: Any, run_id: str, *, options: Options = DEFAULT_OPTIONS, **_: Any
) -> tuple[dict[str, Any], list[Warn]]:
    """A chat-completions message list as a chat run document (without status /
    outcome): ``(document, warnings)``. Failed calls follow ``domain/tool_failure.py``
    (every rule, every format); terminal pseudo-tools give the answer. Raises
    ``RecordError`` when ``messages`` is not a list of message objects."""
    builder = Builder(run_id, options)
    return chat_messages_doc(messages, builder), builder.warnings


def adapt_openai_record(record: Any, index: int, stem: str, options: Options = DEFAULT_OPTIONS) -> Adapted:
    """An openai-messages record (a list, or ``{id | run_id, messages, session_id?}``) as a
    SUCCESS chat run. Run id: the record's id, else ``<file stem>-<index>``."""
    session_id = None
    if isinstance(record, Mapping):
        run_id = record.get("run_id") or record.get("id") or f"{stem}-{index}"
        session_id = record.get("session_id")
        messages = record.get("messages")
        if messages is None:
            raise RecordError("no messages list; not an openai-messages record")
    else:
        run_id, messages = f"{stem}-{index}", record
    builder = Builder(check_run_id(str(run_id), "run id"), options)
    doc = chat_messages_doc(messages, builder)
    doc["status"] = "FAILED" if builder.gave_up else "SUCCESS"
    if isinstance(session_id, str):
        doc["session_id"] = session_id
    return builder.adapted(doc)
