"""Responses shared by the lead / admin pages: after a POST, on a stale write, and a
CSV / JSONL download."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from flask import Response, flash, make_response, redirect, render_template, stream_with_context

from ..errors import Conflict
from .auth import safe_next


def see_other(message: str, next_url: str | None, category: str = "success") -> Response:
    """No-JS path of an action: flash ``message`` and redirect (303) to ``next_url`` if it
    is a path on this site, else to the runs list."""
    flash(message, category)
    return redirect(safe_next(next_url), 303)


def conflict_page(error: Conflict, back_url: str | None, **context: Any) -> Response:
    """HTTP 409 page for a stale write: the message, the current values, a way back."""
    details = error.details if isinstance(error.details, dict) else {}
    return make_response(render_template(
        "errors/conflict.html", message=error.message, current=details,
        back_url=safe_next(back_url), **context,
    ), 409)


MIMETYPES = {"csv": "text/csv", "jsonl": "application/x-ndjson"}


def attachment(chunks: Iterable[str], name: str, fmt: str,
               headers: Mapping[str, str] | None = None) -> Response:
    """A download (``fmt`` csv | jsonl): the text ``chunks`` streamed as UTF-8 with the
    request context kept, saved as ``<name>-<UTC time>.<fmt>``, never cached; ``headers``
    (e.g. ``X-Export-Rows``) added as given."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    response = Response(stream_with_context(chunk.encode("utf-8") for chunk in chunks),
                        mimetype=MIMETYPES[fmt])
    response.headers["Content-Disposition"] = f'attachment; filename="{name}-{stamp}.{fmt}"'
    response.headers.update(headers or {})
    response.headers["Cache-Control"] = "no-store"
    return response
