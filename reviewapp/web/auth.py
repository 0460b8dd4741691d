"""Login, logout and the current actor.

Login attempts are rate-limited by Flask-Limiter (``RATELIMIT_STORAGE_URI``: in-memory,
per process, by default; ``redis://...`` shares the counts between processes and hosts).
Only failed attempts (401) count: ``LOGIN_RATE_LIMIT`` per (submitted username, client
address), and a looser ``LOGIN_RATE_LIMIT_PER_IP`` per client address against password
spraying. A locked pair gets 429 until its window passes, even with the right password.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import (
    Blueprint,
    Response,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_limiter.util import get_remote_address
from flask_login import current_user, login_required, login_user, logout_user

from ..actors import Actor
from ..extensions import db, limiter, login_manager
from ..services import admin
from .forms import LoginForm

bp = Blueprint("auth", __name__)


@login_manager.user_loader
def _load_user(cookie_id: str):  # noqa: ANN202 - Flask-Login callback
    # A GET may render a page with the navigation: its role read with the user (one
    # statement); a state change reads it, if it renders a page, after its writes.
    return admin.load_user(db.session, cookie_id, with_role=request.method in _PAGE_METHODS)


_PAGE_METHODS = frozenset(("GET", "HEAD"))


def current_actor(*, password_change: bool = False) -> Actor:
    """The ``Actor`` for the logged-in user (views call services with it). Raises
    ``PasswordChangeRequired`` while the user must change their password, unless the view
    is one of those that let them (``password_change``; ``admin.actor_for``)."""
    # The user itself, not the proxy: each attribute read through it is a context lookup.
    return admin.actor_for(current_user._get_current_object(), password_change=password_change)


def safe_next(target: str | None) -> str:
    """``target`` if it is a path on this site, else the runs list (no open redirect)."""
    if not target:
        return url_for("runs.index")
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//") \
            or "\\" in target:
        return url_for("runs.index")
    return target


def _login_limit() -> str:
    return current_app.config["LOGIN_RATE_LIMIT"]


def _login_limit_per_ip() -> str:
    return current_app.config["LOGIN_RATE_LIMIT_PER_IP"]


def _username_and_ip() -> str:
    """Rate-limit key of one login attempt: the submitted username as login matches it
    (``admin.fold_username``: 'Alice' and 'alice' are one account, so one limit; at most
    80 characters as the form allows) and the client address. Failures for one username
    from one address lock only that pair, so nobody can lock a colleague out from
    elsewhere, nor everyone out from one address."""
    username = admin.fold_username(request.form.get("username"))[:80]
    return f"{username}|{get_remote_address()}"


def _failed(response: Response) -> bool:
    """Only wrong credentials (401) count against the login limits."""
    return response.status_code == 401


@bp.route("/login", methods=["GET", "POST"])
@limiter.limit(_login_limit, methods=["POST"], key_func=_username_and_ip, deduct_when=_failed,
               scope="login-user-ip")
@limiter.limit(_login_limit_per_ip, methods=["POST"], key_func=get_remote_address,
               deduct_when=_failed, scope="login-ip")
def login() -> Response | str:
    """Log in with username and password."""
    if current_user.is_authenticated:
        return redirect(safe_next(request.args.get("next")))
    form = LoginForm()
    if form.validate_on_submit():
        user = admin.authenticate(db.session, form.username.data, form.password.data)
        if user is not None:
            session.clear()  # rotate: nothing from the anonymous session survives login
            login_user(user)
            return redirect(safe_next(request.args.get("next")), 303)
        flash("Wrong username or password.", "error")
        return render_template("auth/login.html", form=form), 401
    status = 422 if form.is_submitted() else 200
    return render_template("auth/login.html", form=form), status


@bp.route("/logout", methods=["POST"])
@login_required
def logout() -> Response:
    """Log out; the session token rotates so copies of the cookie stop working too."""
    admin.end_all_sessions(db.session, current_actor(password_change=True), current_user.id)
    logout_user()
    session.clear()
    flash("You are logged out.", "info")
    return redirect(url_for("auth.login"), 303)
