"""Adapters of record-per-run formats: ``native`` run documents, ``openai-messages``
(chat-completions message lists) and ``tau-bench`` trajectories. Pure: a record in, an
``Adapted`` out; raise ``RecordError`` for a record they cannot read."""

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


def adapt_native(record: Any) -> Adapted:
    """A native run document (``run_document.schema.json`` with ``run_id``) as it is."""
    if not isinstance(record, Mapping):
        raise RecordError("expected a run document object")
    run_id = record.get("run_id")
    if not isinstance(run_id, str):
        raise RecordError("run_id is required in import files")
    return Adapted(check_run_id(run_id, "run_id"), dict(record),
                   tool_like=bool(record.get("tool_calls")))


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


# tau-bench actions that change nothing: an expected one not taken is no missed write.
READ_ONLY_PREFIXES = ("get_", "search_", "list_", "find_")
READ_ONLY_ACTIONS = frozenset({"calculate", "think", "transfer_to_human_agents"})


def missed_write_actions(expected: Any, calls: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The expected write actions (``[{name, kwargs}]``, tau-bench's ``info.task.actions``)
    that no call made with the same name and the same arguments; ``None`` when the record
    lists no expected actions. Read-only actions (``get_`` / ``search_`` / ``list_`` /
    ``find_`` ..., ``calculate``, ``think``, ``transfer_to_human_agents``) are left out:
    they change no state, and the benchmark judges the final state."""
    if not isinstance(expected, list):
        return None
    made = [(c["tool_name"], c.get("arguments")) for c in calls]
    missed = []
    for action in expected:
        if not isinstance(action, Mapping) or not isinstance(action.get("name"), str):
            continue
        name = action["name"]
        if name.startswith(READ_ONLY_PREFIXES) or name in READ_ONLY_ACTIONS:
            continue
        if (name, action.get("kwargs")) not in made:
            missed.append({"name": name, "kwargs": action.get("kwargs")})
    return missed


def adapt_tau_bench(record: Any, stem: str, options: Options = DEFAULT_OPTIONS) -> Adapted:
    """A tau-bench trajectory record (``task_id``, ``trial``, ``reward``, ``traj``) as a
    chat run: openai-messages plus status ``SUCCESS``, ``reward`` kept as
    ``external_outcome`` pass / fail with detail ``{source, reward, task_id, trial,
    missed_actions?}`` (``missed_write_actions`` of ``info.task.actions``, when listed);
    run id ``tau-<file stem>-t<task>-r<trial>``."""
    if not isinstance(record, Mapping) or "traj" not in record:
        raise RecordError("expected a tau-bench record with traj")
    task_id, trial, reward = record.get("task_id"), record.get("trial"), record.get("reward")
    if not isinstance(task_id, int) or not isinstance(trial, int):
        raise RecordError("task_id and trial must be integers")
    if not isinstance(reward, (int, float)) or isinstance(reward, bool):
        raise RecordError("reward must be a number")
    builder = Builder(check_run_id(f"tau-{stem}-t{task_id}-r{trial}", "run id"), options)
    doc = chat_messages_doc(record["traj"], builder)
    doc.update(
        status="FAILED" if builder.gave_up else "SUCCESS",
        external_outcome="pass" if reward >= 1 else "fail",
        external_outcome_detail={"source": "tau-bench", "reward": reward, "task_id": task_id,
                                 "trial": trial},
    )
    info = record.get("info")
    task = info.get("task") if isinstance(info, Mapping) else None
    missed = missed_write_actions(task.get("actions") if isinstance(task, Mapping) else None, builder.calls)
    if missed is not None:
        doc["external_outcome_detail"]["missed_actions"] = missed
    return builder.adapted(doc)


def tau_bench_run(record: Any, stem: str) -> tuple[str, dict[str, Any], list[Warn]]:
    """``adapt_tau_bench`` as ``(run_id, document, warnings)``."""
    return adapt_tau_bench(record, stem).as_tuple()
