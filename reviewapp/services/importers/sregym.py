"""Adapters of the other agent harnesses whose logs SREGym keeps (copilot, gemini,
opencode, stratus), each file one AIOps run, and of SREGym's verdict files
(``<harness>_results_<problem>_<time>.json``), which give the runs logged beside them
their outcome. Pure: events in, an ``Adapted`` out; ``RecordError`` when the events are
not of the format."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
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
from .harnesses import aiops_doc, mappings


def _ms(value: Any) -> str | None:
    """Epoch milliseconds (OpenCode's clocks) as an ISO 8601 UTC time."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return datetime.fromtimestamp(value / 1000, UTC).isoformat()
    return None


def _time(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def adapt_copilot(events: list[Any], stem: str, options: Options = DEFAULT_OPTIONS) -> Adapted:
    """A GitHub Copilot CLI event stream (``{type, data, id, timestamp}`` lines) as one
    AIOps run: query = the ``user.message``, answer and report = the last
    ``assistant.message`` text; ``toolRequests`` are calls, started at
    ``tool.execution_start`` and ended at ``tool.execution_complete`` through the failure
    rules (``success: false`` = ``flag``); the ``result`` line's ``exitCode`` != 0 makes
    the run FAILED. Run id ``copilot-<sessionId>``."""
    events = mappings(events)
    if not any(isinstance(e.get("type"), str) and isinstance(e.get("data"), Mapping)
               and e["type"].startswith(("session.", "user.", "assistant.", "tool.")) for e in events):
        raise RecordError("no session.* / user.* / assistant.* / tool.* event: not a Copilot CLI log")
    result = next((e for e in events if e.get("type") == "result"), {})
    session_id = result.get("sessionId") if isinstance(result.get("sessionId"), str) else None
    builder = Builder(check_run_id(f"copilot-{session_id or stem}", "run id"), options)
    messages: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    query, times = "", []
    for line, event in enumerate(events):
        kind, data, when = event.get("type"), event.get("data"), _time(event.get("timestamp"))
        if when and not event.get("ephemeral"):
            times.append(when)
        if not isinstance(data, Mapping):
            continue
        if kind == "user.message" and isinstance(data.get("content"), str):
            query = query or data["content"]
            messages.append({"id": f"l{line}", "role": "user", "content": data["content"]})
        elif kind == "assistant.message":
            call_ids = []
            for position, request in enumerate(data.get("toolRequests") or []):
                if not isinstance(request, Mapping) or not isinstance(request.get("name"), str):
                    builder.warn("no_function_name", f"line {line}.toolRequests[{position}]: no name; skipped")
                    continue
                source = request.get("toolCallId") if isinstance(request.get("toolCallId"), str) else None
                call = builder.start(source, request["name"],
                                     builder.arguments(request.get("arguments"), f"line {line}"), started_at=when)
                if call is not None:
                    calls[source or call["id"]] = call
                    call_ids.append(call["id"])
            content = data.get("content") if isinstance(data.get("content"), str) else None
            if content or call_ids:
                messages.append(message_entry(f"l{line}", "assistant", content or None, call_ids))
        elif kind == "tool.execution_start":
            call = calls.get(data.get("toolCallId"))
            if call is not None and when:
                call["started_at"] = when
        elif kind == "tool.execution_complete":
            call = builder.result_for(calls.get(data.get("toolCallId")), data.get("toolCallId"), f"line {line}")
            if call is None:
                continue
            outcome = data.get("result")
            output = outcome.get("content") if isinstance(outcome, Mapping) and "content" in outcome else outcome
            error = data.get("error")
            envelope = {**data, "error": text_of(error.get("message") if isinstance(error, Mapping) else error)}
            builder.finish(call, text_of(output), envelope, completed_at=when)
    builder.unfinished()
    doc = aiops_doc(builder, messages, query, first_text(messages, "assistant", last=True), session_id, times)
    code = result.get("exitCode")
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        doc["status"] = "FAILED"
    return builder.adapted(doc)


def _gemini_text(content: Any) -> str | None:
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str))
    return content if isinstance(content, str) else None


def adapt_gemini(events: list[Any], stem: str, options: Options = DEFAULT_OPTIONS) -> Adapted:
    """A Gemini CLI session log (a ``{sessionId, startTime}`` header, then
    ``{id, timestamp, type: user | gemini, content, toolCalls}`` records, a record
    re-written with the same id replacing the earlier one, and ``$set`` update lines) as
    one AIOps run: query = the first user text, answer and report = the last gemini
    text; each ``toolCalls[i]`` is a call started at its record's time and ended at the
    time of the user record that carries its ``functionResponse`` (else its own
    ``timestamp``), through the failure rules (``status: "error"`` = ``flag``, a
    response with an ``error`` field = ``json_error``). Run id ``gemini-<sessionId>``."""
    events = mappings(events)
    header = next((e for e in events if isinstance(e.get("sessionId"), str) and "startTime" in e), None)
    if header is None:
        raise RecordError("no {sessionId, startTime} header line: not a Gemini CLI session log")
    builder = Builder(check_run_id(f"gemini-{header['sessionId']}", "run id"), options)
    records: dict[str, Mapping[str, Any]] = {}
    first_seen: dict[str, str] = {}
    for event in events:
        if event.get("type") in ("user", "gemini") and isinstance(event.get("id"), str):
            records[event["id"]] = event  # a later version of a record replaces it
            first_seen.setdefault(event["id"], event.get("timestamp"))
    responded: dict[str, str] = {}
    for record in records.values():
        if record.get("type") == "user" and isinstance(record.get("content"), list):
            for part in record["content"]:
                response = part.get("functionResponse") if isinstance(part, Mapping) else None
                if isinstance(response, Mapping) and isinstance(response.get("id"), str):
                    responded.setdefault(response["id"], record.get("timestamp"))
    messages: list[dict[str, Any]] = []
    times = [t for t in (header.get("startTime"), *(r.get("timestamp") for r in records.values()),
                         header.get("lastUpdated")) if isinstance(t, str)]
    for rid, record in records.items():
        text = _gemini_text(record.get("content"))
        call_ids = []
        for position, tool_call in enumerate(record.get("toolCalls") or []):
            if not isinstance(tool_call, Mapping) or not isinstance(tool_call.get("name"), str):
                builder.warn("no_function_name", f"record {rid}.toolCalls[{position}]: no name; skipped")
                continue
            source = tool_call.get("id") if isinstance(tool_call.get("id"), str) else None
            call = builder.start(source, tool_call["name"], tool_call.get("args"),
                                 started_at=_time(first_seen.get(rid)))
            if call is None:
                continue
            call_ids.append(call["id"])
            if tool_call.get("result") is None and tool_call.get("status") in (None, "executing", "scheduled"):
                continue
            result: Any = tool_call.get("result")
            if isinstance(result, list) and result and isinstance(result[0], Mapping):
                response = (result[0].get("functionResponse") or {}).get("response")
                if isinstance(response, Mapping):
                    result = response.get("output") if set(response) == {"output"} else response
            end = _time(responded.get(source or "")) or _time(tool_call.get("timestamp"))
            builder.finish(call, result if isinstance(result, (Mapping, str)) else text_of(result),
                           tool_call, completed_at=end)
        if record.get("type") == "user" and not text:
            continue
        if text or call_ids:
            role = "user" if record["type"] == "user" else "assistant"
            messages.append(message_entry(rid, role, text or None, call_ids))
    builder.unfinished()
    return builder.adapted(aiops_doc(builder, messages, first_text(messages, "user") or "",
                                     first_text(messages, "assistant", last=True), header["sessionId"],
                                     sorted(times)))


def adapt_opencode(events: list[Any], stem: str, options: Options = DEFAULT_OPTIONS) -> Adapted:
    """An OpenCode session export (one object ``{info, messages: [{info, parts}]}``) as
    one AIOps run: query = the first user text part, answer and report = the last
    assistant text part; ``tool`` parts are calls with their own clocks
    (``state.time.start`` / ``end``, epoch ms) through the failure rules
    (``state.status: "error"`` = ``flag``, ``state.error`` its text; a non-zero
    ``state.metadata.exit``, the bash tool's exit code, = ``exit_code``). Run id
    ``opencode-<info.id>``."""
    sessions = [e for e in mappings(events) if isinstance(e.get("info"), Mapping) and isinstance(e.get("messages"), list)]
    if len(sessions) != 1:
        raise RecordError("expected one {info, messages: [{info, parts}]} object: not an OpenCode session export")
    info, raw_messages = sessions[0]["info"], sessions[0]["messages"]
    session_id = info.get("id") if isinstance(info.get("id"), str) else stem
    builder = Builder(check_run_id(f"opencode-{session_id}", "run id"), options)
    messages: list[dict[str, Any]] = []
    times = [t for t in (_ms((info.get("time") or {}).get("created")), _ms((info.get("time") or {}).get("updated")))
             if t]
    for index, message in enumerate(raw_messages):
        if not isinstance(message, Mapping) or not isinstance(message.get("info"), Mapping):
            builder.warn("role_skipped", f"messages[{index}]: no info; skipped")
            continue
        meta = message["info"]
        role = meta.get("role") if meta.get("role") in ("user", "assistant", "system") else None
        texts, call_ids = [], []
        for part in message.get("parts") or []:
            if not isinstance(part, Mapping):
                continue
            if part.get("type") == "text" and isinstance(part.get("text"), str) and not part.get("synthetic"):
                texts.append(part["text"])
            elif part.get("type") == "tool":
                state = part.get("state") if isinstance(part.get("state"), Mapping) else {}
                clock = state.get("time") if isinstance(state.get("time"), Mapping) else {}
                source = part.get("callID") if isinstance(part.get("callID"), str) else None
                call = builder.start(source, str(part.get("tool") or "unknown"), state.get("input"),
                                     started_at=_ms(clock.get("start")))
                if call is None:
                    continue
                call_ids.append(call["id"])
                if state.get("status") in ("completed", "error"):
                    output = state.get("output") if state.get("status") == "completed" else state.get("error")
                    meta = state.get("metadata") if isinstance(state.get("metadata"), Mapping) else {}
                    builder.finish(call, output, state, exit_code=meta.get("exit"), completed_at=_ms(clock.get("end")))
        if role is None:
            builder.warn("role_skipped", f"messages[{index}]: role {meta.get('role')!r} not imported")
            continue
        if texts or call_ids:
            messages.append(message_entry(str(meta.get("id") or f"m{index}"), role, "\n".join(texts) or None, call_ids))
    builder.unfinished()
    return builder.adapted(aiops_doc(builder, messages, first_text(messages, "user") or "",
                                     first_text(messages, "assistant", last=True), session_id, times))


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


def verdict_outcome(verdict: Any, source_name: str) -> tuple[str, dict[str, Any]]:
    """An SREGym verdict (``{problem_id, timestamp, return_code, success, usage_metrics?}``)
    as ``(external_outcome, detail)``: ``pass`` / ``fail`` from ``success``, with checks
    (the problem solved; the harness exited 0) and the verdict's facts. Raises
    ``RecordError`` for anything else."""
    if not is_verdict(verdict):
        raise RecordError("expected an SREGym verdict {problem_id, success, return_code}")
    checks = [{"name": "problem solved (success)", "passed": verdict["success"]}]
    code = verdict.get("return_code")
    if isinstance(code, int) and not isinstance(code, bool):
        checks.append({"name": "harness exited with code 0", "passed": code == 0,
                       "detail": None if code == 0 else f"return code {code}"})
    detail: dict[str, Any] = {"source": "sregym", "checks": checks, "file": source_name,
                              **{k: verdict[k] for k in ("problem_id", "timestamp", "return_code", "usage_metrics")
                                 if k in verdict}}
    return ("pass" if verdict["success"] else "fail"), detail


def is_verdict(record: Any) -> bool:
    """True for an SREGym verdict file's object."""
    return (isinstance(record, Mapping) and isinstance(record.get("problem_id"), str)
            and isinstance(record.get("success"), bool) and "messages" not in record)
