"""The not-useful queue (lead and admin): list with filters, item page, actions, bulk actions.

Every action is a plain form POST that answers 303 (Post/Redirect/Get); htmx posts the
same form from a queue row and gets the row back (``triage/_row.html``). A stale version
answers 409 with the item's current state: the row, re-rendered from it, for htmx; a
conflict page otherwise.
"""

from __future__ import annotations

from flask import Blueprint, Response, current_app, make_response, render_template, request, url_for
from flask_login import login_required

from ..domain.run_vocabulary import RUN_KINDS
from ..errors import Conflict, ValidationFailed
from ..extensions import db
from ..services import triage
from .auth import current_actor
from .forms import (
    TriageActionForm,
    TriageBulkForm,
    TriageFilterForm,
    first_invalid,
    show_service_error,
)
from .htmx import filters_may_focus, fragment, hx_trigger, is_htmx, page_or_fragment
from .responses import conflict_page, see_other

bp = Blueprint("triage", __name__, url_prefix="/triage")
# The state tabs recount when a change says so.
CHANGED_EVENT = "triage-changed"


@bp.get("/")
@login_required
def index() -> Response:
    """The queue, filtered; htmx gets only the table. A refused filter (400) is shown as
    the runs list shows one: next to its field and, in the table's place, named by its
    label, with no rows (``show_service_error``: every refused field at once), the first
    refused field focused (``first_invalid``); the filters go out of band with an htmx
    answer that refuses one or follows one (``X-Filter-Errors``)."""
    form = TriageFilterForm(formdata=request.args)
    actor = current_actor()
    page = None
    try:
        page = triage.list_items(
            db.session, actor, triage.read_filters(db.session, actor, request.args),
            limit=current_app.config["TRIAGE_PAGE_SIZE"], cursor=request.args.get("cursor") or None,
        )
    except ValidationFailed as error:
        if not show_service_error(form, error):
            raise
    workspaces, assignee_choices = (page.workspaces, page.assignee_choices) if page else \
        triage.filter_choices(db.session, actor)
    oob_filters = is_htmx() and (page is None or request.headers.get("X-Filter-Errors") == "1")
    return page_or_fragment("triage/list.html", "triage/_table.html", status=200 if page else 400,
                            page=page, form=form, workspaces=workspaces, assignee_choices=assignee_choices,
                            oob_filters=oob_filters, list_url=request.full_path.rstrip("?"),
                            focus=first_invalid(form) if filters_may_focus() else None,
                            kinds=RUN_KINDS.choices(),
                            reasons=triage.reason_options(db.session, [ws_id for ws_id, _ in workspaces]))


@bp.get("/<int:item_id>")
@login_required
def detail(item_id: int) -> str:
    """One item: the run, every rating, the feedback history, the action forms."""
    return render_template("triage/detail.html",
                           detail=triage.get_item(db.session, current_actor(), item_id))


def _invalid_page(item_id: int, form: TriageActionForm, error: ValidationFailed) -> Response:
    """The item page again (400) with the refused field's message next to it and what
    the user typed still in the field, so nothing typed is lost."""
    db.session.rollback()
    return make_response(render_template(
        "triage/detail.html", detail=triage.get_item(db.session, current_actor(), item_id),
        field_errors={error.field: error.reason},
        submitted={name: value or "" for name, value in form.data.items()},
    ), 400)


def _row_response(row: triage.TriageRow, next_url: str | None, message: str, status: int = 200,
                  notice_kind: str = "success") -> Response:
    response = fragment(
        "triage/_row.html", status, row=row, next_url=next_url or url_for("triage.index"),
        notice=message, notice_kind=notice_kind,
    )
    return hx_trigger(response, CHANGED_EVENT)


def _action(item_id: int, message: str, form: TriageActionForm,
            call, yours: dict[str, str | None] | None = None, at: str | None = None) -> Response:  # noqa: ANN001
    """Run one item action (``call``, a service call); answer with the row (htmx), 303
    (plain; at the element ``at`` of the page when given, a fragment app.js focuses, so a
    keyboard user lands where they were) or 409 (stale: the current state, and ``yours``,
    what the user typed, so a note is not lost). A refused value is shown on the item page:
    again (400) with what was typed, or, for an accepted proposal (``proposal`` set:
    nothing typed), 303 to it with the error."""
    next_url = form.next.data or url_for("triage.detail", item_id=item_id)
    try:
        row = call()
    except ValidationFailed as invalid:
        if is_htmx():
            raise
        if form.proposal.data:  # nothing typed to keep: back to the item page, the error on it
            db.session.rollback()
            return see_other(f"The proposal was not accepted: {invalid.reason}",
                             url_for("triage.detail", item_id=item_id), "error")
        return _invalid_page(item_id, form, invalid)
    except Conflict as stale:
        if is_htmx() and isinstance(stale.details, dict):
            return _row_response(triage.TriageRow.from_dict(stale.details), form.next.data,
                                 stale.message, 409, "error")
        if yours and isinstance(stale.details, dict):  # what was sent, as the page words it
            yours = {**yours, **{key: label for key, label in stale.details.get("submitted_labels", {}).items()
                                 if key in yours}}
        return conflict_page(stale, next_url, title="Triage item changed", yours=yours)
    if is_htmx():
        return _row_response(row, form.next.data, message)
    return see_other(message, f"{next_url}#{at}" if at and "#" not in next_url else next_url)


@bp.post("/<int:item_id>/assign")
@login_required
def assign(item_id: int) -> Response:
    """Assign to a lead or admin of the item's workspace (empty: unassign)."""
    form = TriageActionForm()
    return _action(item_id, "Assignment saved.", form, lambda: triage.assign(
        db.session, current_actor(), item_id, form.version.data, form.assignee_id.data))


@bp.post("/<int:item_id>/category")
@login_required
def category(item_id: int) -> Response:
    """Set or clear the fault category."""
    form = TriageActionForm()
    return _action(item_id, "Fault category saved.", form, lambda: triage.set_fault_category(
        db.session, current_actor(), item_id, form.version.data, form.fault_category.data),
        yours=None if form.proposal.data else {"fault_category": form.fault_category.data},
        at="fault_category")


@bp.post("/<int:item_id>/note")
@login_required
def note(item_id: int) -> Response:
    """Replace the note."""
    form = TriageActionForm()
    return _action(item_id, "Note saved.", form, lambda: triage.set_note(
        db.session, current_actor(), item_id, form.version.data, form.note.data),
        yours={"note": form.note.data})


@bp.post("/<int:item_id>/state")
@login_required
def state(item_id: int) -> Response:
    """Move to another state (triaged, resolved, won't fix, reopen)."""
    form = TriageActionForm()
    return _action(item_id, "State changed.", form, lambda: triage.move(
        db.session, current_actor(), item_id, form.version.data, form.state.data or ""))


@bp.post("/bulk")
@login_required
def bulk() -> Response:
    """Assign or move the selected items; one result per item."""
    form = TriageBulkForm()
    next_url = form.next.data or url_for("triage.index")
    try:
        items = triage.parse_item_tokens(form.items.data or [])
        if form.action.data == "assign":
            outcomes = triage.bulk_assign(db.session, current_actor(), items, form.assignee_id.data)
        else:
            outcomes = triage.bulk_move(db.session, current_actor(), items, form.state.data or "")
    except ValidationFailed as invalid:  # the selection itself (none ticked, too many)
        if invalid.field != "items":
            raise
        db.session.rollback()
        message = f"Nothing was changed: {invalid.reason}."
        if not is_htmx():
            return see_other(message, next_url, "error")
        return fragment("triage/_bulk_result.html", 400, outcomes=[], summary=message, refused=True)
    applied = sum(1 for o in outcomes if o.status == "applied")
    skipped = sum(1 for o in outcomes if o.status == "skipped")
    summary = f"{applied} of {len(outcomes)} item(s) changed" + (
        f", {skipped} left as they were (already there)." if skipped else ".")
    problems = bulk_problems(outcomes)
    if not is_htmx():
        return see_other(" ".join([summary, *problems]), next_url,
                         "success" if not problems else "error")
    response = fragment("triage/_bulk_result.html", outcomes=outcomes, summary=summary,
                        problems=problems, next_url=next_url)
    return hx_trigger(response, CHANGED_EVENT)


# Items a bulk action left alone for the same reason: said once, naming them (new-user walk:
# "changed by someone else" was said again for each stale item). Stale items are grouped by
# who changed them (the service's message: "changed <who> since your page was loaded; not changed").
_UNAVAILABLE = "Not found, or not yours, so not changed"


def _named(ids: list[str]) -> str:
    named = ids[0] if len(ids) == 1 else f"{', '.join(ids[:-1])} and {ids[-1]}"
    return f"item{'s' if len(ids) > 1 else ''} {named}."


def bulk_problems(outcomes: list[triage.BulkOutcome]) -> list[str]:
    """The sentences for a bulk action's items not changed: stale (``conflict``) items one
    sentence per who changed them, then unavailable (``forbidden``) items, each naming
    them ("...: items #3 and #5."), then one per item the action does not apply to
    (``invalid``, its reason)."""
    heads: dict[str, list[str]] = {}
    for o in outcomes:
        if o.status == "conflict":
            said = o.message.removesuffix("; not changed")
            heads.setdefault(f"{said[:1].upper()}{said[1:]}, so not changed", []).append(f"#{o.item_id}")
    heads[_UNAVAILABLE] = [f"#{o.item_id}" for o in outcomes if o.status == "forbidden"]
    lines = [f"{head}: {_named(ids)}" for head, ids in heads.items() if ids]
    return lines + [f"Item #{o.item_id} — not possible: {o.message}" for o in outcomes
                    if o.status == "invalid"]
