"""Adjudication pages (issue 16): the lead's list of disputed runs, every reviewer's
judgement side by side, and the decision form. Thin: ``services.adjudication`` holds
the rules and the access checks."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, render_template, request, url_for
from flask_login import login_required
from markupsafe import Markup

from ..domain.verdicts import VERDICTS
from ..errors import Conflict
from ..extensions import db
from ..services import adjudication, cases
from .auth import current_actor
from .forms import DecisionForm
from .responses import conflict_page, see_other

bp = Blueprint("adjudication", __name__, url_prefix="/adjudication")


@bp.get("/")
@login_required
def index() -> str:
    """Disputed runs of the workspaces the user leads (filters: workspace, queue; a page
    by ``cursor``: a bad one is a 400 naming it)."""
    page = adjudication.disputed(db.session, current_actor(),
                                 adjudication.AdjudicationFilters.from_params(request.args),
                                 cursor=request.args.get("cursor") or None,
                                 limit=current_app.config.get("ADJUDICATION_PAGE_SIZE",
                                                              adjudication.PAGE_MAX))
    return render_template("adjudication/index.html", page=page, form=DecisionForm(),
                           verdicts=VERDICTS, here=request.full_path.rstrip("?"))


@bp.post("/runs/<int:run_pk>/decide")
@login_required
def decide(run_pk: int) -> Response:
    """Record the lead's decision; back to the list (or ``next``) with a message. A page
    that showed an older decision than the run's latest (``decision``) gets the 409 page
    with the current decision."""
    form = DecisionForm()
    back = form.next.data or url_for("adjudication.index")
    try:
        result = adjudication.decide(db.session, current_actor(), run_pk,
                                     form.verdict.data or None, form.note.data,
                                     expected_decision=form.decision.data)
    except Conflict as stale:  # a stale page: show the current decision, save nothing
        db.session.rollback()
        return conflict_page(stale, back, title="Decided meanwhile",
                             yours={"verdict": form.verdict.data, "note": form.note.data})
    label = VERDICTS.label(result.verdict)
    own = " You had rated it yourself: the audit log records that." if result.own_rating else ""
    return see_other(Markup("Decision saved: the run is {}.{}{}").format(
        label.lower(), _case_link(result.case_id), own), back)


def _case_link(case_id: str | None) -> Markup:
    """The sentence naming a decision's case, its title linking to the case's page
    (" Its case: “<title>” — open it"; the new-user walk found a raw case id there), or
    nothing for a decision that made no case."""
    if not case_id:
        return Markup("")
    title = cases.get_case(db.session, current_actor(), case_id).case.title
    return Markup(' Its case: <a href="{}">“{}” — open it</a>').format(
        url_for("cases.detail", case_id=case_id), title or case_id)
