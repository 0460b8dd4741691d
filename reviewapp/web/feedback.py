"""Thumbs endpoints: rate / re-rate / take back a rating of one target (SPEC 6.1, 8).

htmx gets the control's own fragment back (with a "saved" state, or the errors next to
their fields and status 422) plus ``HX-Trigger: feedback-saved`` so the queue progress
and the verdict badge refresh; a plain browser gets a flash and a 303 back to the run.
"""

from __future__ import annotations

from flask import Blueprint, Response, flash, redirect, url_for
from flask_login import login_required

from ..errors import ValidationFailed
from ..extensions import db
from ..services import review
from .auth import current_actor, safe_next
from .forms import FeedbackForm
from .htmx import hx_trigger, is_htmx, render_macro

bp = Blueprint("feedback", __name__)

SAVED_EVENT = "feedback-saved"


def _back(form: FeedbackForm, run_pk: int) -> str:
    target = form.next.data or url_for("runs.detail", run_pk=run_pk)
    return safe_next(target)


def _render(state, form: FeedbackForm, status: int = 200, saved: bool = False,
            errors: dict[str, str] | None = None) -> Response:
    return render_macro("feedback/_thumbs.html", "thumbs", status=status, state=state,
                        next_url=form.next.data or "", saved=saved, form=form,
                        errors=errors or {}, compact=form.compact.data == "1")


def _not_saved(form: FeedbackForm, errors: dict[str, str]) -> Response:
    """Plain browser: say what was wrong and go back to the page the form was on."""
    field, message = next(iter(errors.items()))
    flash(f"Your rating was not saved: {field.replace('_', ' ')}: {message}", "error")
    return redirect(safe_next(form.next.data or None), 303)


@bp.post("/feedback")
@login_required
def rate() -> Response:
    """Create or update the current user's rating of one target."""
    form = FeedbackForm()
    actor = current_actor()
    if not form.validate():
        errors = {name: " ".join(msgs) for name, msgs in form.errors.items()}
        if not is_htmx():
            return _not_saved(form, errors)
        if form.target_type.data and isinstance(form.target_id.data, int):
            state = review.target_state(db.session, actor, form.target_type.data,
                                        form.target_id.data, form.subject_id.data)
            return _render(state, form, status=422, errors=errors)
        raise ValidationFailed(next(iter(errors)), next(iter(errors.values())))
    try:
        state = review.rate_target(
            db.session, actor, form.target_type.data, form.target_id.data,
            form.subject_id.data or None, form.rating.data, reason=form.reason.data or None,
            comment=form.comment.data, correction=form.correction.data,
            switch=form.switch.data == "1")
    except ValidationFailed as error:
        if error.field not in ("reason", "comment", "correction", "rating"):
            raise
        db.session.rollback()
        if not is_htmx():
            return _not_saved(form, {error.field: error.reason})
        state = review.target_state(db.session, actor, form.target_type.data,
                                    form.target_id.data, form.subject_id.data)
        return _render(state, form, status=422,
                       errors={error.field: error.reason})
    if not is_htmx():
        flash("Your rating is saved.", "success")
        return redirect(_back(form, state.run_pk), 303)
    return hx_trigger(_render(state, form, saved=True), SAVED_EVENT)


@bp.post("/feedback/<int:feedback_id>/delete")
@login_required
def delete(feedback_id: int) -> Response:
    """Take back one of the current user's ratings."""
    form = FeedbackForm()
    state = review.clear_rating(db.session, current_actor(), feedback_id)
    if not is_htmx():
        flash("Your rating is removed.", "success")
        return redirect(_back(form, state.run_pk), 303)
    return hx_trigger(_render(state, form, saved=True), SAVED_EVENT)
