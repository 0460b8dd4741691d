"""Template filters of the review pages: Markdown, pretty JSON, DOM ids, initials."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from flask import Flask

from .markdown import render_markdown

PREVIEW_CHARS = 600


def pretty_json(value: Any) -> str:
    """``value`` as indented JSON; a string holding JSON is parsed first (tool results
    are stored as JSON text, possibly cut at 2,000 characters: then shown as is)."""
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
        if isinstance(value, str):
            return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)


def dom_id(value: Any) -> str:
    """A safe HTML id part for any value (citation ids are the agent's free text): the
    value's letters, digits, ``-`` and ``_``, plus a short hash when anything was dropped
    so two different values never share an id."""
    text = "" if value is None else str(value)
    safe = re.sub(r"[^A-Za-z0-9_-]", "", text)[:40]
    if safe == text and safe:
        return safe
    return f"{safe}-{hashlib.sha1(text.encode()).hexdigest()[:8]}" if text else "0"


def initials(value: Any) -> str:
    """Reviewer initials as text, from a list or a string."""
    if not value:
        return ""
    if isinstance(value, str):
        return value
    return ", ".join(str(v) for v in value)


def preview(value: str | None, limit: int = PREVIEW_CHARS) -> str:
    """The first ``limit`` characters of ``value`` (a collapsed long result)."""
    text = value or ""
    return text if len(text) <= limit else text[:limit].rstrip() + " …"


def as_datetime(value: Any) -> Any:
    """An ISO-8601 string (as services put in error details) as an aware UTC datetime;
    datetimes pass through; anything unparseable gives ``None``."""
    if isinstance(value, str):
        from ..domain.times import parse_timestamp

        try:
            return parse_timestamp(value, "value")
        except (TypeError, ValueError):
            return None
    return value


def register(app: Flask) -> None:
    """Add the filters to ``app``'s Jinja environment."""
    app.add_template_filter(render_markdown, "markdown")
    app.add_template_filter(pretty_json, "pretty_json")
    app.add_template_filter(dom_id, "dom_id")
    app.add_template_filter(initials, "initials")
    app.add_template_filter(preview, "preview")
    app.add_template_filter(as_datetime, "as_datetime")
    app.jinja_env.globals["PREVIEW_CHARS"] = PREVIEW_CHARS
