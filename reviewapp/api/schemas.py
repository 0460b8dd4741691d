"""Request bodies: read JSON safely and turn problems into 400s that name the field."""

from __future__ import annotations

import json
from typing import Any

from flask import request

from ..errors import ValidationFailed


def _find_lone_surrogate(value: Any, path: str) -> str | None:
    if isinstance(value, str):
        for ch in value:
            if 0xD800 <= ord(ch) <= 0xDFFF:
                return path or "$"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = _find_lone_surrogate(key, f"{path}.<key>") or _find_lone_surrogate(
                item, f"{path}.{key}" if path else str(key))
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _find_lone_surrogate(item, f"{path}[{i}]")
            if found:
                return found
    return None


def read_json() -> Any:
    """The request body as JSON. Raises ``ValidationFailed`` (400) for a wrong content
    type, bytes that are not UTF-8, malformed JSON, or text with lone surrogates (the
    message names the field path, SPEC 10). Oversize bodies are refused earlier (413)."""
    if not request.is_json:
        raise ValidationFailed("body", "send Content-Type: application/json")
    raw = request.get_data(cache=True)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationFailed("body", f"not valid UTF-8 at byte {exc.start}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationFailed("body", f"malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    bad = _find_lone_surrogate(data, "")
    if bad:
        raise ValidationFailed(bad, "contains a lone surrogate; text must be valid Unicode")
    return data
