"""The review queue: "my next item" across the review queues I may review (issue 16),
or — without such a queue, or for a filtered list — jump to the next run I have not
rated, and my progress (SPEC 8)."""

from __future__ import annotations

from flask import Blueprint, Response, redirect, render_template, request, url_for
from flask_login import login_required

from ..extensions import db
from ..services import review_queues, unrated_runs
from ..services.runs import RunFilters
from .auth import current_actor
from .htmx import page_or_fragment
from .runs import filter_form, list_args

bp = Blueprint("queue", __name__)


@bp.get("/queue")
@login_required
def next_run() -> Response | str:
    """"My next item": the queues I may review with my progress and the button that
    reserves my next item (Enter). Without such a queue, or for a filtered list (the run
    page's "Next unrated run"), redirect to the next unrated run of the list, or say the
    list is done."""
    if set(request.args) <= {"mine"}:
        rows = [r for r in review_queues.list_queues(db.session, current_actor()) if r.may_review]
        if rows:
            return render_template("queues/mine.html", rows=rows)
    form = filter_form()
    form.validate()
    after = request.args.get("after")
    state = unrated_runs.next_run(db.session, current_actor(),
                                  RunFilters.from_params(form.to_params()), after_run_pk=after)
    if state.run_pk is None:
        return render_template("queue/next.html", state=state, list_args=list_args())
    return redirect(url_for("runs.detail", run_pk=state.run_pk, queue="1", **list_args()), 303)


@bp.get("/queue/progress")
@login_required
def progress() -> Response:
    """The progress fragment (refreshed after each rating)."""
    form = filter_form()
    form.validate()
    progress = unrated_runs.progress(db.session, current_actor(), RunFilters.from_params(form.to_params()))
    return page_or_fragment("queue/_progress.html", "queue/_progress.html", progress=progress,
                            list_args=list_args())
