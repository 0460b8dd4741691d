"""The runtime log line of a tool call (SPEC 4): tool name, argument keys, status,
duration and error class, never values; every text escaped so no value forges a line."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from ..secret_scan import redact_text

log = logging.getLogger("reviewapp.tool_calls")

# An exception class name (``ValueError``, ``botocore.exceptions.ClientError``,
# ``TimeoutExpired``): the only part of an error the runtime log may hold (SPEC 4).
_ERROR_CLASS = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]{0,60}(?:\.[A-Za-z_][A-Za-z0-9_]{0,60}){0,6}"
    r"(?:Error|Exception|Timeout|TimeoutExpired|Exit|Interrupt|Failure|Fault|Refused)")
_ERROR_CLASS_AT_START = re.compile(r"\s{0,20}(" + _ERROR_CLASS.pattern + r")\b")


def error_class(error: Any) -> str | None:
    """A value-free label for an error, for the runtime log (SPEC 4): the exception class
    name of an error object's ``type`` / ``class`` / ``error_class`` field or that a text
    starts with (``ValueError: ...`` -> ``ValueError``), only when it looks like one and
    holds nothing redaction would remove; else ``"error"``. ``None`` when no error."""
    if error is None:
        return None
    label = None
    if isinstance(error, Mapping):
        for key in ("type", "class", "error_class"):
            value = error.get(key)
            if isinstance(value, str) and _ERROR_CLASS.fullmatch(value):
                label = value
                break
    elif isinstance(error, str):
        match = _ERROR_CLASS_AT_START.match(error[:600])
        label = match.group(1) if match else None
    if label is None or redact_text(label) != label:
        return "error"
    return label


def log_safe(text: str) -> str:
    """``text`` with control characters (line breaks included) escaped as ``\\xNN``, so
    no value can start a forged log line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256
                   else f"\\u{ord(c):04x}" for c in text)


def log_row(row: Mapping[str, Any], event: str, error: Any) -> None:
    # Never values (SPEC 4): the tool name and the argument keys (both redacted before
    # storage, escaped here), the state, the duration and the error class.
    if not log.isEnabledFor(logging.INFO):
        return
    arguments = row["arguments"]
    keys = ",".join(sorted(log_safe(str(k)) for k in arguments)) if isinstance(arguments, dict) else ""
    log.info(
        "tool_call event=%s tool=%s argument_keys=%s status=%s duration_ms=%s error_class=%s",
        event, log_safe(row["tool_name"]), keys, row["status"], row["duration_ms"],
        error_class(error),
    )
