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
    out_messages: list[dict[str, Any]] = []
    pending: dict[str, list[dict[str, Any]]] = {}
    for index, message in enumerate(messages):
        role = message.get("role")
        where = f"messages[{index}]"
        if any(message.get(f) for f in TOOL_FIELDS):
            builder.tool_like = True
        if role in ("tool", "function"):
            source = message.get("tool_call_id") or message.get("name")
            queue = pending.get(source or "")
            call = builder.result_for(queue.pop(0) if queue else None, source, where)
            if call is not None:
                builder.finish(call, text_of(message.get("content")), message, completed_at=message_time(message))
            continue
        if role == "developer":
            role = "system"
        if role not in ("system", "user", "assistant"):
            builder.warn("role_skipped", f"{where}: role {role!r} not imported")
            continue
        requested = list(message.get("tool_calls") or [])
        if isinstance(message.get("function_call"), Mapping):
            requested.append({"id": None, "function": message["function_call"]})
        call_ids, final = [], None
        for position, tool_call in enumerate(requested):
            function = tool_call.get("function") if isinstance(tool_call, Mapping) else None
            if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
                builder.warn("no_function_name", f"{where}.tool_calls[{position}]: no function name; skipped")
                continue
            source = tool_call.get("id") if isinstance(tool_call.get("id"), str) else None
            arguments = builder.arguments(function.get("arguments"), f"{where}.tool_calls[{position}]")
            call = builder.start(source, function["name"], arguments, started_at=message_time(message))
            if call is None:
                final = function["name"]
                continue
            pending.setdefault(source or function["name"], []).append(call)
            call_ids.append(call["id"])
        out_messages.append(message_entry(f"m{index}", role, text_of(message.get("content")), call_ids))
        if final is not None and builder.final_answer is not None:
            # The answer the terminal call carries, as the message reviewers rate.
            out_messages.append({"id": f"m{index}-answer", "role": "assistant", "content": builder.final_answer,
                                 "metadata": {"extra": {"final_answer_tool": final[:200]}}})
    builder.unfinished()
    doc: dict[str, Any] = {"kind": "chat", "messages": out_messages, "tool_calls": builder.calls,
                           "query": first_text(out_messages, "user") or "",
                           "answer": first_text(out_messages, "assistant", last=True)}
    if builder.final_answer is not None:
        doc["answer"] = builder.final_answer
    return doc


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
