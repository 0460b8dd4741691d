"""Who is calling the JSON API: an ingest token (``Authorization: Bearer``) or a logged-in
browser session (which must then send the CSRF token header on state changes)."""

from __future__ import annotations

from flask import current_app, request
from flask_login import current_user
from wtforms.validators import ValidationError

from ..actors import Actor
from ..db_setup import read_intent
from ..errors import CsrfInvalid, Unauthenticated
from ..extensions import db
from ..services import admin
from ..sessions import validate_csrf_token

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _bearer() -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


def token_actor() -> Actor:
    """The ingest-token actor. Raises ``Unauthenticated`` (401) without a valid token."""
    secret = _bearer()
    if secret is None:
        raise Unauthenticated("send 'Authorization: Bearer <ingest token>'")
    # A read that ends its own transaction: on SQLite it must not queue for the write
    # lock, which the ingest call then takes only for its own short write.
    with read_intent():
        return admin.authenticate_token(db.session, secret)


def session_actor() -> Actor:
    """The logged-in user's actor. State-changing requests must carry the CSRF token in
    ``X-CSRFToken`` (the /api blueprint is CSRF-exempt only for token callers).
    Raises ``Unauthenticated`` (401) when not logged in, ``CsrfInvalid`` (400) without
    a valid CSRF header, ``PasswordChangeRequired`` (403) while the user must change the
    password an admin set (``admin.actor_for``)."""
    # The proxies resolved once (each use of one is a context lookup; the user's each
    # attribute read through ``current_user`` was one, issue 18 request stack).
    user = current_user._get_current_object()
    if not user.is_authenticated:
        raise Unauthenticated("log in first")
    req = request._get_current_object()
    if req.method not in _SAFE_METHODS:
        if current_app.config.get("WTF_CSRF_ENABLED", True):
            try:
                validate_csrf_token(req.headers.get("X-CSRFToken", ""))
            except ValidationError:
                raise CsrfInvalid("missing or invalid X-CSRFToken header") from None
    return admin.actor_for(user)


def any_actor() -> Actor:
    """A token actor when a bearer token is sent, else the logged-in user's actor."""
    if _bearer() is not None:
        return token_actor()
    return session_actor()
