"""HTML side: blueprints, error pages, security headers, template helpers."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, Response, flash, make_response, redirect, render_template, request, url_for
from flask_login import current_user
from flask_wtf.csrf import CSRFError
from sqlalchemy.exc import DBAPIError, OperationalError

from ..errors import ServiceError, Unavailable, ValidationFailed
from ..extensions import db, login_manager
from ..models.base import MAX_ID
from .htmx import is_htmx

log = logging.getLogger("reviewapp.web")


def init_app(app: Flask) -> None:
    """Register the HTML blueprints, error handlers, headers and template helpers."""
    from . import auth, cases, dashboard, exports, feedback, queue, runs, triage

    app.url_map.converters["agent_id"] = runs.AgentIdConverter
    app.register_blueprint(auth.bp)
    app.register_blueprint(runs.bp)
    app.register_blueprint(feedback.bp)
    app.register_blueprint(queue.bp)
    for module in (triage, cases, exports, dashboard):
        app.register_blueprint(module.bp)

    login_manager.login_view = "auth.login"
    login_manager.login_message = "Please log in to continue."
    login_manager.login_message_category = "info"
    login_manager.session_protection = app.config.get("SESSION_PROTECTION", "strong")
    login_manager.unauthorized_handler(_unauthorized)

    app.register_error_handler(ServiceError, _service_error)
    app.register_error_handler(CSRFError, _csrf_error)
    app.register_error_handler(OperationalError, _storage_error)
    app.register_error_handler(DBAPIError, _storage_error)
    app.register_error_handler(404, _not_found)
    app.register_error_handler(405, _method_not_allowed)
    app.register_error_handler(413, _too_large)
    app.register_error_handler(429, _too_many)
    app.register_error_handler(500, _internal_error)
    app.before_request(_refuse_unstorable_values)
    app.before_request(_declare_write_intent)
    app.teardown_request(_clear_write_intent)
    app.after_request(_security_headers)
    app.context_processor(_template_context)
    app.add_template_filter(_local_time, "local_time")
    app.add_template_filter(_age, "age")
    from .filters import register as register_filters

    register_filters(app)
    from . import body_limit

    body_limit.init_app(app)


def _refuse_unstorable_values() -> None:
    """400 naming the field, before any view runs, for request values no column can take
    (SPEC 9, 10): an integer path id above ``MAX_ID`` (it would overflow the database's
    integer, a 500 on SQLite and PostgreSQL alike) and a NUL character in a path
    segment, query argument or form field (PostgreSQL text cannot hold it). JSON bodies
    get the same checks in ``api.schemas.read_json``."""
    for name, value in (request.view_args or {}).items():
        if isinstance(value, int) and value > MAX_ID:
            raise ValidationFailed(name, f"out of range (at most {MAX_ID})")
        if isinstance(value, str) and "\x00" in value:
            raise ValidationFailed(name, "contains a NUL character, which cannot be stored")
    sources = [request.args] if request.method == "GET" or request.is_json else [request.args, request.form]
    for source in sources:
        for name, value in source.items(multi=True):
            if "\x00" in name or "\x00" in value:
                raise ValidationFailed(name.replace("\x00", "")[:80] or "query",
                                       "contains a NUL character, which cannot be stored")


def _wants_json() -> bool:
    return request.path.startswith("/api/") or request.path == "/api"


def _error_response(status: int, code: str, message: str, details: Any = None) -> Response:
    """One rendering of an error: JSON under /api, a message fragment for htmx, a page else."""
    if _wants_json():
        body: dict[str, Any] = {"code": code, "message": message}
        if details is not None:
            body["details"] = details
        return make_response({"error": body}, status)
    if is_htmx():
        response = make_response(
            render_template("errors/_message.html", status=status, code=code, message=message),
            status,
        )
        # Errors land in the page's message region, never inside the fragment.
        response.headers["HX-Retarget"] = "#messages"
        response.headers["HX-Reswap"] = "innerHTML"
        return response
    return make_response(
        render_template("errors/error.html", status=status, code=code, message=message), status
    )


def _service_error(error: ServiceError) -> Response:
    db.session.rollback()
    return _error_response(error.status, error.code, error.message, error.details)


def _storage_error(error: Exception) -> Response:
    from flask import g
    from sqlalchemy.exc import SQLAlchemyError

    try:
        db.session.rollback()
    except SQLAlchemyError:  # the connection itself is gone; the pool replaces it
        pass
    # The error page must not need the database it reports as unavailable: render it for
    # an anonymous visitor, so neither the user loader nor the navigation queries run
    # (either would fail again and turn the 503 into a 500).
    # (Undone at teardown: an app context that outlives the request must not keep it.)
    g._login_user = login_manager.anonymous_user()
    g.storage_error_anonymous = True
    log.error("storage error on %s %s: %s", request.method, request.path, type(error).__name__,
              exc_info=error)
    from ..db_setup import DISK_FULL_MESSAGE, is_disk_full

    # Still 503 SYSTEM_UNAVAILABLE (SPEC 6.1), but saying why when the disk is full.
    return _service_error(Unavailable(DISK_FULL_MESSAGE) if is_disk_full(error) else Unavailable())


def _csrf_error(error: CSRFError) -> Response:
    if request.endpoint != "auth.login" and not (current_user and current_user.is_authenticated):
        # The session ended (logout elsewhere, expiry): its CSRF token went with it.
        # Asking to log in again says what happened; "form expired" would not.
        return _unauthorized()
    return _error_response(
        400, "CSRF_INVALID",
        "Your form expired or was sent from another page (CSRF check failed). "
        "Reload the page and try again.",
    )


def _not_found(error: Exception) -> Response:
    return _error_response(404, "NOT_FOUND", "There is nothing at this address.")


def _method_not_allowed(error: Exception) -> Response:
    return _error_response(405, "METHOD_NOT_ALLOWED", "This address does not accept that method.")


def _too_large(error: Exception) -> Response:
    return _error_response(413, "PAYLOAD_TOO_LARGE", "The request body is larger than allowed.")


def _too_many(error: Exception) -> Response:
    return _error_response(429, "RATE_LIMITED", "Too many attempts. Wait a minute and try again.")


def _internal_error(error: Exception) -> Response:
    db.session.rollback()
    return _error_response(500, "SYSTEM_ERROR", "Something went wrong on our side.")


def _page_path() -> str:
    """Where to come back to after login: the page the user is on. For an htmx request
    that is the page (``HX-Current-URL``), for a form post the page it was sent from
    (``Referer``), not the URL the request went to, which may not accept GET. Only a
    same-host path is taken; otherwise the home page."""
    current = request.headers.get("HX-Current-URL") if is_htmx() else None
    if request.method not in _SAFE_METHODS:
        current = current or request.headers.get("Referer")
    if current:
        parts = urlsplit(current)
        if parts.netloc in ("", request.host) and parts.path.startswith("/"):
            return parts.path + (f"?{parts.query}" if parts.query else "")
    if is_htmx() or request.method not in _SAFE_METHODS:
        return "/"
    return request.full_path.rstrip("?")


def _unauthorized() -> Response:
    if _wants_json():
        return make_response(
            {"error": {"code": "AUTH_UNAUTHENTICATED", "message": "log in or send a token"}}, 401
        )
    login_url = url_for("auth.login", next=_page_path())
    if request.method not in _SAFE_METHODS:
        # Say that the change was lost, not just "please log in" (an expired session).
        flash("You were logged out, so your last change was not saved. "
              "Log in and make it again.", "error")
    if is_htmx():
        # Redirect the whole window, never swap a login form into a fragment (SPEC 10).
        response = make_response("", 401)
        response.headers["HX-Redirect"] = login_url
        return response
    if request.method in _SAFE_METHODS:
        flash(login_manager.login_message, "info")
    return redirect(login_url, 303)


_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _declare_write_intent() -> None:
    # A state-changing request takes the SQLite write lock at its first statement.
    from flask import g

    from ..db_setup import set_write_intent

    if request.method not in _SAFE_METHODS:
        g.write_intent_token = set_write_intent(True)


def _clear_write_intent(error: BaseException | None) -> None:
    from flask import g

    from ..db_setup import reset_write_intent

    if g.pop("storage_error_anonymous", False):
        g.pop("_login_user", None)
    token = g.pop("write_intent_token", None)
    if token is not None:
        try:
            reset_write_intent(token)
        except ValueError:  # created in another context (streamed responses)
            pass


def _security_headers(response: Response) -> Response:
    """Every response: ``nosniff``, no framing (``X-Frame-Options`` and CSP
    ``frame-ancestors``), ``Referrer-Policy``. HTML gets the page CSP
    (``CONTENT_SECURITY_POLICY``); anything else (JSON, CSV, static files) a CSP that
    allows nothing, so a response opened as a document can run nothing."""
    from flask import current_app

    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    if response.mimetype == "text/html":
        response.headers.setdefault(
            "Content-Security-Policy", current_app.config["CONTENT_SECURITY_POLICY"]
        )
    else:
        response.headers.setdefault(
            "Content-Security-Policy", current_app.config["CONTENT_SECURITY_POLICY_NON_HTML"]
        )
    # Per-caller data never stays in a shared or back-button cache: every API answer
    # (without loading the user: that may need the database, which may be the error), and
    # a logged-in user's pages.
    if _wants_json() or response.mimetype == "text/html" and current_user and current_user.is_authenticated:
        response.headers.setdefault("Cache-Control", "no-store")
    return response


def _nav_role() -> str | None:
    """The logged-in user's highest role (its value), read once per request."""
    from flask import g

    from ..services.access import highest_role
    from .auth import current_actor

    if "nav_role" not in g:
        role = None
        if current_user and current_user.is_authenticated:
            role = highest_role(db.session, current_actor())
        g.nav_role = role.value if role else None
    return g.nav_role


def _template_context() -> dict[str, Any]:
    # Lazy: the role query runs only when a template uses the navigation (full pages),
    # never for the htmx fragments that do not, and at most once per request.
    from werkzeug.local import LocalProxy

    from .nav import nav_items

    return {"nav_role": LocalProxy(_nav_role),
            "nav_items": LocalProxy(lambda: nav_items(_nav_role()))}


def _local_time(value: datetime | None) -> str:
    """An ISO UTC timestamp for a <time> element; the browser shows it in local time."""
    if value is None:
        return ""
    return value.astimezone(UTC).isoformat(timespec="seconds")


def _age(value: datetime | None) -> str:
    """A short age like "5 min ago" relative to now (UTC)."""
    if value is None:
        return "—"
    seconds = (datetime.now(UTC) - value).total_seconds()
    if seconds < 60:
        return "just now"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"
