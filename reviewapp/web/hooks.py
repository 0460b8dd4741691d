"""Per-request hooks of the app: refuse values no column can store, declare the SQLite
write intent of a state-changing request, security headers on every response, and the
navigation's lazy template context."""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, current_app, g, request
from flask_login import current_user
from werkzeug.local import LocalProxy

from ..db_setup import reset_write_intent, set_write_intent
from ..errors import ValidationFailed
from ..extensions import db
from ..models.base import MAX_ID
from ..services.access import highest_role
from .auth import current_actor
from .errors import SAFE_METHODS, wants_json
from .nav import nav_items, nav_label


def register(app: Flask) -> None:
    """Install the request hooks and the template context processor on ``app``."""
    app.before_request(_refuse_unstorable_values)
    app.before_request(_declare_write_intent)
    app.before_request(_password_change_first)
    app.teardown_request(_clear_write_intent)
    app.after_request(_security_headers)
    app.context_processor(_template_context)


def _refuse_unstorable_values() -> None:
    """400 naming the field, before any view runs, for request values no column can take
    (SPEC 9, 10): an integer path id above ``MAX_ID`` (it would overflow the database's
    integer, a 500 on SQLite and PostgreSQL alike) and a NUL character in a path
    segment, query argument or form field (PostgreSQL text cannot hold it). JSON bodies
    get the same checks in ``api.schemas.read_json``."""
    req = request._get_current_object()  # one context lookup, not one per use
    for name, value in (req.view_args or {}).items():
        if isinstance(value, int) and value > MAX_ID:
            raise ValidationFailed(name, f"out of range (at most {MAX_ID})")
        if isinstance(value, str) and "\x00" in value:
            raise ValidationFailed(name, "contains a NUL character, which cannot be stored")
    sources = [req.args] if req.method == "GET" or req.is_json else [req.args, req.form]
    for source in sources:
        for name, value in source.items(multi=True):
            if "\x00" in name or "\x00" in value:
                raise ValidationFailed(name.replace("\x00", "")[:80] or "query",
                                       "contains a NUL character, which cannot be stored")


# What a user who must change their password may still open.
_BEFORE_PASSWORD_CHANGE = frozenset({"account.index", "account.password", "auth.logout",
                                     "auth.login", "static"})


def _password_change_first() -> None:
    """A user whose password an admin chose (a new account, a reset) sees only their
    account page until they have changed it (SPEC 8). The rule is the services'
    (``admin.actor_for``, which every caller's actor goes through, the JSON API's too);
    this hook only applies it before any page that would not resolve an actor, and
    ``errors.py`` answers its ``PasswordChangeRequired`` with the redirect there."""
    if wants_json() or request.endpoint in _BEFORE_PASSWORD_CHANGE:
        return
    if current_user and current_user.is_authenticated:
        current_actor()


def _declare_write_intent() -> None:
    # A state-changing request takes the SQLite write lock at its first statement.
    if request.method not in SAFE_METHODS:
        g.write_intent_token = set_write_intent(True)


def _clear_write_intent(error: BaseException | None) -> None:
    if g.pop("storage_error_anonymous", False):
        g.pop("_login_user", None)
    token = g.pop("write_intent_token", None)
    if token is not None:
        try:
            reset_write_intent(token)
        except ValueError:  # created in another context (streamed responses)
            pass


_ALWAYS = (("X-Content-Type-Options", "nosniff"), ("X-Frame-Options", "DENY"),
           ("Referrer-Policy", "same-origin"))


def _security_headers(response: Response) -> Response:
    """Every response: ``nosniff``, no framing (``X-Frame-Options`` and CSP
    ``frame-ancestors``), ``Referrer-Policy``. HTML gets the page CSP
    (``CONTENT_SECURITY_POLICY``); anything else (JSON, CSV, static files) a CSP that
    allows nothing, so a response opened as a document can run nothing. A header the
    view set itself is kept. (One pass over the headers instead of a search per header.)"""
    headers = response.headers
    present = {key.lower() for key, _ in headers.items()}
    for key, value in _ALWAYS:
        if key.lower() not in present:
            headers.add(key, value)
    html = response.mimetype == "text/html"
    if "content-security-policy" not in present:
        headers.add("Content-Security-Policy", current_app.config[
            "CONTENT_SECURITY_POLICY" if html else "CONTENT_SECURITY_POLICY_NON_HTML"])
    # Per-caller data never stays in a shared or back-button cache: every API answer
    # (without loading the user: that may need the database, which may be the error), and
    # a logged-in user's pages.
    if "cache-control" not in present and (
            wants_json() or html and current_user and current_user.is_authenticated):
        headers.add("Cache-Control", "no-store")
    return response


def _nav_role() -> str | None:
    """The logged-in user's highest role (its value), read once per request: with the
    user on a GET (``admin.load_user(with_role=True)``), else by its own statement."""
    if "nav_role" not in g:
        role = None
        user = current_user._get_current_object()
        if user and user.is_authenticated:
            actor = current_actor(password_change=True)
            role = user.highest_role if getattr(user, "role_read", False) \
                else highest_role(db.session, actor)
        g.nav_role = role.value if role else None
    return g.nav_role


def _template_context() -> dict[str, Any]:
    # Lazy: the role query runs only when a template uses the navigation (full pages),
    # never for the htmx fragments that do not, and at most once per request.
    return {"nav_role": LocalProxy(_nav_role),
            "nav_items": LocalProxy(lambda: nav_items(_nav_role())), "nav_label": nav_label}
