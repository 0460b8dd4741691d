"""The ``stratus`` format: a Stratus agent trajectory (SREGym keeps it; staged LangChain
messages), the whole file one AIOps run with a step per stage. Pure: events in, an
``Adapted`` out; ``RecordError`` when the events are not of the format."""

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
    text_at,
    text_of,
)
from ._logs import aiops_doc, mappings

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
    stages = _stages(events)
    if meta is None or not stages:
        raise RecordError("no metadata line and stage events: not a Stratus trajectory")
    builder = Builder(check_run_id(f"stratus-{_name(meta) or stem}"[:160], "run id"), options)
    messages: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    for stage, event in stages.items():
        summary = _Stage(builder, stage).read(event["messages"], messages)
        steps.append({"id": stage[:160], "name": stage[:200], "summary": summary,
                      "status": "submitted" if event.get("submitted") else "finished"})
    builder.unfinished()
    query = first_text(messages, "user") or ""
    doc = aiops_doc(builder, messages, query, _last_summary(steps), None, [])
    doc["steps"] = steps
    return builder.adapted(doc)


def _name(meta: Mapping[str, Any]) -> str:
    """``<problem_id>-<timestamp>`` of the metadata line (the parts that are texts)."""
    return "-".join(str(meta[k]) for k in ("problem_id", "timestamp") if isinstance(meta.get(k), str))


def _last_summary(steps: list[dict[str, Any]]) -> str | None:
    """The run's answer: the last stage summary there is."""
    return next((step["summary"] for step in reversed(steps) if step["summary"]), None)


def _stages(events: list[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """The ``event`` line of each stage (the last one when a stage has several)."""
    stages: dict[str, Mapping[str, Any]] = {}
    for event in events:
        if event.get("type") == "event" and isinstance(event.get("messages"), list):
            stages[str(event.get("stage") or f"stage-{len(stages)}")] = event
    return stages


class _Stage:
    """One stage's messages read into the run: its calls still open (in order, and by
    ``tool_call_id``) and what a ``*submit*`` call handed in."""

    def __init__(self, builder: Builder, name: str) -> None:
        self.builder, self.name = builder, name
        self.pending: list[dict[str, Any]] = []
        self.by_id: dict[str, dict[str, Any]] = {}
        self.submitted: str | None = None

    def read(self, raw: list[Any], messages: list[dict[str, Any]]) -> str | None:
        """Append the stage's messages to ``messages``, make and end its calls; the
        stage's summary: its submission, else its last AI text."""
        for index, message in enumerate(raw):
            if not isinstance(message, Mapping):
                continue
            kind = message.get("type")
            if kind in ("ToolMessage", "tool"):
                self._result(index, message)
                continue
            role = _STRATUS_ROLES.get(str(kind))
            if role is None:
                self.builder.warn("role_skipped", f"{self.name}.messages[{index}]: type {kind!r} not imported")
                continue
            call_ids = self._calls(index, message)
            content = text_of(message.get("content")) or None
            if content or call_ids:
                messages.append(message_entry(f"{self.name}-{index}", role, content, call_ids))
        return self.submitted or _last_ai_text(raw)

    def _result(self, index: int, message: Mapping[str, Any]) -> None:
        """A tool message ends the call it names, else the stage's next open call."""
        self.builder.tool_like = True
        call = self.by_id.pop(message.get("tool_call_id"), None) if message.get("tool_call_id") else None
        if call is None and self.pending:
            call = self.pending[0]
        if call is None:
            self.builder.warn("unknown_result", f"{self.name}.messages[{index}]: tool message without a call; skipped")
            return
        self.pending.remove(call)
        self.builder.finish(call, text_of(message.get("content")), message)

    def _calls(self, index: int, message: Mapping[str, Any]) -> list[str]:
        """The ids of the calls a message's ``tool_calls`` start (each in this stage)."""
        call_ids = []
        for position, tool_call in enumerate(message.get("tool_calls") or []):
            if not isinstance(tool_call, Mapping) or not isinstance(tool_call.get("name"), str):
                self.builder.warn("no_function_name", f"{self.name}.messages[{index}].tool_calls[{position}]: no name")
                continue
            source = text_at(tool_call, "id")
            arguments = tool_call.get("args")
            self.submitted = _submission(tool_call["name"], arguments) or self.submitted
            call = self.builder.start(source, tool_call["name"], arguments)
            if call is None:
                continue
            call["step_id"] = self.name
            self.pending.append(call)
            if source:
                self.by_id[source] = call
            call_ids.append(call["id"])
        return call_ids


def _submission(name: str, arguments: Any) -> str | None:
    """What a ``*submit*`` call hands in: its first non-blank text argument."""
    if "submit" in name.lower() and isinstance(arguments, Mapping):
        return next((v for v in arguments.values() if isinstance(v, str) and v.strip()), None)
    return None


def _last_ai_text(raw: list[Any]) -> str | None:
    """The text of the stage's last ``AIMessage`` with content."""
    return next((text_of(m.get("content")) for m in reversed(raw)
                 if isinstance(m, Mapping) and m.get("type") == "AIMessage" and m.get("content")), None)
