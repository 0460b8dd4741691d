"""The case library: list and search, case page, edit (lead+), manual case from a run."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, render_template, request, url_for
from flask_login import login_required

from ..domain.case_sources import CASE_SOURCES
from ..domain.fault_categories import FAULT_CATEGORIES
from ..errors import Conflict, ValidationFailed
from ..extensions import db
from ..services import case_proposals, cases
from .auth import current_actor
from .forms import CaseFilterForm, CaseForm, first_invalid, show_service_error
from .htmx import filters_may_focus, is_htmx, page_or_fragment
from .responses import conflict_page, see_other

bp = Blueprint("cases", __name__, url_prefix="/cases")

_FIELDS = ("title", "fault_category", "error_code", "service", "root_cause", "solution")


@bp.app_template_global()
def run_url(run: Any) -> str:
    """The run page of ``run`` (template helper)."""
    return url_for("runs.detail", run_pk=run.id)


@bp.get("/")
@login_required
def index() -> Response:
    """Search the cases; htmx gets only the table. A refused filter (400) is shown as the
    runs and triage lists show one: next to its field and, in the table's place, named by
    its label, every refused field at once (``show_service_error``), the first focused
    (``first_invalid``); the filters go out of band with an htmx answer that refuses one
    or follows one (``X-Filter-Errors``)."""
    form = CaseFilterForm(formdata=request.args)
    actor = current_actor()
    page = None
    try:
        page = cases.list_cases(
            db.session, actor, cases.read_filters(db.session, actor, request.args),
            limit=current_app.config.get("CASES_PAGE_SIZE", 50), cursor=request.args.get("cursor") or None,
        )
    except ValidationFailed as error:
        if not show_service_error(form, error):
            raise
    oob_filters = is_htmx() and (page is None or request.headers.get("X-Filter-Errors") == "1")
    return page_or_fragment("cases/list.html", "cases/_table.html", status=200 if page else 400,
                            page=page, form=form, oob_filters=oob_filters,
                            workspaces=page.workspaces if page else cases.filter_workspaces(db.session, actor),
                            focus=first_invalid(form) if filters_may_focus() else None,
                            case_categories=FAULT_CATEGORIES.choices(),
                            source_types=CASE_SOURCES.choices())


@bp.get("/<case_id>")
@login_required
def detail(case_id: str) -> str:
    """One case, with a link back to its run."""
    return render_template("cases/detail.html",
                           detail=cases.get_case(db.session, current_actor(), case_id))


def _fields(form: CaseForm) -> dict[str, Any]:
    return {name: getattr(form, name).data for name in _FIELDS}


@bp.route("/<case_id>/edit", methods=["GET", "POST"])
@login_required
def edit(case_id: str) -> Response | tuple[str, int] | str:
    """Edit a case (leads and admins): the stored values, the run's proposals beside them.
    A "Use" button (``accept`` = a proposed field) puts that proposal into its field and
    shows the form again, saving nothing; only "Save" writes (SPEC 7)."""
    form = CaseForm()
    back = url_for("cases.edit", case_id=case_id)
    accept = (form.accept.data or None) if form.is_submitted() else None
    if accept is None and form.validate_on_submit():
        try:
            saved = cases.edit_case(db.session, current_actor(), case_id, form.version.data,
                                    _fields(form))
        except Conflict as stale:
            return conflict_page(stale, back, title="Case changed", yours=_fields(form))
        except ValidationFailed as invalid:
            if invalid.field not in _FIELDS or not show_service_error(form, invalid):
                raise
            db.session.rollback()
        else:
            if not saved.changed:
                return see_other("No changes to save.", back, "info")
            return see_other("Case saved.", url_for("cases.detail", case_id=saved.case.case_id))
    view = case_proposals.edit_view(db.session, current_actor(), case_id)
    if not form.is_submitted():
        form.process(data=view.values)
    elif accept is not None and (proposed := view.proposal(accept)) is not None:
        getattr(form, accept).data = proposed
    status = 422 if form.is_submitted() and accept is None else 200
    return render_template("cases/edit.html", form=form, view=view), status


@bp.route("/new", methods=["GET", "POST"])
@login_required
def new() -> Response | tuple[str, int] | str:
    """Create a MANUAL case from a run (``?run=<internal run id>``)."""
    run_pk = request.args.get("run", "")
    form = CaseForm()
    if form.validate_on_submit():
        try:
            case = cases.create_manual_case(db.session, current_actor(), run_pk, _fields(form))
        except ValidationFailed as invalid:
            if invalid.field not in _FIELDS or not show_service_error(form, invalid):
                raise
            db.session.rollback()
            case = None
        except Conflict as exists:
            return conflict_page(exists, url_for("cases.edit", case_id=exists.details["case_id"])
                                 if isinstance(exists.details, dict) else None,
                                 title="This run already has a case")
        if case is not None:
            return see_other("Case created.", url_for("cases.detail", case_id=case.case_id))
    draft = cases.new_case_draft(db.session, current_actor(), run_pk)
    if not form.is_submitted():
        form.process(data=draft.values)
    status = 422 if form.is_submitted() else 200
    return render_template("cases/new.html", form=form, draft=draft), status
