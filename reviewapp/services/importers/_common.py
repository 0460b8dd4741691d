"""Package-private: what every format adapter shares: the record error, warnings by kind,
import options, the adapted result, namespaced call ids, and ``Builder``, which makes the
tool calls of one run and applies the failure rules (``domain/tool_failure.py``) and the
terminal pseudo-tools to every format alike."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...domain.times import TimestampError, parse_timestamp
from ...domain.tool_failure import failure_rule
from .. import documents
from ..secret_scan import redact_text

MAX_ID = 160
# Calls to these tools (any case) end the run: their arguments are its answer, and they
# are not tool calls (ReAct-style agents' ``Finish`` / ``final_answer``, SWE agents' ``submit``).
DEFAULT_TERMINAL_TOOLS = ("finish", "final_answer", "submit")
# Keys of a message's own clock, in order of preference (ISO 8601 text or epoch s / ms).
TIME_KEYS = ("timestamp", "created_at", "time", "created")
# Argument keys that hold a terminal call's answer, in order of preference.
ANSWER_KEYS = ("answer", "final_answer", "result", "response", "output", "text", "content",
               "message", "summary")
GIVE_UP_VALUES = frozenset({"give_up", "gave_up", "giveup", "gaveup", "give up", "gave up"})


class RecordError(ValueError):
    """A source record that cannot become a run document; the message says why."""


class Warn(str):
    """A warning's text, with its ``kind`` (e.g. ``no_result``, ``bad_arguments``) so an
    import summary can count warnings by kind."""

    kind: str

    def __new__(cls, kind: str, text: str) -> Warn:
        obj = super().__new__(cls, text)
        obj.kind = kind
        return obj

    def prefixed(self, prefix: str) -> Warn:
        """The same warning with ``prefix`` (e.g. ``file: record 3``) before its text."""
        return Warn(self.kind, f"{prefix}: {self}")


@dataclass(frozen=True)
class Options:
    """How records are read: ``terminal_tools`` are the pseudo-tools whose call is the
    run's final answer (compared case-insensitively)."""

    terminal_tools: frozenset[str] = frozenset(DEFAULT_TERMINAL_TOOLS)

    @classmethod
    def make(cls, terminal_tools: Iterable[str] | None = None) -> Options:
        """Options with ``terminal_tools`` (``None``: the default names; an empty list:
        none)."""
        if terminal_tools is None:
            return cls()
        return cls(frozenset(name.strip().lower() for name in terminal_tools if name.strip()))


DEFAULT_OPTIONS = Options()


@dataclass
class Adapted:
    """A record turned into a run document: its id, the document, its warnings, how many
    failed calls each failure rule found, and whether the record held anything tool-like
    (a tool-call or tool-result field), even if no call could be made of it."""

    run_id: str
    doc: dict[str, Any]
    warnings: list[Warn] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)
    tool_like: bool = False

    def as_tuple(self) -> tuple[str, dict[str, Any], list[Warn]]:
        """``(run_id, document, warnings)``."""
        return self.run_id, self.doc, self.warnings


def slug(text: str) -> str:
    """A file stem as a run-id fragment."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "file"


def text_of(content: Any) -> str | None:
    """Message content as text: strings as they are, lists of parts joined, other
    values as JSON."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping):
                value = part.get("text")
                if value is None and isinstance(part.get("content"), str):
                    value = part["content"]
                if isinstance(value, str):
                    parts.append(value)
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False)


def text_at(record: Mapping[str, Any], key: str) -> str | None:
    """``record[key]`` when it is a text, else None."""
    value = record.get(key)
    return value if isinstance(value, str) else None


def mapping_at(record: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``record[key]`` when it is an object, else ``{}``."""
    value = record.get(key)
    return value if isinstance(value, Mapping) else {}


def _namespaced(run_id: str, source_id: str, occurrence: int) -> str:
    suffix = f"#{occurrence}" if occurrence > 1 else ""
    candidate = f"{run_id}/{source_id}{suffix}"
    if len(candidate) <= MAX_ID:
        return candidate
    digest = hashlib.sha256(f"{source_id}{suffix}".encode()).hexdigest()[:24]
    return f"{run_id[: MAX_ID - 26]}/{digest}"


def check_run_id(value: str, where: str) -> str:
    """``value`` if it is a valid run id, else ``RecordError`` naming ``where``."""
    if not documents.valid_run_id(value):
        raise RecordError(f"{where}: run id {redact_text(value)[:60]!r} must be 1-{MAX_ID} ASCII letters, digits "
                          "and . _ : @ - (starting with a letter or digit, no /)")
    return value


def message_time(message: Mapping[str, Any]) -> Any:
    """The message's own timestamp (``TIME_KEYS``), or ``None``."""
    for key in TIME_KEYS:
        value = message.get(key)
        if isinstance(value, str) and value or (
                isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0):
            return value
    return None


def first_text(messages: list[dict[str, Any]], role: str, *, last: bool = False) -> str | None:
    """The first (or last) non-empty content of ``role`` among document messages."""
    ordered = reversed(messages) if last else iter(messages)
    return next((m["content"] for m in ordered if m["role"] == role and m["content"]), None)


def message_entry(entry_id: str, role: str, content: str | None, call_ids: list[str]) -> dict[str, Any]:
    """A run document message (``id`` capped at 160 characters), with the ids of the tool
    calls it requested in ``metadata.tool_call_ids`` when there are any."""
    entry: dict[str, Any] = {"id": entry_id[:160], "role": role, "content": content}
    if call_ids:
        entry["metadata"] = {"tool_call_ids": call_ids}
    return entry


class Builder:
    """The tool calls of one run, made the same way for every format.

    ``start`` makes a call (``None`` for a terminal pseudo-tool, whose arguments become
    ``final_answer``), ``finish`` ends it through the failure rules and counts the rule
    that fired, ``warn`` keeps a warning with its kind.
    """

    def __init__(self, run_id: str, options: Options = DEFAULT_OPTIONS) -> None:
        self.run_id = run_id
        self.options = options
        self.calls: list[dict[str, Any]] = []
        self.warnings: list[Warn] = []
        self.failures: Counter[str] = Counter()
        self.final_answer: str | None = None
        self.gave_up = False
        self.terminal_ids: set[str] = set()
        self.tool_like = False
        self._seen: dict[str, int] = {}

    def warn(self, kind: str, text: str) -> None:
        """Keep a warning of ``kind``."""
        self.warnings.append(Warn(kind, text))

    def new_id(self, source_id: str | None) -> str:
        """A deterministic namespaced id ``<run_id>/<source id>[#n]`` (see the package
        docstring)."""
        source = source_id or "call"
        self._seen[source] = self._seen.get(source, 0) + 1
        return _namespaced(self.run_id, source, self._seen[source])

    def arguments(self, raw: Any, where: str) -> Any:
        """Arguments given as JSON text parsed (invalid JSON kept as text, with a warning)."""
        if not isinstance(raw, str):
            return raw
        try:
            return json.loads(raw) if raw.strip() else {}
        except ValueError:
            self.warn("bad_arguments", f"{where}: arguments are not valid JSON; kept as text")
            return raw

    def is_terminal(self, name: str) -> bool:
        """Whether ``name`` is a terminal pseudo-tool (case-insensitive)."""
        return name.strip().lower() in self.options.terminal_tools

    def start(self, source_id: str | None, name: str, arguments: Any, *,
              started_at: Any = None) -> dict[str, Any] | None:
        """A new call record (appended to ``calls``), or ``None`` when ``name`` is a
        terminal pseudo-tool: its arguments become ``final_answer`` (and ``gave_up`` when
        they say so) and its source id is remembered so that its result is dropped."""
        if self.is_terminal(name):
            self._terminal(arguments)
            if source_id:
                self.terminal_ids.add(source_id)
            return None
        self.tool_like = True
        call: dict[str, Any] = {"id": self.new_id(source_id), "tool_name": name[:200] or "unknown",
                                "status": "started", "arguments": arguments}
        if started_at is not None and self._clock(started_at, f"tool call {call['id']}: start") is not None:
            call["started_at"] = started_at
        self.calls.append(call)
        return call

    def result_for(self, call: dict[str, Any] | None, source_id: Any, where: str) -> dict[str, Any] | None:
        """``call``, the call a tool result answers as the format found it by ``source_id``;
        when there is none, the result of a terminal pseudo-tool's call is dropped silently
        and any other gets an ``unknown_result`` warning naming ``where``. Marks the run
        tool-like either way."""
        self.tool_like = True
        if call is None and source_id not in self.terminal_ids:
            self.warn("unknown_result", f"{where}: tool result for unknown call {source_id!r}; skipped")
        return call

    def _terminal(self, arguments: Any) -> None:
        answer: Any = arguments
        if isinstance(arguments, Mapping):
            status = arguments.get("status") or arguments.get("outcome")
            if arguments.get("give_up") is True or arguments.get("gave_up") is True or (
                    isinstance(status, str) and status.strip().lower() in GIVE_UP_VALUES):
                self.gave_up = True
            answer = next((arguments[k] for k in ANSWER_KEYS if arguments.get(k) not in (None, "")), None)
            if answer is None:
                strings = [v for v in arguments.values() if isinstance(v, str) and v.strip()]
                answer = strings[0] if len(strings) == 1 else (arguments or None)
        if answer is None or answer == "":
            return
        self.final_answer = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)

    def finish(self, call: dict[str, Any], result: Any, message: Mapping[str, Any] | None = None, *,
               exit_code: Any = None, completed_at: Any = None) -> str | None:
        """End ``call`` with ``result`` (text or structured): ``failed`` with the result as
        error when a failure rule fires (counted in ``failures``), else ``completed``.
        ``message`` is the envelope whose flags the ``flag`` rule reads. Returns the rule."""
        rule = failure_rule(result, message, exit_code=exit_code)
        value = result
        if rule is not None:
            if value in (None, "") and isinstance(message, Mapping):
                value = message.get("error") if isinstance(message.get("error"), str) else None
            call.update(status="failed", error=value if value not in (None, "") else f"failed ({rule})")
            self.failures[rule] += 1
        else:
            call.update(status="completed", output=result)
        end = self._clock(completed_at, f"tool call {call['id']}: end") if completed_at is not None else None
        if end is not None:
            start = self._clock(call.get("started_at"), "") if call.get("started_at") is not None else None
            if start is not None and end < start:
                self.warn("clock_order", f"tool call {call['id']}: its result is timed before its request; "
                                         "end left empty")
            else:
                call["completed_at"] = completed_at
        return rule

    def _clock(self, value: Any, where: str) -> Any:
        """``value`` parsed (a datetime), or ``None`` with a ``bad_time`` warning: a time
        the run document would refuse never costs the whole run."""
        try:
            return parse_timestamp(value, "time")
        except TimestampError as exc:
            if where:
                self.warn("bad_time", f"{where}: {exc.reason}; left empty")
            return None

    def unfinished(self) -> None:
        """Warn about every call still ``started`` (kept so: no end event, nothing invented)."""
        for call in self.calls:
            if call["status"] == "started":
                self.warn("no_result", f"tool call {call['id']} has no result: kept as started (no end event)")

    def adapted(self, doc: dict[str, Any], extra: Iterable[Warn] = ()) -> Adapted:
        """The ``Adapted`` of this run with ``doc``."""
        return Adapted(self.run_id, doc, [*extra, *self.warnings], self.failures, self.tool_like)
