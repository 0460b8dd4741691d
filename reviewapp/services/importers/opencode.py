"""The ``opencode`` format: an OpenCode session export (SREGym keeps it), the whole file
one AIOps run. Pure: events in, an ``Adapted`` out; ``RecordError`` when the events are
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
    mapping_at,
    message_entry,
    text_at,
)
from ._logs import aiops_doc, mappings


def _ms(value: Any) -> str | None:
    """Epoch milliseconds (OpenCode's clocks) as an ISO 8601 UTC time."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return datetime.fromtimestamp(value / 1000, UTC).isoformat()
    return None


def adapt_opencode(events: list[Any], stem: str, options: Options = DEFAULT_OPTIONS) -> Adapted:
    """An OpenCode session export (one object ``{info, messages: [{info, parts}]}``) as
    one AIOps run: query = the first user text part, answer and report = the last
    assistant text part; ``tool`` parts are calls with their own clocks
    (``state.time.start`` / ``end``, epoch ms) through the failure rules
    (``state.status: "error"`` = ``flag``, ``state.error`` its text; a non-zero
    ``state.metadata.exit``, the bash tool's exit code, = ``exit_code``). Run id
    ``opencode-<info.id>``."""
    info, raw_messages = _session(events)
    session_id = info["id"] if isinstance(info.get("id"), str) else stem
    builder = Builder(check_run_id(f"opencode-{session_id}", "run id"), options)
    clock = info.get("time") or {}
    times = [t for t in (_ms(clock.get("created")), _ms(clock.get("updated"))) if t]
    messages = [entry for index, message in enumerate(raw_messages)
                if (entry := _message(builder, index, message))]
    builder.unfinished()
    return builder.adapted(aiops_doc(builder, messages, first_text(messages, "user") or "",
                                     first_text(messages, "assistant", last=True), session_id, times))


def _session(events: list[Any]) -> tuple[Mapping[str, Any], list[Any]]:
    """The export's ``info`` and ``messages``; ``RecordError`` unless exactly one object has both."""
    sessions = [e for e in mappings(events) if isinstance(e.get("info"), Mapping) and isinstance(e.get("messages"), list)]
    if len(sessions) != 1:
        raise RecordError("expected one {info, messages: [{info, parts}]} object: not an OpenCode session export")
    return sessions[0]["info"], sessions[0]["messages"]


def _message(builder: Builder, index: int, message: Any) -> dict[str, Any] | None:
    """``messages[index]`` as a run message with the calls of its ``tool`` parts; None
    (with a warning) without ``info`` or of a role not imported, or with neither text nor call."""
    if not isinstance(message, Mapping) or not isinstance(message.get("info"), Mapping):
        builder.warn("role_skipped", f"messages[{index}]: no info; skipped")
        return None
    meta = message["info"]
    role = meta.get("role") if meta.get("role") in ("user", "assistant", "system") else None
    texts, call_ids, finished_meta = _parts(builder, message.get("parts") or [])
    if finished_meta is not None:
        # Kept as it was (issue 12 changes no behaviour): the last finished tool part's
        # ``state.metadata`` has always replaced ``info`` for the warning and the message
        # id below, so such a message is ``m<index>``, not its info.id.
        meta = finished_meta
    if role is None:
        builder.warn("role_skipped", f"messages[{index}]: role {meta.get('role')!r} not imported")
        return None
    if not (texts or call_ids):
        return None
    return message_entry(str(meta.get("id") or f"m{index}"), role, "\n".join(texts) or None, call_ids)


def _parts(builder: Builder, parts: Any) -> tuple[list[str], list[str], Mapping[str, Any] | None]:
    """A message's text parts (synthetic ones aside), the ids of the calls its ``tool``
    parts start, and the ``state.metadata`` of the last of them that ended (or None)."""
    texts, call_ids, finished_meta = [], [], None
    for part in parts:
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str) and not part.get("synthetic"):
            texts.append(part["text"])
        elif part.get("type") == "tool":
            call_id, ended_meta = _tool_part(builder, part)
            finished_meta = ended_meta if ended_meta is not None else finished_meta
            if call_id:
                call_ids.append(call_id)
    return texts, call_ids, finished_meta


def _tool_part(builder: Builder, part: Mapping[str, Any]) -> tuple[str | None, Mapping[str, Any] | None]:
    """The id of the call a ``tool`` part starts (None when not made), with its own clock,
    ended through the failure rules once completed or failed; and, for an ended call,
    its ``state.metadata`` (``{}`` when not an object)."""
    state = mapping_at(part, "state")
    clock = mapping_at(state, "time")
    source = text_at(part, "callID")
    call = builder.start(source, str(part.get("tool") or "unknown"), state.get("input"),
                         started_at=_ms(clock.get("start")))
    if call is None:
        return None, None
    if state.get("status") not in ("completed", "error"):
        return call["id"], None
    output = state.get("output") if state.get("status") == "completed" else state.get("error")
    meta = mapping_at(state, "metadata")
    builder.finish(call, output, state, exit_code=meta.get("exit"), completed_at=_ms(clock.get("end")))
    return call["id"], meta
