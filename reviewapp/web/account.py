"""The user's own account (SPEC 8): memberships and a password change (the current
password required). A user whose password an admin chose is sent here from every page
until they have changed it (``web/hooks.py``)."""

from __future__ import annotations

from flask import Blueprint, Response, make_response, render_template, url_for
from flask_login import current_user, login_required, login_user

from ..errors import ValidationFailed
from ..extensions import db
from ..services import admin
from .auth import current_actor
from .forms import PasswordChangeForm, show_service_error
from .responses import see_other

bp = Blueprint("account", __name__, url_prefix="/account")


def _page(form: PasswordChangeForm, status: int = 200) -> Response:
    return make_response(render_template(
        "account/index.html", form=form,
        memberships=admin.my_memberships(db.session, current_actor(password_change=True)),
        must_change=current_user.must_change_password), status)


@bp.get("/")
@login_required
def index() -> Response:
    """Memberships and the password form."""
    return _page(PasswordChangeForm())


@bp.post("/password")
@login_required
def password() -> Response:
    """Change one's own password; other sessions end, this one continues."""
    form = PasswordChangeForm()
    if (form.new_password.data or "") != (form.confirm.data or ""):
        form.confirm.errors = [*form.confirm.errors, "The two new passwords differ."]
        return _page(form, 400)
    try:
        user = admin.change_own_password(db.session, current_actor(password_change=True),
                                         form.current_password.data or "",
                                         form.new_password.data or "")
    except ValidationFailed as refused:
        db.session.rollback()
        if not show_service_error(form, refused):  # beside the field its label names
            raise
        return _page(form, 400)
    login_user(user)  # the token rotated: this browser stays logged in with the new one
    return see_other("Password changed.", url_for("account.index"))
