"""The HTML side's error answers (STYLE 7.6): every ``ServiceError`` and HTTP error is
rendered once, here — JSON under ``/api``, a message fragment for htmx (retargeted to
the page's message region), an error page otherwise — and an unauthenticated request is
sent to the login page (the whole window for htmx)."""

from __future__ import annotations

import logging
import math
import time
from typing import Any
from urllib.parse import urlsplit

from flask import (
    Flask,
    Response,
    flash,
    g,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user
from flask_wtf.csrf import CSRFError
from sqlalchemy.exc import DBAPIError, OperationalError, SQLAlchemyError

from ..db_setup import DISK_FULL_MESSAGE, is_disk_full
from ..errors import PasswordChangeRequired, ServiceError, Unavailable
from ..extensions import db, limiter, login_manager
from .htmx import current_url, is_htmx, redirect_window, retarget

log = logging.getLogger("reviewapp.web")

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def register(app: Flask) -> None:
    """Install the error handlers and the login manager's unauthorized handler on ``app``."""
    app.register_error_handler(ServiceError, _service_error)
    app.register_error_handler(CSRFError, _csrf_error)
    app.register_error_handler(OperationalError, _storage_error)
    app.register_error_handler(DBAPIError, _storage_error)
    app.register_error_handler(404, _not_found)
    app.register_error_handler(405, _method_not_allowed)
    app.register_error_handler(413, _too_large)
    app.register_error_handler(429, _too_many)
    app.register_error_handler(500, _internal_error)
    login_manager.unauthorized_handler(_unauthorized)


def wants_json() -> bool:
    # /v1/traces: the OTLP/HTTP path (reviewapp/api/otel.py), a machine route outside /api.
    path = request.path
    return path.startswith("/api/") or path in ("/api", "/v1/traces")


def _error_response(status: int, code: str, message: str, details: Any = None, **page: Any) -> Response:
    """One rendering of an error: JSON under /api, a message fragment for htmx, a page else
    (``page``: more for the page only: ``back_url`` / ``back_label``, its way on, and
    ``hint``, the line under the message)."""
    if wants_json():
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
        return retarget(response, "#messages", "innerHTML")
    return make_response(
        render_template("errors/error.html", status=status, code=code, message=message, **page), status
    )


def _service_error(error: ServiceError) -> Response:
    db.session.rollback()
    if isinstance(error, PasswordChangeRequired) and not wants_json():
        return _to_account_page()
    return _error_response(error.status, error.code, error.message, error.details)


def _to_account_page() -> Response:
    """A page asked for by a user who must change their password first: to their account
    page, which has the form and says why (htmx: the whole window)."""
    target = url_for("account.index")
    if is_htmx():
        return redirect_window(make_response("", 204), target)
    return redirect(target, 303)


def _storage_error(error: Exception) -> Response:
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
    """429. On the login page (the one limited view): when the limiter lets this username
    in again, and a link back to the login form (keeping ``next``), not a dead end."""
    if request.endpoint != "auth.login" or wants_json():
        return _error_response(429, "RATE_LIMITED", "Too many attempts. Wait a minute and try again.")
    wait = _seconds_until_reset()
    when = f"Try again in {_duration(wait)}." if wait else "Wait a while and try again."
    next_path = request.args.get("next")
    return _error_response(
        429, "RATE_LIMITED", f"Too many failed logins for this username from your address. {when}",
        back_url=url_for("auth.login", **({"next": next_path} if next_path else {})),
        back_label="Back to the login form", hint="Forgotten your password? An admin can reset it.")


def _seconds_until_reset() -> int | None:
    """Seconds until the breached limit's window ends (what ``Retry-After`` says), or
    ``None`` when the limiter cannot tell (no limit on this request, storage down)."""
    try:
        current = limiter.current_limit
        # As Flask-Limiter computes Retry-After (whole seconds, rounded down), so the page
        # and the header agree (its reset time is already rounded up to the next second).
        return max(1, int(current.reset_at - time.time())) if current is not None else None
    except Exception:  # noqa: BLE001 - the limiter's storage; the page still answers
        log.warning("rate-limit window unavailable", exc_info=True)
        return None


def _duration(seconds: int) -> str:
    """``seconds`` as people say it: "45 seconds" under 2 minutes, "60 minutes" under 2
    hours, else hours; rounded up, so the wait is never shorter than said."""
    if seconds < 120:
        n, unit = seconds, "second"
    elif seconds < 7200:
        n, unit = math.ceil(seconds / 60), "minute"
    else:
        n, unit = math.ceil(seconds / 3600), "hour"
    return f"{n} {unit}{'' if n == 1 else 's'}"


def _internal_error(error: Exception) -> Response:
    db.session.rollback()
    return _error_response(500, "SYSTEM_ERROR", "Something went wrong on our side.")


def _page_path() -> str:
    """Where to come back to after login: the page the user is on. For an htmx request
    that is the page (``HX-Current-URL``), for a form post the page it was sent from
    (``Referer``), not the URL the request went to, which may not accept GET. Only a
    same-host path is taken; otherwise the home page."""
    current = current_url() if is_htmx() else None
    if request.method not in SAFE_METHODS:
        current = current or request.headers.get("Referer")
    if current:
        parts = urlsplit(current)
        if parts.netloc in ("", request.host) and parts.path.startswith("/"):
            return parts.path + (f"?{parts.query}" if parts.query else "")
    if is_htmx() or request.method not in SAFE_METHODS:
        return "/"
    return request.full_path.rstrip("?")


def _unauthorized() -> Response:
    """Not logged in: 401 JSON under /api; else to the login page, back to this page after."""
    if wants_json():
        return make_response(
            {"error": {"code": "AUTH_UNAUTHENTICATED", "message": "log in or send a token"}}, 401
        )
    login_url = url_for("auth.login", next=_page_path())
    if request.method not in SAFE_METHODS:
        # Say that the change was lost, not just "please log in" (an expired session).
        flash("You were logged out, so your last change was not saved. "
              "Log in and make it again.", "error")
    if is_htmx():
        # Redirect the whole window, never swap a login form into a fragment (SPEC 10).
        return redirect_window(make_response("", 401), login_url)
    if request.method in SAFE_METHODS:
        flash(login_manager.login_message, "info")
    return redirect(login_url, 303)
