"""Reading files: layout (JSON array, JSON lines, one object), format detection from the
first record, streaming records one at a time, and ``read_records``, which turns each
record (or a whole-file event log) into a ``Parsed``. Pure: no database."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import ijson

from ...domain.import_formats import FORMAT_CHOICES, IMPORT_FORMATS
from ...domain.vocabulary import Registry
from .. import documents
from ._common import DEFAULT_OPTIONS, Adapted, Options, RecordError, Warn, slug
from .claude_code import adapt_claude_code
from .codex import adapt_codex
from .copilot import adapt_copilot
from .gemini import adapt_gemini
from .native import adapt_native
from .openai_messages import adapt_openai_record
from .opencode import adapt_opencode
from .sregym_result import is_verdict, verdict_outcome
from .stratus import adapt_stratus
from .tau_bench import adapt_tau_bench

FORMATS = FORMAT_CHOICES
RESULT_FORMAT = "sregym-result"  # a verdict file: the outcome of the runs logged beside it
# Formats in which each record is one run: (record, its index, the file's stem, options).
RECORD_ADAPTERS: dict[str, Callable[[Any, int, str, Options], Adapted]] = {
    "native": lambda record, index, stem, options: adapt_native(record),
    "openai-messages": adapt_openai_record,
    "tau-bench": lambda record, index, stem, options: adapt_tau_bench(record, stem, options),
}
# Formats in which the whole file is one run (an event log), not a list of runs.
WHOLE_FILE_ADAPTERS: dict[str, Callable[[list[Any], str, Options], Adapted]] = {
    "claude-code": adapt_claude_code,
    "codex": adapt_codex,
    "copilot": adapt_copilot,
    "gemini": adapt_gemini,
    "opencode": adapt_opencode,
    "stratus": adapt_stratus,
}
WHOLE_FILE_FORMATS = tuple(f.code for f in IMPORT_FORMATS if f.whole_file)
# Every format of domain/import_formats.py is read by exactly one adapter (a format
# without one fails here, at import, instead of being read as another), and its
# ``whole_file`` flag says which kind.
IMPORT_FORMATS.check_covered([*RECORD_ADAPTERS, *WHOLE_FILE_ADAPTERS, RESULT_FORMAT], "import adapters")
Registry("whole-file format", (f for f in IMPORT_FORMATS if f.whole_file)).check_covered(
    WHOLE_FILE_ADAPTERS, "whole-file adapters")
# SREGym names its verdict files <harness>_results_<problem>_<time>.json.
VERDICT_GLOB = "*_results_*.json"


@dataclass
class Parsed:
    """One source record: its position (0-based record index, or line for JSON lines),
    the run document made from it (``None`` when it failed), warnings, the error, the
    failed calls per failure rule, and whether it held tool-like fields."""

    index: int
    run_id: str | None = None
    doc: dict[str, Any] | None = None
    warnings: list[Warn] = field(default_factory=list)
    error: str | None = None
    failures: Counter[str] = field(default_factory=Counter)
    tool_like: bool = False
    source: str | None = None  # for an outcome: the file whose run it belongs to


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


_NO_RECORD = object()  # an array without an item (``[]``), apart from ``[null]``


def _first_record(source: _Source) -> Any:
    with source.path.open("rb") as handle:
        if source.layout == "array":
            return next(iter(ijson.items(handle, "item", use_float=True)), _NO_RECORD)
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


def _is_copilot(record: Mapping[str, Any]) -> bool:
    kind = record.get("type")
    return (isinstance(kind, str) and isinstance(record.get("data"), Mapping)
            and kind.startswith(("session.", "user.", "assistant.", "tool.")))


def _is_opencode(record: Mapping[str, Any]) -> bool:
    return (isinstance(record.get("info"), Mapping) and isinstance(record.get("messages"), list)
            and all(isinstance(m, Mapping) and "parts" in m for m in record["messages"]))


def _is_claude_stream(record: Mapping[str, Any]) -> bool:
    return (record.get("type") == "system" and record.get("subtype") == "init"
            and isinstance(record.get("session_id"), str))


# The first record's shape -> its format, tried in this order (the first match wins).
_RECORD_SHAPES: tuple[tuple[str, Callable[[Mapping[str, Any]], bool]], ...] = (
    ("tau-bench", lambda r: "traj" in r and "task_id" in r),
    ("codex", lambda r: r.get("type") == "session_meta" and "payload" in r),
    ("gemini", lambda r: isinstance(r.get("sessionId"), str) and "startTime" in r and "type" not in r),
    ("copilot", _is_copilot),
    ("stratus", lambda r: r.get("type") == "metadata" and "problem_id" in r and "total_stages" in r),
    ("opencode", _is_opencode),
    (RESULT_FORMAT, is_verdict),
    ("claude-code", lambda r: "sessionId" in r and "type" in r),
    ("claude-code", _is_claude_stream),  # stream-json stdout
    ("native", lambda r: "run_id" in r and set(r) <= _NATIVE_KEYS),
    ("openai-messages", lambda r: _chat_messages(r.get("messages"))),
)
# Every format can be detected (``auto``), and only formats of the registry are.
IMPORT_FORMATS.check_covered({fmt for fmt, _ in _RECORD_SHAPES}, "format detection")


def unsupported(path: Path) -> RecordError:
    """The error for a file of no supported format: names the file and the formats."""
    return RecordError(f"{path.name}: unsupported format; supported: "
                       f"{', '.join(IMPORT_FORMATS.codes())} (pass --format to force one)")


def detect_format(path: Path) -> str:
    """The format of ``path`` judged from its first record. Raises ``RecordError`` naming
    the file: for an empty file or an empty array (``[]``, "no records"), for invalid
    JSON, and with the supported formats when none fits."""
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
    if record is _NO_RECORD:
        raise RecordError(f"{path.name}: the file has no records (an empty JSON array)")
    if record is None and source.layout == "lines":
        raise RecordError(f"{path.name}: not valid JSON lines (the first record does not parse)")
    if isinstance(record, list) and _chat_messages(record):
        return "openai-messages"
    if isinstance(record, Mapping):
        found = next((fmt for fmt, looks_like in _RECORD_SHAPES if looks_like(record)), None)
        if found is not None:
            return found
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


def read_records(path: Path, fmt: str, progress: Callable[[int], None] = lambda done: None,
                 options: Options = DEFAULT_OPTIONS) -> Iterator[Parsed]:
    """The run documents of one file, one at a time (pure: no database). ``fmt`` is one
    of ``FORMATS``; ``auto`` detects it. Each ``Parsed`` carries a document or an error:
    a record the format cannot read (also under a forced format) is an error with its
    reason, and so is a record that yields no query, no answer and no tool call (never
    stored as an empty run). Raises ``RecordError`` (unknown format), ``OSError``."""
    if fmt not in FORMATS:
        raise RecordError(f"unknown format {fmt!r}")
    if fmt == "auto":
        fmt = detect_format(path)
    source = _Source(path, _layout(path))
    stem = slug(path.stem)
    if fmt == RESULT_FORMAT:
        yield from _verdict_records(path, source, progress, options)
        return
    if fmt in WHOLE_FILE_ADAPTERS:
        events, skipped = _events(source, progress)
        extra = [Warn("not_json", f"{len(skipped)} line(s) were not JSON and were skipped "
                                  f"(line {', '.join(str(n) for n in skipped[:5])})")] if skipped else []
        verdict = sibling_verdict(path)

        def adapt() -> Adapted:
            adapted = _adapt_whole_file(path, fmt, events, options)
            if verdict is not None and not adapted.doc.get("external_outcome"):
                adapted.doc["external_outcome"], adapted.doc["external_outcome_detail"] = verdict
            return adapted

        yield _parse(0, adapt, extra)
        return
    adapt_record = RECORD_ADAPTERS[fmt]
    for index, record, error in _raw_records(source, progress):
        if error is not None:
            yield Parsed(index, error=error)
            continue
        yield _parse(index, lambda record=record, index=index: adapt_record(record, index, stem, options),
                     native=fmt == "native")


def _events(source: _Source, progress: Callable[[int], None] = lambda done: None) -> tuple[list[Any], list[int]]:
    """The records of a whole-file log, and the lines that were not JSON."""
    events, skipped = [], []
    for line, record, error in _raw_records(source, progress):
        if error is None:
            events.append(record)
        else:
            skipped.append(line)
    return events, skipped


def _adapt_whole_file(path: Path, fmt: str, events: list[Any], options: Options) -> Adapted:
    """The run of a whole-file log ``path`` (its ``events`` read), through its format's
    adapter; a Claude Code log is read with its pair beside it (``_claude_code_pair``)."""
    if fmt == "claude-code":
        events = _claude_code_pair(path, events)
    return WHOLE_FILE_ADAPTERS[fmt](events, slug(path.stem), options)


def _claude_session(events: list[Any]) -> tuple[str, bool] | None:
    """``(session id, is stream-json stdout)`` of Claude Code events, else ``None``."""
    for key, stream in (("sessionId", False), ("session_id", True)):
        found = next((e[key] for e in events if isinstance(e, Mapping) and isinstance(e.get(key), str)), None)
        if found is not None:
            return found, stream
    return None


def _claude_code_pair(path: Path, events: list[Any]) -> list[Any]:
    """A Claude Code session log and the stream-json stdout of the same session beside it
    are one run (SREGym keeps both): the log's events (prompt, messages, calls, clocks)
    and the stdout's ``result`` line (answer, cost, success), whichever file is read.
    ``events`` unchanged when no such pair is beside ``path``."""
    own = _claude_session(events)
    if own is None:
        return events
    for sibling in sorted(path.parent.iterdir()):
        if sibling == path or not sibling.is_file() or sibling.match(VERDICT_GLOB):
            continue
        try:
            if detect_format(sibling) != "claude-code":
                continue
        except (RecordError, OSError):
            continue
        other = _events(_Source(sibling, _layout(sibling)))[0]
        theirs = _claude_session(other)
        if theirs is None or theirs[0] != own[0] or theirs[1] == own[1]:
            continue
        log, stdout = (other, events) if own[1] else (events, other)
        return [*log, *(e for e in stdout if isinstance(e, Mapping) and e.get("type") == "result")]
    return events


def _read_verdict(path: Path) -> Any:
    try:
        with path.open("rb") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def sibling_verdict(path: Path) -> tuple[str, dict[str, Any]] | None:
    """The outcome ``(label, detail)`` of the one SREGym verdict file
    (``*_results_*.json``) in the folder of the log ``path``, if there is exactly one
    readable verdict there (SREGym keeps a run's log and its verdict side by side)."""
    verdicts = [(p, _read_verdict(p)) for p in sorted(path.parent.glob(VERDICT_GLOB)) if p != path]
    verdicts = [(p, v) for p, v in verdicts if is_verdict(v)]
    if len(verdicts) != 1:
        return None
    return verdict_outcome(verdicts[0][1], verdicts[0][0].name)


def _verdict_records(path: Path, source: _Source, progress: Callable[[int], None],
                     options: Options) -> Iterator[Parsed]:
    """A verdict file as outcome-only documents for the runs logged beside it (every
    harness log in its folder; the run ids come from reading those logs)."""
    try:
        label, detail = verdict_outcome(_read_verdict(path), path.name)
    except RecordError as exc:
        yield Parsed(0, error=str(exc))
        return
    progress(path.stat().st_size)
    found, given = False, set()
    for sibling in sorted(path.parent.iterdir()):
        if sibling == path or not sibling.is_file() or sibling.match(VERDICT_GLOB):
            continue
        try:
            fmt = detect_format(sibling)
        except (RecordError, OSError):
            continue
        if fmt not in WHOLE_FILE_ADAPTERS:
            continue
        parsed = _parse(0, lambda sibling=sibling, fmt=fmt: _adapt_whole_file(
            sibling, fmt, _events(_Source(sibling, _layout(sibling)))[0], options))
        if parsed.run_id is None or parsed.run_id in given:
            continue
        given.add(parsed.run_id)
        found = True
        yield Parsed(0, parsed.run_id, {"run_id": parsed.run_id, "external_outcome": label,
                                        "external_outcome_detail": detail}, source=sibling.name)
    if not found:
        yield Parsed(0, error="no harness log beside it, so no run to attach the verdict to "
                              "(import the log, or use flask runs set-outcome RUN_ID)")


def _empty(doc: Mapping[str, Any]) -> bool:
    return not (doc.get("query") or doc.get("answer") or doc.get("tool_calls"))


def _parse(index: int, adapt: Callable[[], Adapted], extra_warnings: Iterable[Warn] = (), *,
           native: bool = False) -> Parsed:
    """``adapt()`` as a ``Parsed``. A foreign record that yields nothing (no query, answer,
    tool call or outcome) is an error; a native document is the schema's to judge."""
    try:
        adapted = adapt()
    except RecordError as exc:
        return Parsed(index, error=str(exc))
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        # A record of an unexpected shape: report it and go on with the next one.
        return Parsed(index, error=f"cannot read record ({type(exc).__name__}: {str(exc)[:120]})")
    if not native and _empty(adapted.doc) and not adapted.doc.get("external_outcome"):
        return Parsed(index, adapted.run_id, error="the record yields no query, no answer and no tool call; "
                      "not stored (is it of this format?)", tool_like=adapted.tool_like)
    return Parsed(index, adapted.run_id, adapted.doc, [*extra_warnings, *adapted.warnings],
                  failures=adapted.failures, tool_like=adapted.tool_like)


def check_files(paths: Iterable[Path | str], fmt: str = "auto") -> list[tuple[Path, str]]:
    """Each file with its format (``fmt``, or the detected one for ``auto``); pure, reads
    only each file's first record. Raises ``RecordError`` for an unknown ``fmt`` or a
    file of no supported format (naming the file and the formats supported)."""
    if fmt not in FORMATS:
        raise RecordError(f"unknown format {fmt!r}")
    return [(Path(p), detect_format(Path(p)) if fmt == "auto" else fmt) for p in paths]
