"""The body limit for chunked uploads (SPEC 9: oversize bodies get 413).

``MAX_CONTENT_LENGTH`` is checked by Werkzeug against ``Content-Length``. A chunked
upload has none: Werkzeug 3.1 then wraps the stream (when the server de-chunks it and
sets ``wsgi.input_terminated``, as gunicorn and Werkzeug's server do) in a
``LimitedStream`` that simply stops reading at the limit, so the request saw the first
``MAX_CONTENT_LENGTH`` bytes as the whole body: a silently truncated body, stored with a
201 whenever the cut left valid JSON (padding after the document).

This WSGI middleware reads a chunked body itself, up to one byte past the limit. Within
the limit, the body is handed on with its ``Content-Length`` (the app sees an ordinary
request); past it, the request is handed on as one declaring a length over the limit and
carrying no body, so Werkzeug raises ``RequestEntityTooLarge`` and the app's own 413
handlers answer (JSON under ``/api``, a page elsewhere). Nothing is read past the limit.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import Any

from flask import Flask

_READ = 64 * 1024


class ChunkedBodyLimit:
    """``app.wsgi_app`` wrapped: chunked bodies measured against ``MAX_CONTENT_LENGTH``."""

    def __init__(self, wsgi_app: Callable[..., Iterable[bytes]], app: Flask) -> None:
        self.wsgi_app = wsgi_app
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        limit = self.app.config.get("MAX_CONTENT_LENGTH")
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if limit is not None and chunked and not environ.get("CONTENT_LENGTH") \
                and environ.get("wsgi.input_terminated"):
            body = _read_at_most(environ["wsgi.input"], limit + 1)
            if len(body) > limit:
                body = b""
                environ["CONTENT_LENGTH"] = str(limit + 1)  # Werkzeug answers 413
            else:
                environ["CONTENT_LENGTH"] = str(len(body))
            environ["wsgi.input"] = io.BytesIO(body)
            environ.pop("HTTP_TRANSFER_ENCODING", None)
            environ.pop("wsgi.input_terminated", None)
        return self.wsgi_app(environ, start_response)


def _read_at_most(stream: Any, size: int) -> bytes:
    parts: list[bytes] = []
    left = size
    while left > 0:
        part = stream.read(min(_READ, left))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def init_app(app: Flask) -> None:
    """Wrap ``app.wsgi_app`` (see the module note)."""
    app.wsgi_app = ChunkedBodyLimit(app.wsgi_app, app)  # type: ignore[method-assign]
