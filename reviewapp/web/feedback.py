"""Thumbs endpoints: rate / re-rate / take back a rating of one target (SPEC 6.1, 8).

htmx gets the control's own fragment back (with a "saved" state, or the errors next to
their fields and status 422) plus ``HX-Trigger: feedback-saved`` so the queue progress
and the verdict badge refresh; a plain browser gets a flash and a 303 back to the run.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from flask import Blueprint, Response, flash, redirect, url_for
from flask_login import login_required

from ..errors import Conflict, ValidationFailed
from ..extensions import db
from ..services import review
from .auth import current_actor, safe_next
from .filters import dom_id
from .forms import FeedbackForm
from .htmx import hx_trigger, is_htmx, render_macro

bp = Blueprint("feedback", __name__)

SAVED_EVENT = "feedback-saved"


def thumbs_id(target_type: str, target_id: int, subject_key: str | None) -> str:
    """The DOM id of one thumbs control (``feedback/_thumbs.html`` builds the same)."""
    return f"fb-{target_type}-{target_id}-{dom_id(subject_key) if subject_key else '0'}"


def _at_control(target: str, control: str | None, key: str) -> str:
    """``target`` scrolled to the control (``#<control>``) with ``<key>=<control>`` in its
    query (``rated``: the control shows "saved" and opens "Why?" after a thumbs-down, as
    the htmx answer does; ``refused``: the control shows the error), issue 17."""
    if control is None:
        return target
    # A fragment the page named (a timeline row) gives way to the control inside it.
    parts = urlsplit(target)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if k not in ("rated", "refused")]
    query.append((key, control))
    return urlunsplit(("", "", parts.path, urlencode(query), control))


def _back(form: FeedbackForm, run_pk: int, control: str | None = None) -> str:
    """Where a plain browser goes after a rating: the page the form was on (the run page
    when none or a foreign one was named), at the rated control."""
    wanted = form.next.data or url_for("runs.detail", run_pk=run_pk)
    target = safe_next(wanted)
    return _at_control(target, control if target == wanted else None, "rated")


def _render(state, form: FeedbackForm, status: int = 200, saved: bool = False,
            errors: dict[str, str] | None = None) -> Response:
    return render_macro("feedback/_thumbs.html", "thumbs", status=status, state=state,
                        next_url=form.next.data or "", saved=saved, form=form,
                        errors=errors or {}, compact=form.compact.data == "1")


def _not_saved(form: FeedbackForm, errors: dict[str, str]) -> Response:
    """Plain browser: say what was wrong and go back to the page the form was on, at the
    control, which shows the message too (``refused``)."""
    field, message = next(iter(errors.items()))
    flash(f"Your rating was not saved: {field.replace('_', ' ')}: {message}", "error")
    wanted = form.next.data or None
    target = safe_next(wanted)
    control = None
    if target == wanted and form.target_type.data and isinstance(form.target_id.data, int):
        control = thumbs_id(form.target_type.data, form.target_id.data, form.subject_id.data)
    return redirect(_at_control(target, control, "refused"), 303)


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
            switch=form.switch.data == "1", based_on=form.based_on.data or None)
    except Conflict as stale:  # another tab saved a newer rating: show it, with the message
        db.session.rollback()
        if not is_htmx():
            return _not_saved(form, {"rating": stale.message})
        state = review.target_state(db.session, actor, form.target_type.data,
                                    form.target_id.data, form.subject_id.data)
        return _render(state, form, status=409, errors={"stale": stale.message})
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
        control = thumbs_id(state.target_type, state.target_id, state.subject_key)
        return redirect(_back(form, state.run_pk, control), 303)
    return hx_trigger(_render(state, form, saved=True), SAVED_EVENT)


@bp.post("/feedback/<int:feedback_id>/delete")
@login_required
def delete(feedback_id: int) -> Response:
    """Take back one of the current user's ratings."""
    form = FeedbackForm()
    state = review.clear_rating(db.session, current_actor(), feedback_id)
    if not is_htmx():
        flash("Your rating is removed.", "success")
        control = thumbs_id(state.target_type, state.target_id, state.subject_key)
        return redirect(_back(form, state.run_pk, control), 303)
    return hx_trigger(_render(state, form, saved=True), SAVED_EVENT)
