"""Flask's signed-cookie session with its signing serializer built once per key set.

Flask's ``SecureCookieSessionInterface`` builds a new ``URLSafeTimedSerializer`` (and
its signer) twice per request, to read the cookie and to write it. The keys only change
when the configuration does, so the serializer is kept per (``SECRET_KEY``,
``SECRET_KEY_FALLBACKS``) pair: same keys, salt, digest and format as Flask's.
"""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.sessions import SecureCookieSessionInterface
from itsdangerous import URLSafeTimedSerializer


class CachedSerializerSessionInterface(SecureCookieSessionInterface):
    """``SecureCookieSessionInterface`` reusing its serializer while the keys stay the same."""

    def __init__(self) -> None:
        self._cached: tuple[Any, URLSafeTimedSerializer | None] | None = None

    def get_signing_serializer(self, app: Flask) -> URLSafeTimedSerializer | None:
        fallbacks = app.config["SECRET_KEY_FALLBACKS"]
        key = (app.secret_key, tuple(fallbacks) if fallbacks else ())
        cached = self._cached
        if cached is not None and cached[0] == key:
            return cached[1]
        serializer = super().get_signing_serializer(app)
        self._cached = (key, serializer)
        return serializer
