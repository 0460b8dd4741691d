"""When is a tool result a failure? The one place that says so, for every import format
(issue 14, SPEC 4, SPEC 11). Pure: stdlib only, linear time in the result's size.

A tool result is failed when, checked in this order (the first rule that fires names the
failure):

- ``flag``: the message or block that carries the result says so: ``error: true`` (or a
  non-empty error text), ``is_error: true``, ``isError: true``, ``success: false`` or
  ``status`` ``"error"`` / ``"failed"`` / ``"failure"`` (any case);
- ``exit_code``: a shell-like result reports a non-zero exit code: an explicit
  ``exit_code`` given by the format, a JSON result whose ``exit_code`` / ``exitCode`` /
  ``returncode`` / ``return_code`` (also under ``metadata``) is a non-zero integer, or a
  header line among the text's first lines before its output
  (``Process exited with code 1``, ``Exit code: 1``, ``exit status 1``), or a shell
  tool's report footer at the text's end (Gemini CLI: ``Exit Code: 1`` followed only by
  its ``Signal:`` / ``Background PIDs:`` / ``Process Group PGID:`` lines); an exit code
  quoted in the output (``kubectl describe``'s ``Exit Code: 1``) is not the tool's;
- ``error_prefix``: the text starts with ``Error:`` (tau-bench's convention);
- ``traceback``: the text starts with a Python traceback
  (``Traceback (most recent call last):``);
- ``json_error``: the text (or structured result) is a JSON object with a non-empty
  ``error`` field;
- ``mcp_is_error``: the text (or structured result) is an MCP tool result with
  ``isError: true``.

``failure_rule`` returns the rule's code, or ``None`` for a result that did not fail.

Every ingest path stores a call's end by ``ended_as`` (SPEC 4 statuses): the importers
(``importers._common``), a run document's ``tool_calls`` (JSON API ``PUT``, imports) and
the tool-call events (JSON API, OTLP spans, the LangChain handler). A ``completed`` end
whose result meets a rule is stored ``failed``, its result as the error; so the timeline,
the failed-call counts and the dashboard read one status.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .vocabulary import Registry


@dataclass(frozen=True)
class FailureRule:
    """``code`` as counted in import summaries; ``label`` says what the rule looks at."""

    code: str
    label: str


FAILURE_RULES: Registry[FailureRule] = Registry("failure_rule", (
    FailureRule("flag", "the message says so (error / is_error / isError / success / status)"),
    FailureRule("exit_code", "a non-zero exit code"),
    FailureRule("error_prefix", "text starting with Error:"),
    FailureRule("traceback", "text starting with a Python traceback"),
    FailureRule("json_error", "JSON result with a non-empty error field"),
    FailureRule("mcp_is_error", "MCP result with isError: true"),
))

FAILED_STATUSES = frozenset({"error", "failed", "failure"})
EXIT_CODE_KEYS = ("exit_code", "exitCode", "returncode", "return_code")
# Header lines of shell-like results that carry the process's exit code (lower case).
EXIT_CODE_HEADERS = ("process exited with code", "exit code:", "exit code", "exit status:",
                     "exit status", "exited with code")
# How many leading lines of a text may hold the exit-code header, and how long the
# examined prefix is: the header comes before the output, never inside it.
HEADER_LINES = 6
HEADER_CHARS = 600
# Report lines that follow the exit-code line of a shell tool's footer (lower case).
FOOTER_KEYS = ("signal:", "background pids:", "process group pgid:")
# A text longer than this is not parsed as JSON (a tool result stored whole can be large;
# the error / isError field of a real error result sits in a small object).
MAX_JSON_CHARS = 1_000_000
TRACEBACK = "Traceback (most recent call last):"


def flag_failure(message: Mapping[str, Any] | None) -> bool:
    """True when the envelope ``message`` (a tool message, a content block, an event's
    data) flags its result as failed (rule ``flag``)."""
    if not isinstance(message, Mapping):
        return False
    error = message.get("error")
    if error is True or (isinstance(error, str) and error.strip()):
        return True
    if message.get("is_error") is True or message.get("isError") is True:
        return True
    if message.get("success") is False:
        return True
    status = message.get("status")
    return isinstance(status, str) and status.strip().lower() in FAILED_STATUSES


def _non_zero(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value != 0
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value) != 0
    return False


def header_exit_code(text: str) -> int | None:
    """The exit code a shell-like result states in a header line among its first
    ``HEADER_LINES`` lines (``Process exited with code 1``, ``Exit code: 2``), else
    ``None``. Only the first ``HEADER_CHARS`` characters are read, and reading stops at an
    ``Output:`` line: what follows is the program's output, not the tool's report."""
    for line in text[:HEADER_CHARS].splitlines()[:HEADER_LINES]:
        lowered = line.strip().lower()
        if lowered.startswith("output:"):
            return None
        for header in EXIT_CODE_HEADERS:
            if lowered.startswith(header):
                rest = lowered[len(header):].strip().lstrip(":=").strip()
                digits = rest.split()[0] if rest else ""
                if digits.lstrip("-").isdigit():
                    return int(digits)
    return None


def _exit_code_line(line: str) -> int | None:
    """The code of an unindented ``Exit Code: N`` line (any case), else ``None``."""
    lowered = line.rstrip().lower()
    if not lowered.startswith("exit code:"):
        return None
    digits = lowered[len("exit code:"):].strip()
    return int(digits) if digits.lstrip("-").isdigit() else None


def footer_exit_code(text: str) -> int | None:
    """The exit code a shell tool states in a report footer at the end of its result,
    else ``None``: an unindented ``Exit Code: N`` line followed by at least one of the
    tool's report lines (``FOOTER_KEYS``) and nothing else but blank lines or a closing
    wrapper tag (``</untrusted_context>``). Only the last ``HEADER_LINES`` lines of the
    last ``HEADER_CHARS`` characters are read."""
    lines = text[-HEADER_CHARS:].splitlines()[-HEADER_LINES:]
    report_lines = 0
    for line in reversed(lines):
        stripped = line.strip()
        if not stripped or (stripped.startswith("</") and stripped.endswith(">") and not report_lines):
            continue
        if line.lower().startswith(FOOTER_KEYS):
            report_lines += 1
            continue
        code = _exit_code_line(line)
        return code if code is not None and report_lines else None
    return None


def _json_object(result: Any) -> Mapping[str, Any] | None:
    if isinstance(result, Mapping):
        return result
    if not isinstance(result, str) or len(result) > MAX_JSON_CHARS:
        return None
    stripped = result.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, Mapping) else None


def _json_exit_code(obj: Mapping[str, Any]) -> bool:
    for holder in (obj, obj.get("metadata")):
        if isinstance(holder, Mapping) and any(_non_zero(holder.get(k)) for k in EXIT_CODE_KEYS):
            return True
    return False


def _non_empty(value: Any) -> bool:
    if value is None or value is False:
        return False
    if isinstance(value, (str, list, dict, tuple)):
        return bool(value.strip() if isinstance(value, str) else value)
    return True


def is_mcp_error(result: Any) -> bool:
    """True when ``result`` (a structured value, already read from JSON) is an MCP tool
    result that says ``isError: true`` (rule ``mcp_is_error``; the OTLP mapping's too)."""
    return isinstance(result, Mapping) and result.get("isError") is True


def mcp_error_text(result: Any) -> str | None:
    """The error of an MCP tool result that says ``isError: true`` (``is_mcp_error``):
    the text parts of its ``content`` joined by a blank, or
    ``"MCP tool result isError: true"`` when it has none; ``None`` for any other value."""
    if not is_mcp_error(result):
        return None
    parts = [p.get("text") for p in result.get("content") or () if isinstance(p, Mapping)]
    return " ".join(str(p) for p in parts if p) or "MCP tool result isError: true"


def failure_rule(result: Any, message: Mapping[str, Any] | None = None, *,
                 exit_code: Any = None) -> str | None:
    """The code of the first failure rule (``FAILURE_RULES``) that ``result`` meets, or
    ``None`` when the call did not fail.

    ``result``: the tool's result as the format gives it: text, or a structured value
    (a JSON object is examined as such; a list or other value only by the flag and the
    exit code). ``message``: the envelope that carries it (tool message, content block,
    event data) for the ``flag`` rule. ``exit_code``: an exit code the format reports
    beside the result (int or digit string), if any. Never raises.
    """
    if flag_failure(message):
        return "flag"
    if _non_zero(exit_code):
        return "exit_code"
    obj = _json_object(result)
    if isinstance(result, str) and (rule := _text_rule(result, is_json=obj is not None)):
        return rule
    return _object_rule(obj) if obj is not None else None


def ended_as(status: str, output: Any, error: Any = None) -> tuple[str, Any, Any]:
    """How a tool call's end is stored, on every ingest path (module docstring): a
    ``completed`` end whose ``output`` meets a failure rule (``failure_rule``; the
    ``flag`` rule reads a non-empty ``error`` sent beside it) is
    ``("failed", None, error or output)``: the result is the call's error, as the
    importers store it. Any other end (``failed``, ``started``, a ``completed`` that meets
    no rule) is ``(status, output, error)`` as sent. Never raises."""
    if status != "completed" or failure_rule(output, {"error": error}) is None:
        return status, output, error
    return "failed", None, error if error not in (None, "") else output


def _text_rule(text: str, *, is_json: bool) -> str | None:
    """The rule a result's text meets by its header or footer, prefix or traceback."""
    if not is_json and (header_exit_code(text) or footer_exit_code(text)):
        return "exit_code"
    stripped = text.lstrip()
    if stripped.startswith("Error:"):
        return "error_prefix"
    if stripped.startswith(TRACEBACK):
        return "traceback"
    return None


def _object_rule(obj: Mapping[str, Any]) -> str | None:
    """The rule a JSON result object meets: an exit code, an error field, MCP isError."""
    if _json_exit_code(obj):
        return "exit_code"
    if _non_empty(obj.get("error")):
        return "json_error"
    if is_mcp_error(obj):
        return "mcp_is_error"
    return None
