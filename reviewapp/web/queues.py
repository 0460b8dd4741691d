"""Review queues' administration pages (issue 16): the list with progress, a lead's
create / edit form, a queue's items (removing, assigning by hand) and bulk "Add to queue"
from the runs list. Working the items (my next item, Skip, the reservation's renewal) is
``queue_items``, under the same ``/queues`` addresses. Thin: every rule is in
``services/review_queues.py``; service errors answer through ``web/errors.py``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask import (
    Blueprint,
    Response,
    current_app,
    flash,
    make_response,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_login import login_required

from ..actors import Role
from ..domain.consensus import DEFAULT_DISPUTE_RULE, DISPUTE_RULES
from ..domain.queues import (
    ASSIGN_BY_HAND,
    ASSIGNMENT_MODES,
    RESERVATION_DEFAULT_MINUTES,
    REVIEWER_SCOPES,
    REVIEWERS_MAX,
    REVIEWERS_MIN,
)
from ..errors import Conflict, Forbidden, ValidationFailed
from ..extensions import db
from ..services import review_queues as rq
from .auth import current_actor
from .forms import (
    FEEDBACK_CHOICES,
    KIND_CHOICES,
    STATUS_CHOICES,
    VERDICT_CHOICES,
    AddRunsForm,
    QueueForm,
    QueueItemForm,
    int_or_none,
    show_service_error,
    validated,
)
from .htmx import is_htmx

bp = Blueprint("queues", __name__, url_prefix="/queues")

RULE_FIELDS = ("kind", "status", "verdict", "feedback", "score_min", "score_max", "outcome",
               "failed_calls", "q")


def _rule_chips(rule: Mapping[str, str] | None) -> list[str]:
    """A rule's filters as the chips of its queue's page, in the form's order: the form
    field's label and the value's label in its vocabulary (``Kind: AIOps``), a checkbox
    filter by its label alone, free values (scores, text) as stored."""
    form = QueueForm(formdata=None, meta={"csrf": False})
    labels = {"kind": dict(KIND_CHOICES), "status": dict(STATUS_CHOICES),
              "verdict": dict(VERDICT_CHOICES), "feedback": dict(FEEDBACK_CHOICES)}
    rule = rule or {}
    return [form[name].label.text if name == "failed_calls" else
            f"{form[name].label.text}: {labels.get(name, {}).get(rule[name], rule[name])}"
            for name in RULE_FIELDS if name in rule]


def _choices() -> dict[str, Any]:
    return {"kind_choices": KIND_CHOICES, "status_choices": STATUS_CHOICES,
            "verdict_choices": VERDICT_CHOICES, "feedback_choices": FEEDBACK_CHOICES,
            "reviewer_scopes": REVIEWER_SCOPES, "assignment_modes": ASSIGNMENT_MODES,
            "reviewers_range": range(REVIEWERS_MIN, REVIEWERS_MAX + 1),
            "dispute_rules": dict(DISPUTE_RULES.choices())}


@bp.get("/")
@login_required
def index() -> str:
    """Every queue of my workspaces with its progress; leads see per-reviewer progress on
    a queue's own page."""
    actor = current_actor()
    rows = rq.list_queues(db.session, actor)
    led = rq.led_workspaces(db.session, actor)
    return render_template("queues/index.html", rows=rows, can_create=bool(led))


def _settings(form: QueueForm) -> dict[str, Any]:
    """The form's settings for the service; a field the form refused is left out (the
    service then checks the rest: every wrong field is marked in one submit)."""
    def ok(name: str) -> bool:
        return not form[name].errors

    rule = {name: str(form[name].data).strip() for name in RULE_FIELDS
            if form[name].data not in (None, "") and ok(name)}
    values = {
        "name": form.name.data or "", "rule": rule,
        "sample_percent": form.sample_percent.data,
        "reviewers_per_run": form.reviewers_per_run.data,
        "blind": bool(form.blind.data),
        "reservation_minutes": form.reservation_minutes.data,
        "reviewers": form.reviewers.data, "assignment": form.assignment.data,
        "named": form.named.data or [],
        # absent from an older form: the service's default (create) or unchanged (edit)
        **({"dispute_rule": form.dispute_rule.data} if form.dispute_rule.data else {}),
    }
    return {k: v for k, v in values.items() if k in ("rule", "blind", "named") or ok(k)}


def _submit(form: QueueForm, save: Any, check: Any) -> Any:
    """``save(**settings)`` when the form passes, else ``check(**settings)`` of the
    fields it passed (raises, never writes); a service refusal is put beside its
    fields. Returns what ``save`` returned, ``None`` when anything was refused."""
    valid = form.validate()
    try:
        if valid:
            return save(**_settings(form))
        if not form.workspace.errors:
            check(**_settings(form))
    except (ValidationFailed, Conflict) as error:
        db.session.rollback()
        _show(form, error)
    return None


# The queue form's fields in the page's order (templates/queues/form.html).
FORM_ORDER = ("workspace", "name", "kind", "status", "verdict", "feedback", "score_min",
              "score_max", "outcome", "q", "failed_calls", "sample_percent", "reviewers_per_run",
              "blind", "dispute_rule", "reservation_minutes", "reviewers", "named", "assignment")


def _form_page(form: QueueForm, *, queue: Any, workspaces: list[tuple[int, str]],
               people: list[tuple[int, str]], chosen: list[int], status: int = 200) -> Response:
    """The queue form; a refused one focuses its first invalid field in the page's order
    (``first_invalid``: a field below the fold is scrolled to, new-user walk)."""
    first_invalid = next((name for name in FORM_ORDER if form[name].errors), None)
    return make_response(render_template(
        "queues/form.html", form=form, queue=queue, workspaces=workspaces, people=people,
        chosen=set(chosen), named_error=" ".join(form.named.errors) or None,
        first_invalid=first_invalid, **_choices()), status)


@bp.route("/new", methods=["GET", "POST"])
@login_required
def new() -> Response:
    """A lead creates a queue in one of the workspaces they lead."""
    actor = current_actor()
    workspaces = rq.led_workspaces(db.session, actor)
    if not workspaces:
        raise Forbidden()
    form = QueueForm()
    if request.method == "GET":
        form.workspace.data = str(request.args.get("workspace") or workspaces[0][0])
        form.sample_percent.data, form.reviewers_per_run.data = 100, 1
        form.reservation_minutes.data = RESERVATION_DEFAULT_MINUTES
        form.reviewers.data, form.assignment.data = "all", "open"
        form.dispute_rule.data = DEFAULT_DISPUTE_RULE
    ws_id = int_or_none(form.workspace.data) or workspaces[0][0]
    people = rq.workspace_reviewers(db.session, ws_id) if ws_id in dict(workspaces) else []
    chosen = _ids(form.named.data)
    done = _submit(form, lambda **v: rq.create_queue(db.session, actor, form.workspace.data, **v),
                   lambda **v: rq.check_queue(db.session, actor, form.workspace.data, **v)) \
        if request.method == "POST" else None
    if done:
        queue, added = done
        flash(f"Queue “{queue.name}” created with {added} run{'s' if added != 1 else ''}.",
              "success")
        return redirect(url_for("queues.detail", queue_id=queue.id), 303)
    return _form_page(form, queue=None, workspaces=workspaces, people=people, chosen=chosen,
                      status=422 if request.method == "POST" else 200)


def _show(form: QueueForm, error: ValidationFailed | Conflict) -> None:
    """Each refused field's reason beside it (``rule.<filter>`` beside the filter)."""
    if isinstance(error, Conflict):
        form.name.errors = [*form.name.errors, error.message]  # the one conflict: its name
        return
    for path, reason in error.problems.items():
        field = path.split(".")
        name = field[-1] if field[0] == "rule" and len(field) > 1 else field[0]
        if name in form:
            form[name].errors = [*form[name].errors, reason]
        elif not show_service_error(form, ValidationFailed(path, reason)):
            form.name.errors = [*form.name.errors, f"{path}: {reason}"]


def _ids(values: list[str] | None) -> list[int]:
    """The whole numbers among checkbox ``values`` (others dropped, as always)."""
    return [v for v in (int_or_none(x) for x in values or ()) if v]


@bp.route("/<int:queue_id>/edit", methods=["GET", "POST"])
@login_required
def edit(queue_id: int) -> Response:
    """A lead changes a queue's settings."""
    actor = current_actor()
    queue = rq.get_queue(db.session, actor, queue_id, Role.LEAD)
    form = QueueForm(obj=None if request.method == "POST" else queue)
    if request.method == "GET":
        form.workspace.data = str(queue.workspace_id)
        for name in RULE_FIELDS:
            form[name].data = (queue.rule or {}).get(name)
    people = rq.workspace_reviewers(db.session, queue.workspace_id)
    chosen = _ids(form.named.data) if request.method == "POST" \
        else rq.named_reviewers(db.session, queue.id)
    done = _submit(form, lambda **v: rq.update_queue(db.session, actor, queue.id, **v),
                   lambda **v: rq.check_queue(db.session, actor, None, queue.id, **v)) \
        if request.method == "POST" else None
    if done:
        added = done[1]
        flash("Queue saved." + (f" {added} more run{'s' if added != 1 else ''} entered."
                                if added else ""), "success")
        return redirect(url_for("queues.detail", queue_id=queue_id), 303)
    workspaces = [(queue.workspace_id, "")]
    return _form_page(form, queue=queue, workspaces=workspaces, people=people, chosen=chosen,
                      status=422 if request.method == "POST" else 200)


@bp.get("/<int:queue_id>")
@login_required
def detail(queue_id: int) -> Response:
    """A queue's settings, per-reviewer progress and items (leads); a by-hand assignment
    refused just before (``assign``) beside its item's form, once."""
    kept = session.pop(_REFUSED, None) or {}
    refusal = _Refusal(int(kept["item"]), [str(p) for p in kept["picks"]], str(kept["reason"])) \
        if kept.get("queue") == queue_id else None
    return _detail_page(queue_id, request.args.get("cursor") or None, refusal)


_REFUSED = "queue_assign_refused"  # the cookie session's key: a refused Assign, read once
_PICKS_MAX = 20  # more slots than a queue has (reviewers per run <= 5) are not kept


@dataclass(frozen=True)
class _Refusal:
    """A refused by-hand assignment, shown at its item's form: ``picks`` the submitted
    values slot by slot ("" for Nobody), ``reason`` the service's."""

    item_id: int
    picks: list[str]
    reason: str


def _detail_page(queue_id: int, cursor: str | None, refusal: _Refusal | None = None,
                 status: int = 200, removing: Any = None) -> Response:
    """The queue's page (its items after ``cursor``), ``refusal`` beside its item's form,
    ``removing`` (``RemovalItem``) the run it asks about removing."""
    actor = current_actor()
    queue, page = rq.list_items(db.session, actor, queue_id, cursor, limit=current_app.config.get(
        "QUEUE_ITEMS_PAGE_SIZE", rq.ITEMS_PER_PAGE))
    people = rq.reviewer_progress(db.session, actor, queue_id)
    return make_response(render_template(
        "queues/detail.html", queue=queue, page=page, cursor=cursor, people=people,
        progress=rq.progress(db.session, actor, queue_id),
        assignable=rq.assignable_reviewers(db.session, actor, queue_id)
        if queue.assignment == ASSIGN_BY_HAND else [],
        rule_chips=_rule_chips(queue.rule), capacity=rq.capacity(db.session, actor, queue_id),
        refusal=refusal, removing=removing, **_choices()), status)


@bp.get("/<int:queue_id>/items/<int:run_pk>/remove")
@login_required
def confirm_remove(queue_id: int, run_pk: int) -> Response:
    """The queue's page asking "Remove this run from <queue>?" (new-user walk: one click
    removed at once); its button posts the removal, "Cancel" goes back to the item. Works
    without JavaScript. A run not in the queue: back to the queue's page, said so."""
    return _ask_remove(queue_id, run_pk, request.args.get("cursor") or None)


def _ask_remove(queue_id: int, run_pk: int, cursor: str | None) -> Response:
    removing = rq.removal_item(db.session, current_actor(), queue_id, run_pk)
    if removing is None:
        flash("That run was not in the queue.", "info")
        return redirect(url_for("queues.detail", queue_id=queue_id, cursor=cursor), 303)
    return _detail_page(queue_id, cursor, removing=removing)


@bp.post("/<int:queue_id>/items/<int:run_pk>/remove")
@login_required
def remove(queue_id: int, run_pk: int) -> Response:
    """A lead removes a run from the queue when the form says ``confirm=1`` (the
    question's own button); otherwise the queue's page asks first, as the GET."""
    form = validated(QueueItemForm())
    if form.confirm.data != "1":
        return _ask_remove(queue_id, run_pk, form.cursor.data or None)
    removed = rq.remove_run(db.session, current_actor(), queue_id, run_pk)
    flash("Run removed from the queue." if removed else "That run was not in the queue.",
          "success" if removed else "info")
    return redirect(url_for("queues.detail", queue_id=queue_id,
                            cursor=form.cursor.data or None), 303)


@bp.post("/<int:queue_id>/items/<int:item_id>/assign")
@login_required
def assign(queue_id: int, item_id: int) -> Response:
    """A lead assigns an item by hand (replaces its assignees); a refused choice: back to
    the queue's page (303, POST/redirect/GET: a reload does not post again; queuewalk),
    which shows the reason beside the item's form and the picks kept, once; to htmx the
    queue's page itself (422)."""
    form = validated(QueueItemForm())
    actor = current_actor()
    rq.get_queue(db.session, actor, queue_id, Role.LEAD)
    picks = [str(v) for v in form.assignees.data or ()]
    try:
        chosen = rq.assign(db.session, actor, item_id, [v for v in picks if v])
    except ValidationFailed as refused:  # who was chosen, or the item (completed since)
        if refused.field not in ("assignees", "item"):
            raise
        db.session.rollback()
        if is_htmx():
            return _detail_page(queue_id, form.cursor.data or None,
                                _Refusal(item_id, picks, refused.reason), 422)
        session[_REFUSED] = {"queue": queue_id, "item": item_id, "picks": picks[:_PICKS_MAX],
                             "reason": refused.reason}
        return redirect(url_for("queues.detail", queue_id=queue_id,
                                cursor=form.cursor.data or None) + f"#item-{item_id}", 303)
    flash("Item assigned." if chosen else "Item unassigned.", "success")
    return redirect(url_for("queues.detail", queue_id=queue_id,
                            cursor=form.cursor.data or None) + f"#item-{item_id}", 303)


@bp.post("/add-runs")
@login_required
def add_runs() -> Response:
    """Bulk "Add to queue" from the runs list (leads): the checked runs join the queue.
    No run checked (or values that are no run ids): back on the list the lead came from,
    the refusal flashed there (a missing queue or an expired form still answer 400)."""
    form = AddRunsForm()
    back = form.next.data or ""
    if not back.startswith("/") or back.startswith("//"):
        back = url_for("runs.index")
    if not form.validate() and [n for n, f in form._fields.items() if f.errors] != ["runs"]:
        validated(form)  # the 400 naming the field, the CSRF token first
    runs = form.runs.data
    try:
        if form.runs.errors:
            raise ValidationFailed("runs", form.runs.errors[0])
        added = rq.add_runs(db.session, current_actor(), form.queue.data, runs)
    except ValidationFailed as refused:
        if refused.field != "runs":
            raise
        db.session.rollback()
        flash(refused.reason, "error")  # a sentence; the field's code is for the API
        session[_KEPT] = {"queue": int_or_none(form.queue.data), "runs": _ids(runs)[:_KEPT_MAX]}
        return redirect(back, 303)
    flash(f"{added} run{'s' if added != 1 else ''} added to the queue"
          + (f" ({len(set(runs)) - added} already in it)." if added < len(set(runs)) else "."),
          "success")
    return redirect(back, 303)


_KEPT = "add_to_queue_kept"  # the cookie session's key; read once by the runs list
_KEPT_MAX = 200  # more ticks than a runs page shows are not kept (the cookie's size)


@dataclass(frozen=True)
class KeptSelection:
    """A refused bulk "Add to queue": the ``queue`` id chosen and the ``runs`` ticked
    (ids), for the runs list it returns to, so nothing the lead chose is lost."""

    queue: int | None = None
    runs: frozenset[int] = frozenset()


def kept_selection() -> KeptSelection:
    """The choice of the bulk add refused just before (``add_runs``), once: the runs list
    shows it again, the next visit starts afresh. Empty when there is none."""
    kept = session.pop(_KEPT, None) or {}
    return KeptSelection(int_or_none(kept.get("queue")), frozenset(_ids(kept.get("runs"))))
