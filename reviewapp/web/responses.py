"""Responses shared by the lead / admin pages: after a POST, and on a stale write."""

from __future__ import annotations

from typing import Any

from flask import Response, flash, make_response, redirect, render_template

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
