"""Request bodies: read JSON safely and turn problems into 400s that name the field."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection
from typing import Any

from flask import request

from ..domain.json_text import find_problem
from ..errors import ValidationFailed

# Lone surrogates and NUL can only arrive as \u escapes (raw bytes would not be UTF-8),
# so the per-string walk runs only when the raw text holds such an escape.
_SUSPECT_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")


def _reject_constant(name: str) -> Any:
    raise ValidationFailed("body", f"malformed JSON: {name} is not a JSON number")


def read_json(items_checked: bool = False) -> Any:
    """The request body as JSON (SPEC 9, 10). Raises ``ValidationFailed`` (400) for a wrong
    content type, bytes that are not UTF-8, malformed JSON (``NaN`` / ``Infinity`` too),
    numbers too long to read or too large to be finite (``1e400``), nesting deeper than 64 levels, or text with a lone surrogate
    or a NUL character (the message names the field path, e.g. ``messages[0].content``).
    Bodies over ``MAX_CONTENT_LENGTH`` are refused before this with 413.

    ``items_checked``: the caller checks each item of an array body on its own (a batch
    of events, ``documents.check``), so that one item's NUL character, lone surrogate or
    infinite number, or nesting deeper than 64 levels (the array is none of its levels),
    rejects that item only: an array body is then returned as parsed. The caller must check
    every item with ``json_text.find_problem`` (iterative) before anything else reads it."""
    if not request.is_json:
        raise ValidationFailed("body", "send Content-Type: application/json")
    raw = request.get_data(cache=True)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationFailed("body", f"not valid UTF-8 at byte {exc.start}") from None
    infinite: list[str] = []

    def read_float(literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):  # e.g. 1e400: the walk below names its field
            infinite.append(literal)
        return value

    try:
        data = json.loads(text, parse_constant=_reject_constant, parse_float=read_float)
    except json.JSONDecodeError as exc:
        raise ValidationFailed(
            "body", f"malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise ValidationFailed("body", "nested too deeply") from None
    except ValueError as exc:  # e.g. an integer with more than 4,300 digits
        raise ValidationFailed("body", f"malformed JSON: {str(exc)[:120]}") from None
    if items_checked and isinstance(data, list):
        return data  # each item is checked on its own, nesting first (iteratively)
    problem = find_problem(data, check_text=bool(infinite) or _SUSPECT_ESCAPE.search(text) is not None)
    if problem is not None:
        raise ValidationFailed(*problem)
    return data


def read_object(allowed: Collection[str]) -> dict[str, Any]:
    """The request body as a JSON object whose keys are all in ``allowed`` (the
    documented fields: ``additionalProperties: false`` in openapi.yaml). Raises
    ``ValidationFailed`` naming ``body`` for a non-object and the first unknown field
    (``comment: unknown field``), on top of everything ``read_json`` refuses."""
    body = read_json()
    if not isinstance(body, dict):
        raise ValidationFailed("body", "expected a JSON object")
    unknown = [key for key in body if key not in allowed]
    if unknown:
        raise ValidationFailed(unknown[0][:80], "unknown field")
    return body
