"""Import of real agent-run files (SPEC 11): format adapters, streaming readers, import.

Adapters are pure: a source record in, a run document (``schemas/run_document.schema.json``)
out. ``import_files`` streams records one at a time (JSON arrays with ``ijson``, JSON
lines line by line), so memory stays bounded by the largest single record whatever the
file size, and stores each through ``runs.upsert_run`` — the same service as the API.

Formats:

* ``native``: JSON array, JSON lines or one object of run documents, each with ``run_id``.
* ``openai-messages``: chat-completions message lists (``role``, ``content``,
  ``tool_calls[{id, function{name, arguments}}]``, ``tool`` messages with
  ``tool_call_id``); a record is a list, or an object ``{id | run_id, messages, session_id?}``.
  Each list is one chat run; results are paired with calls by id; ``arguments`` given as
  JSON text are parsed (invalid JSON kept as text, with a warning); a call without a
  result stays ``started`` (no end event; nothing is invented).
* ``tau-bench``: the tau-bench trajectory records (``task_id``, ``trial``, ``reward``,
  ``traj``): openai-messages plus query = first user message, answer = last assistant
  text, a tool result starting with ``Error:`` = failed call with that error, status
  ``SUCCESS`` (the agent finished), ``reward`` kept as ``external_outcome`` pass / fail
  with detail ``{source, reward, task_id, trial}``; no timestamps (order is the ordinal);
  run id ``tau-<file stem>-t<task>-r<trial>``.
* ``claude-code``: a Claude Code session log (JSON lines of ``user`` / ``assistant``
  events with ``tool_use`` / ``tool_result`` blocks); the whole file is one AIOps run.
* ``codex``: an OpenAI Codex CLI rollout (JSON lines ``{timestamp, type, payload}``);
  the whole file is one AIOps run; an output reporting a non-zero exit code is a failed call.

Tool-call ids from foreign formats are namespaced as ``<run_id>/<source id>`` (and
``#2``, ``#3`` ... for a source id repeated inside one run): the tau-bench file reuses
the same ``call_...`` ids across runs and even within a run (1,138 of its 1,164 calls
share an id with another call), and ids are unique per workspace here. The rule depends
on nothing but the record, so a re-import finds the same rows.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import ijson
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..errors import ServiceError
from . import documents, runs
from .access import require_role

FORMATS = ("auto", "native", "openai-messages", "tau-bench", "claude-code", "codex")
# Formats in which the whole file is one run (an event log), not a list of runs.
WHOLE_FILE_FORMATS = ("claude-code", "codex")
MAX_ID = 160


class RecordError(ValueError):
    """A source record that cannot become a run document; the message says why."""


@dataclass
class Parsed:
    """One source record: its position (0-based record index, or line for JSON lines),
    the run document made from it (``None`` when it failed), warnings, the error."""

    index: int
    run_id: str | None = None
    doc: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass
class ImportSummary:
    """What an import did. ``problems`` are per-record errors ("file: record i: reason")."""

    created: int = 0
    updated: int = 0
    unchanged: int = 0
    failed: int = 0
    tool_calls: int = 0
    failed_tool_calls: int = 0
    warnings: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def runs(self) -> int:
        """Runs imported (created + updated + unchanged)."""
        return self.created + self.updated + self.unchanged


# --------------------------------------------------------------------------- helpers


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "file"


def _text(content: Any) -> str | None:
    """Message content as text: strings as they are, lists of parts joined."""
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


def _namespaced(run_id: str, source_id: str, occurrence: int) -> str:
    suffix = f"#{occurrence}" if occurrence > 1 else ""
    candidate = f"{run_id}/{source_id}{suffix}"
    if len(candidate) <= MAX_ID:
        return candidate
    digest = hashlib.sha256(f"{source_id}{suffix}".encode()).hexdigest()[:24]
    return f"{run_id[: MAX_ID - 26]}/{digest}"


class _CallIds:
    """Deterministic namespaced tool-call ids for one run (see the module docstring)."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.seen: dict[str, int] = {}

    def new(self, source_id: str | None) -> str:
        source = source_id or "call"
        self.seen[source] = self.seen.get(source, 0) + 1
        return _namespaced(self.run_id, source, self.seen[source])


def _arguments(raw: Any, where: str, warnings: list[str]) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw) if raw.strip() else {}
    except ValueError:
        warnings.append(f"{where}: arguments are not valid JSON; kept as text")
        return raw


def _run_id(value: str, where: str) -> str:
    if not documents.valid_run_id(value):
        raise RecordError(f"{where}: run id {value[:60]!r} must be 1-{MAX_ID} ASCII letters, digits "
                          "and . _ : @ - (starting with a letter or digit, no /)")
    return value


# --------------------------------------------------------------------------- adapters


def native_run(record: Any) -> tuple[str, dict[str, Any], list[str]]:
    """A native run document: ``(run_id, document, warnings)``. Raises ``RecordError``."""
    if not isinstance(record, Mapping):
        raise RecordError("expected a run document object")
    run_id = record.get("run_id")
    if not isinstance(run_id, str):
        raise RecordError("run_id is required in import files")
    return _run_id(run_id, "run_id"), dict(record), []


def openai_messages_run(
    messages: Any, run_id: str, *, error_prefix: str | None = None
) -> tuple[dict[str, Any], list[str]]:
    """A chat-completions message list as a chat run document (without status / outcome):
    ``(document, warnings)``. ``error_prefix``: a tool result whose text starts with it is
    a failed call with that text as error (tau-bench uses ``"Error:"``). Raises
    ``RecordError`` when ``messages`` is not a list of message objects."""
    if not isinstance(messages, list) or not all(isinstance(m, Mapping) for m in messages):
        raise RecordError("expected a list of message objects")
    if messages and not any(isinstance(m.get("role"), str) for m in messages):
        raise RecordError("no message has a role; not a chat-completions message list")
    warnings: list[str] = []
    ids = _CallIds(run_id)
    out_messages: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    pending: dict[str, list[dict[str, Any]]] = {}
    for index, message in enumerate(messages):
        role = message.get("role")
        where = f"messages[{index}]"
        if role in ("tool", "function"):
            source = message.get("tool_call_id") or message.get("name")
            queue = pending.get(source or "")
            if not queue:
                warnings.append(f"{where}: tool result for unknown call {source!r}; skipped")
                continue
            call = queue.pop(0)
            content = _text(message.get("content"))
            if error_prefix and isinstance(content, str) and content.startswith(error_prefix):
                call.update(status="failed", error=content)
            else:
                call.update(status="completed", output=content)
            continue
        if role == "developer":
            role = "system"
        if role not in ("system", "user", "assistant"):
            warnings.append(f"{where}: role {role!r} not imported")
            continue
        entry: dict[str, Any] = {"id": f"m{index}", "role": role, "content": _text(message.get("content"))}
        requested = list(message.get("tool_calls") or [])
        if isinstance(message.get("function_call"), Mapping):
            requested.append({"id": None, "function": message["function_call"]})
        call_ids = []
        for position, tool_call in enumerate(requested):
            function = tool_call.get("function") if isinstance(tool_call, Mapping) else None
            if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
                warnings.append(f"{where}.tool_calls[{position}]: no function name; skipped")
                continue
            source = tool_call.get("id") if isinstance(tool_call.get("id"), str) else None
            call = {"id": ids.new(source), "tool_name": function["name"][:200], "status": "started",
                    "arguments": _arguments(function.get("arguments"), f"{where}.tool_calls[{position}]",
                                            warnings)}
            calls.append(call)
            pending.setdefault(source or function["name"], []).append(call)
            call_ids.append(call["id"])
        if call_ids:
            entry["metadata"] = {"tool_call_ids": call_ids}
        out_messages.append(entry)
    for queue in pending.values():
        for call in queue:
            warnings.append(f"tool call {call['id']} has no result: kept as started (no end event)")
    doc = {"kind": "chat", "messages": out_messages, "tool_calls": calls}
    first_user = next((m["content"] for m in out_messages if m["role"] == "user" and m["content"]), None)
    last_text = next((m["content"] for m in reversed(out_messages)
                      if m["role"] == "assistant" and m["content"]), None)
    doc["query"] = first_user or ""
    doc["answer"] = last_text
    return doc, warnings


def openai_record_run(record: Any, index: int, stem: str) -> tuple[str, dict[str, Any], list[str]]:
    """An openai-messages record (a list, or ``{id | run_id, messages, session_id?}``) as a
    SUCCESS chat run. Run id: the record's id, else ``<file stem>-<index>``."""
    session_id = None
    if isinstance(record, Mapping):
        run_id = record.get("run_id") or record.get("id") or f"{stem}-{index}"
        session_id = record.get("session_id")
        messages = record.get("messages")
    else:
        run_id, messages = f"{stem}-{index}", record
    run_id = _run_id(str(run_id), "run id")
    doc, warnings = openai_messages_run(messages, run_id)
    doc["status"] = "SUCCESS"
    if isinstance(session_id, str):
        doc["session_id"] = session_id
    return run_id, doc, warnings


def tau_bench_run(record: Any, stem: str) -> tuple[str, dict[str, Any], list[str]]:
    """A tau-bench trajectory record as a chat run (see the module docstring)."""
    if not isinstance(record, Mapping) or "traj" not in record:
        raise RecordError("expected a tau-bench record with traj")
    task_id, trial, reward = record.get("task_id"), record.get("trial"), record.get("reward")
    if not isinstance(task_id, int) or not isinstance(trial, int):
        raise RecordError("task_id and trial must be integers")
    if not isinstance(reward, (int, float)) or isinstance(reward, bool):
        raise RecordError("reward must be a number")
    run_id = _run_id(f"tau-{stem}-t{task_id}-r{trial}", "run id")
    doc, warnings = openai_messages_run(record["traj"], run_id, error_prefix="Error:")
    doc.update(
        status="SUCCESS",
        external_outcome="pass" if reward >= 1 else "fail",
        external_outcome_detail={"source": "tau-bench", "reward": reward, "task_id": task_id,
                                 "trial": trial},
    )
    return run_id, doc, warnings


_EXIT_CODE = re.compile(r"Process exited with code (-?\d+)")


def claude_code_run(events: list[Any], stem: str) -> tuple[str, dict[str, Any], list[str]]:
    """A Claude Code session log (one JSON object per line) as one AIOps run: query = the
    first user prompt, answer and report = the last assistant text, ``tool_use`` blocks
    are calls started at their line's time, ``tool_result`` blocks end them at theirs
    (``is_error: true`` = failed)."""
    warnings: list[str] = []
    session_id = next((e.get("sessionId") for e in events
                       if isinstance(e, Mapping) and isinstance(e.get("sessionId"), str)), None)
    run_id = _run_id(f"claude-code-{session_id or stem}", "run id")
    ids = _CallIds(run_id)
    messages: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    times: list[str] = []
    for line, event in enumerate(events):
        if not isinstance(event, Mapping) or event.get("type") not in ("user", "assistant"):
            continue
        when = event.get("timestamp")
        if isinstance(when, str):
            times.append(when)
        message = event.get("message") if isinstance(event.get("message"), Mapping) else {}
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        texts, call_ids = [], []
        for block in blocks:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "tool_use":
                source = block.get("id") if isinstance(block.get("id"), str) else None
                call = {"id": ids.new(source), "tool_name": str(block.get("name") or "unknown")[:200],
                        "status": "started", "arguments": block.get("input"), "started_at": when}
                calls[source or call["id"]] = call
                call_ids.append(call["id"])
            elif kind == "tool_result":
                call = calls.get(block.get("tool_use_id"))
                if call is None:
                    warnings.append(f"line {line}: tool_result for unknown call; skipped")
                    continue
                output = _text(block.get("content"))
                failed = block.get("is_error") is True
                call.update(status="failed" if failed else "completed", completed_at=when,
                            **({"error": output} if failed else {"output": output}))
        if texts or call_ids:
            entry: dict[str, Any] = {"id": f"l{line}", "role": event["type"], "content": "\n".join(texts) or None}
            if call_ids:
                entry["metadata"] = {"tool_call_ids": call_ids}
            messages.append(entry)
    query = next((m["content"] for m in messages if m["role"] == "user" and m["content"]), "")
    answer = next((m["content"] for m in reversed(messages) if m["role"] == "assistant" and m["content"]), None)
    doc = {"session_id": session_id or run_id, "kind": "aiops", "query": query, "answer": answer,
           "status": "SUCCESS", "messages": messages, "tool_calls": list(calls.values()),
           "started_at": times[0] if times else None, "finished_at": times[-1] if times else None}
    if answer:
        doc["report"] = {"content": answer}
    return run_id, doc, warnings


def codex_run(events: list[Any], stem: str) -> tuple[str, dict[str, Any], list[str]]:
    """An OpenAI Codex CLI rollout (``{timestamp, type, payload}`` lines) as one AIOps
    run: query = the user_message event, answer and report = task_complete's last agent
    message (else the last assistant message), ``function_call`` / ``function_call_output``
    paired by ``call_id``; an output reporting a non-zero exit code is a failed call."""
    warnings: list[str] = []
    meta = next((e.get("payload") for e in events if isinstance(e, Mapping)
                 and e.get("type") == "session_meta" and isinstance(e.get("payload"), Mapping)), {})
    session_id = meta.get("id") if isinstance(meta.get("id"), str) else None
    run_id = _run_id(f"codex-{session_id or stem}", "run id")
    ids = _CallIds(run_id)
    messages: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    query, answer, times = "", None, []
    for line, event in enumerate(events):
        if not isinstance(event, Mapping) or not isinstance(event.get("payload"), Mapping):
            continue
        when, payload = event.get("timestamp"), event["payload"]
        if isinstance(when, str):
            times.append(when)
        kind = payload.get("type")
        if event.get("type") == "event_msg":
            if kind == "user_message" and not query and isinstance(payload.get("message"), str):
                query = payload["message"]
            elif kind == "task_complete" and isinstance(payload.get("last_agent_message"), str):
                answer = payload["last_agent_message"]
            continue
        if event.get("type") != "response_item":
            continue
        if kind == "message" and payload.get("role") in ("user", "assistant", "developer", "system"):
            role = "system" if payload["role"] == "developer" else payload["role"]
            messages.append({"id": f"l{line}", "role": role, "content": _text(payload.get("content"))})
        elif kind == "function_call":
            source = payload.get("call_id") if isinstance(payload.get("call_id"), str) else None
            call = {"id": ids.new(source), "tool_name": str(payload.get("name") or "unknown")[:200],
                    "status": "started", "started_at": when,
                    "arguments": _arguments(payload.get("arguments"), f"line {line}", warnings)}
            calls[source or call["id"]] = call
            if messages and messages[-1]["role"] == "assistant":
                messages[-1].setdefault("metadata", {"tool_call_ids": []})["tool_call_ids"].append(call["id"])
        elif kind == "function_call_output":
            call = calls.get(payload.get("call_id"))
            if call is None:
                warnings.append(f"line {line}: output for unknown call; skipped")
                continue
            output = _text(payload.get("output"))
            code = _EXIT_CODE.search(output or "")
            if code and code.group(1) != "0":
                call.update(status="failed", completed_at=when, error=output)
            else:
                call.update(status="completed", completed_at=when, output=output)
    if answer is None:
        answer = next((m["content"] for m in reversed(messages) if m["role"] == "assistant" and m["content"]), None)
    doc = {"session_id": session_id or run_id, "kind": "aiops", "query": query, "answer": answer,
           "status": "SUCCESS", "messages": messages, "tool_calls": list(calls.values()),
           "started_at": times[0] if times else None, "finished_at": times[-1] if times else None}
    if answer:
        doc["report"] = {"content": answer}
    return run_id, doc, warnings


# --------------------------------------------------------------------------- reading


@dataclass
class _Source:
    path: Path
    layout: str  # "array" | "lines" | "object"


def _first_char(handle: IO[bytes]) -> str:
    while True:
        chunk = handle.read(1)
        if not chunk:
            return ""
        if not chunk.isspace():
            return chunk.decode("latin-1")


def _layout(path: Path) -> str:
    with path.open("rb") as handle:
        first = _first_char(handle)
        if first == "[":
            return "array"
        if path.suffix.lower() in (".jsonl", ".ndjson"):
            return "lines"
        handle.seek(0)
        line = handle.readline()
    try:
        json.loads(line)
    except ValueError:
        return "object"  # a pretty-printed single object
    return "lines"


def _first_record(source: _Source) -> Any:
    with source.path.open("rb") as handle:
        if source.layout == "array":
            return next(iter(ijson.items(handle, "item", use_float=True)), None)
        if source.layout == "object":
            return json.load(handle)
        for raw in handle:
            if raw.strip():
                try:
                    return json.loads(raw)
                except ValueError:
                    return None
    return None


_NATIVE_KEYS = frozenset(documents.schema("run_document")["properties"])


def _chat_messages(messages: Any) -> bool:
    """True for a non-empty list of chat-completions messages (objects with a ``role``);
    an OpenCode export's ``[{info, parts}]`` is not one."""
    return (isinstance(messages, list) and bool(messages)
            and all(isinstance(m, Mapping) and isinstance(m.get("role"), str) for m in messages))


def unsupported(path: Path) -> RecordError:
    """The error for a file of no supported format: names the file and the formats."""
    return RecordError(f"{path.name}: unsupported format; supported: "
                       f"{', '.join(f for f in FORMATS if f != 'auto')} (pass --format to force one)")


def detect_format(path: Path) -> str:
    """The format of ``path`` judged from its first record. Raises ``RecordError`` naming
    the file and the supported formats when none fits (e.g. an OpenCode session
    export, whose ``messages`` are ``{info, parts}`` objects, not chat messages)."""
    if path.is_dir():
        raise RecordError(f"{path.name}: is a folder; pass its files (e.g. {path.name}/*.jsonl)")
    with path.open("rb") as handle:
        head = handle.read(4096)
    if not head.strip():
        raise RecordError(f"{path.name}: the file is empty")
    source = _Source(path, _layout(path))
    try:
        record = _first_record(source)
    except (ValueError, ijson.JSONError) as exc:
        raise RecordError(f"{path.name}: not valid JSON ({exc})") from None
    if record is None and source.layout == "lines":
        raise RecordError(f"{path.name}: not valid JSON lines (the first record does not parse)")
    if isinstance(record, list) and _chat_messages(record):
        return "openai-messages"
    if isinstance(record, Mapping):
        if "traj" in record and "task_id" in record:
            return "tau-bench"
        if record.get("type") == "session_meta" and "payload" in record:
            return "codex"
        if "sessionId" in record and "type" in record:
            return "claude-code"
        if "run_id" in record and set(record) <= _NATIVE_KEYS:
            return "native"
        if _chat_messages(record.get("messages")):
            return "openai-messages"
    raise unsupported(path)


def _raw_records(source: _Source, progress: Callable[[int], None]) -> Iterator[tuple[int, Any, str | None]]:
    """(index, record, error) one at a time; bytes read are reported to ``progress``."""
    with source.path.open("rb") as handle:
        if source.layout == "object":
            record = json.load(handle)
            progress(handle.tell())
            yield 0, record, None
            return
        if source.layout == "array":
            index = -1
            try:
                for index, record in enumerate(ijson.items(handle, "item", use_float=True)):
                    progress(handle.tell())
                    yield index, record, None
            except ijson.JSONError as exc:
                yield index + 1, None, f"malformed JSON after record {index}: {exc}; rest of file skipped"
            progress(handle.tell())
            return
        done = 0
        for line, raw in enumerate(handle):
            done += len(raw)
            progress(done)
            if not raw.strip():
                continue
            try:
                yield line, json.loads(raw), None
            except ValueError as exc:
                yield line, None, f"not JSON ({str(exc)[:80]})"


def read_records(path: Path, fmt: str, progress: Callable[[int], None] = lambda done: None) -> Iterator[Parsed]:
    """The run documents of one file, one at a time (pure: no database). ``fmt`` is one
    of ``FORMATS``; ``auto`` detects it. Each ``Parsed`` carries a document or an error.
    Raises ``RecordError`` (unknown format), ``OSError``."""
    if fmt not in FORMATS:
        raise RecordError(f"unknown format {fmt!r}")
    if fmt == "auto":
        fmt = detect_format(path)
    source = _Source(path, _layout(path))
    stem = _slug(path.stem)
    if fmt in WHOLE_FILE_FORMATS:
        events, skipped = [], 0
        for _, record, error in _raw_records(source, progress):
            if error is None:
                events.append(record)
            else:
                skipped += 1
        adapter = claude_code_run if fmt == "claude-code" else codex_run
        yield _parse(0, lambda: adapter(events, stem),
                     [f"{skipped} line(s) were not JSON and were skipped"] if skipped else [])
        return
    for index, record, error in _raw_records(source, progress):
        if error is not None:
            yield Parsed(index, error=error)
            continue
        if fmt == "native":
            yield _parse(index, lambda: native_run(record))
        elif fmt == "tau-bench":
            yield _parse(index, lambda: tau_bench_run(record, stem))
        else:
            yield _parse(index, lambda: openai_record_run(record, index, stem))


def _parse(index: int, adapt: Callable[[], tuple[str, dict[str, Any], list[str]]],
           extra_warnings: Iterable[str] = ()) -> Parsed:
    try:
        run_id, doc, warnings = adapt()
    except RecordError as exc:
        return Parsed(index, error=str(exc))
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        # A record of an unexpected shape: report it and go on with the next one.
        return Parsed(index, error=f"cannot read record ({type(exc).__name__}: {str(exc)[:120]})")
    return Parsed(index, run_id, doc, [*extra_warnings, *warnings])


# --------------------------------------------------------------------------- import


def check_files(paths: Iterable[Path | str], fmt: str = "auto") -> list[tuple[Path, str]]:
    """Each file with its format (``fmt``, or the detected one for ``auto``); pure, reads
    only each file's first record. Raises ``RecordError`` for an unknown ``fmt`` or a
    file of no supported format (naming the file and the formats supported)."""
    if fmt not in FORMATS:
        raise RecordError(f"unknown format {fmt!r}")
    return [(Path(p), detect_format(Path(p)) if fmt == "auto" else fmt) for p in paths]


def import_files(
    session: Session, actor: Actor, workspace_id: int, paths: Iterable[Path | str], *,
    fmt: str = "auto", progress: Callable[[int], None] = lambda done: None,
    problem: Callable[[str], None] = lambda text: None,
) -> ImportSummary:
    """Import runs from files into ``workspace_id`` through ``runs.upsert_run`` (SPEC 11).

    One transaction per run: a record that cannot be imported is reported (``problem``
    callback and ``ImportSummary.problems``, "file: record i (run id): reason") and the
    rest go on. Re-importing the same files is idempotent (same counts, all
    ``unchanged``). ``progress`` receives the bytes read so far across all files.
    With ``fmt="auto"`` every file's format is detected before anything is written: a
    file of no supported format refuses the whole import.
    Raises ``Forbidden`` (actor may not import into the workspace), ``RecordError``
    (a file of no supported format, naming it and the formats supported), ``OSError``.
    """
    require_role(session, actor, workspace_id, Role.ADMIN)
    formats = check_files(paths, fmt)
    summary = ImportSummary()
    offset = 0
    for path, path_fmt in formats:
        size = path.stat().st_size
        base = offset
        for parsed in read_records(path, path_fmt, lambda done, base=base: progress(base + done)):
            where = f"{path.name}: record {parsed.index}" + (f" ({parsed.run_id})" if parsed.run_id else "")
            summary.warnings.extend(f"{where}: {w}" for w in parsed.warnings)
            if parsed.doc is None:
                summary.failed += 1
                summary.problems.append(f"{where}: {parsed.error}")
                problem(summary.problems[-1])
                continue
            try:
                outcome = runs.upsert_run(session, actor, workspace_id, parsed.run_id, parsed.doc)
            except ServiceError as exc:
                session.rollback()
                summary.failed += 1
                summary.problems.append(f"{where}: {exc.message}")
                problem(summary.problems[-1])
                continue
            setattr(summary, outcome.result, getattr(summary, outcome.result) + 1)
            summary.tool_calls += outcome.tool_calls
            summary.failed_tool_calls += outcome.failed_tool_calls
        offset = base + size
        progress(offset)
    return summary
