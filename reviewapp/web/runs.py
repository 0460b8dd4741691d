"""Runs list and run pages: the list (filters in the URL, htmx swaps the table), the
run page, its live timeline fragment, one tool call's details, the verdict badge."""

from __future__ import annotations

from flask import (
    Blueprint,
    Response,
    current_app,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import login_required
from werkzeug.routing import PathConverter

from ..errors import ValidationFailed
from ..extensions import db
from ..services import review_queues
from ..services import runs as runs_service
from .auth import current_actor
from .forms import RunFilterForm, first_invalid, show_service_error
from .htmx import filters_may_focus, is_htmx, page_or_fragment, refresh_page, sent_by_htmx
from .queues import kept_selection

bp = Blueprint("runs", __name__)


class AgentIdConverter(PathConverter):
    """A path segment holding an agent's own id (a tool call id): any text of 1-160
    characters, slashes and line breaks included. Werkzeug's ``path`` stops at a line
    break and its ``//`` merging would rewrite ids such as ``kb://doc``, so a stored call
    could not be opened (the ingest schema accepts both)."""

    regex = "(?s:.+?)"
    part_isolating = False  # the id may hold "/" (werkzeug infers True from the regex)

    def to_url(self, value: str) -> str:
        """``filters.path_segment``: an id such as ``../../admin`` stays one segment."""
        from .filters import path_segment

        return path_segment(value)

# What a run page's blind-review banner asks to rate (runs/detail.html, services.runs.RunDetail).
BLIND_NOUNS = frozenset({"answer", "conclusion", "report"})

# Query-string keys that describe "the current list" and travel to run pages and back:
# the runs list's parameters (a new filter is a change to ``RunFilters`` only).
LIST_KEYS = runs_service.RunFilters.param_names()


def filter_form() -> RunFilterForm:
    """The filter form bound to the query string."""
    return RunFilterForm(formdata=request.args)


def list_args() -> dict[str, str]:
    """The current list's filters from the query string (no cursor), for links."""
    return {k: v for k in LIST_KEYS if (v := request.args.get(k, "").strip())}


def page_args() -> dict[str, str]:
    """What a run page's own address carries beside the run (``list_args``, ``queue=1``
    in the review queue, ``item`` and ``queue_id`` for a run opened as a queue item), for
    its fragments' addresses and the links they render: a live poll, "Show the next" or a
    rating saved without JavaScript keeps the page's list and queue (user-walk findings:
    the failed-calls link they refreshed dropped both; a queue item's rating came back
    to the bare run page, its queue bar gone)."""
    args = {**list_args(), **{k: v for k in ("item", "queue_id")
                              if (v := request.args.get(k, "").strip())}}
    return {"queue": "1", **args} if request.args.get("queue") == "1" else args


def run_page_url(run_pk: int) -> str:
    """The run page's address with ``page_args`` (the page's ``here``)."""
    return url_for("runs.detail", run_pk=run_pk, **page_args())


def folded_count(args: dict[str, str]) -> int:
    """How many of ``args`` (``list_args``) the phone's filter fold holds: every one but
    the search, which is always shown, and the sort."""
    return sum(1 for name in args if name not in ("q", "sort"))


@bp.get("/")
@login_required
def index() -> Response:
    """The runs list (landing page); htmx requests get only the table."""
    form = filter_form()
    invalid = not form.validate()
    list_error = None  # a refused value the form has no field for (the page link's cursor)
    try:
        # The service's rules (e.g. min above max) for the values the form let through, so
        # every refused field is named at once; the list only when none is.
        filters = runs_service.read_filters(db.session, current_actor(), form.to_params())
        if not invalid:
            page = runs_service.list_runs(
                db.session, current_actor(), limit=current_app.config["RUNS_PAGE_SIZE"],
                cursor=request.args.get("cursor") or None, filters=filters)
    except ValidationFailed as error:
        if not show_service_error(form, error):
            if error.field != "cursor":
                raise
            list_error = ("Page link", "it is not a link to a page of this list (it may be "
                          "cut off or old); start again from the first page")
        invalid = True
    # The filters are outside the swapped table: an htmx answer that refuses a filter, or
    # the first one after such an answer (the page says so in X-Filter-Errors), carries
    # them out of band so the marks appear and go (issue 17).
    oob_filters = is_htmx() and (invalid or request.headers.get("X-Filter-Errors") == "1")
    kept = kept_selection()  # a refused "Add to queue": its ticks and queue chosen again
    if invalid:
        workspaces, _ = runs_service.single_workspace(db.session, current_actor())
        return page_or_fragment("runs/list.html", "runs/_table.html", status=400, form=form,
                                page=None, list_args=list_args(), sorts=runs_service.SORTS,
                                folded=folded_count(list_args()),
                                workspaces=workspaces, oob_filters=oob_filters, list_error=list_error,
                                focus=first_invalid(form) if filters_may_focus() else None)
    # Where bulk "Add to queue" comes back to: this page, or for a swap the list (the
    # request's own address is the fragment's).
    back_url = url_for("runs.index", **list_args()) if sent_by_htmx() else request.full_path
    return page_or_fragment("runs/list.html", "runs/_table.html", form=form, page=page,
                            list_args=list_args(), sorts=runs_service.SORTS,
                            folded=folded_count(list_args()), back_url=back_url,
                            workspaces=page.workspaces, oob_filters=oob_filters,
                            add_queues=review_queues.lead_queues(db.session, current_actor()),
                            kept=kept)


@bp.get("/runs/<int:run_pk>")
@login_required
def detail(run_pk: int) -> str:
    """One run: answer, citations, steps, report, timeline, self-evaluation, thumbs. The
    timeline shows its first 50 calls, and further down with ``call`` (a link to one
    call), ``calls_after`` (the plain "Show the next" link) or ``calls=all`` (issue 18)."""
    args = list_args()
    filters = runs_service.RunFilters()  # no list named: the form would read nothing
    if args:
        form = filter_form()
        form.validate()
        filters = runs_service.RunFilters.from_params(form.to_params())
    detail = runs_service.get_run_detail(db.session, current_actor(), run_pk, filters,
                                         runs_service.Shown.from_params(request.args))
    item = request.args.get("item")
    queue_item = review_queues.open_item(db.session, current_actor(), item, run_pk) \
        if item else None
    return render_template("runs/detail.html", d=detail, list_args=args,
                           queue_mode=request.args.get("queue") == "1" and not queue_item,
                           queue_item=queue_item, here_args=page_args())


@bp.get("/runs/by-id/<agent_id:run_id>", merge_slashes=False)
@login_required
def by_id(run_id: str) -> Response:
    """A run by the agent's own run id: a redirect to its page; 409 naming the
    workspaces when the user holds that id in more than one; the same 403 as a missing
    run when it is foreign."""
    found = runs_service.find_run_by_id(db.session, current_actor(), run_id)
    if len(found) > 1:
        return make_response(render_template("runs/by_id_conflict.html", run_id=run_id,
                                              found=found), 409)
    return redirect(url_for("runs.detail", run_pk=found[0].run_pk), 303)


@bp.get("/runs/<int:run_pk>/timeline")
@login_required
def timeline(run_pk: int) -> Response:
    """The timeline fragment. 204 when nothing changed since version ``v`` (the live
    poll then swaps nothing, so open details stay open); a whole-page refresh when a run
    watched live has ended, so the final answer and evaluation appear. The poll names
    the last call the page shows (``call``), so the rows loaded below stay."""
    timeline = runs_service.get_timeline(db.session, current_actor(), run_pk,
                                         runs_service.Shown.from_params(request.args))
    if request.args.get("live") == "1" and not timeline.live and is_htmx():
        return refresh_page(make_response("", 200))
    if request.args.get("v") == timeline.version:
        return make_response("", 204)
    return page_or_fragment("runs/_timeline.html", "runs/_timeline.html", timeline=timeline,
                            oob_counts=is_htmx(), here=run_page_url(run_pk), here_args=page_args())


@bp.get("/runs/<int:run_pk>/timeline/calls")
@login_required
def timeline_calls(run_pk: int) -> Response:
    """"Show the next N of M tool calls" (issue 18): for htmx, the next chunk of timeline
    rows after the call ``after`` and the next such control; otherwise the run page
    showing them (the control's own link); the htmx answer also refreshes the header's
    count of failed calls not shown yet (out of band). 400 naming ``after`` when it is missing or no
    call of the run; the page's 403 for a missing or foreign run."""
    after = request.args.get("after") or ""
    chunk = runs_service.get_timeline_chunk(db.session, current_actor(), run_pk, after)
    if not is_htmx():
        return redirect(url_for("runs.detail", run_pk=run_pk, calls_after=after, **page_args()), 303)
    return page_or_fragment("runs/_timeline_chunk.html", "runs/_timeline_chunk.html",
                            timeline=chunk, here=run_page_url(run_pk), here_args=page_args())


@bp.get("/runs/<int:run_pk>/tool-calls/<agent_id:call_id>", merge_slashes=False)
@bp.get("/runs/<int:run_pk>/tool-calls")
@login_required
def tool_call(run_pk: int, call_id: str | None = None) -> Response:
    """One tool call's arguments, result and error (loaded when a timeline row opens).
    Links name the call in the query (``?call_id=``, the timeline's rows): an
    agent's id is free text, and a path segment ``%2E%2E`` or ``%2E`` is one the browser
    normalises away (new-user finding). The path form stays for existing links. 400
    naming ``call_id`` when it is missing or empty."""
    if call_id is None:
        call_id = request.args.get("call_id") or ""
        if not call_id:
            raise ValidationFailed("call_id", "is required: the id of one of the run's tool calls")
    opened = runs_service.get_tool_call(db.session, current_actor(), run_pk, call_id)
    return page_or_fragment("runs/tool_call.html", "runs/_tool_call.html", call=opened.call,
                            time_zone=opened.time_zone, run_pk=run_pk)


@bp.get("/runs/<int:run_pk>/verdict")
@login_required
def verdict(run_pk: int) -> Response:
    """The run's verdict badge (refreshed after an answer-level rating); with ``note``
    (the page's blind-review banner names what to rate: answer, conclusion or report;
    anything else is ignored) the banner too, out of band, so it ends with the blind
    review (or comes back when the rating is taken back) without a reload."""
    view = runs_service.get_verdict(db.session, current_actor(), run_pk)
    note = request.args.get("note")
    note = note if note in BLIND_NOUNS else None
    return page_or_fragment("runs/_verdict.html", "runs/_verdict.html", v=view, note=note,
                            oob_note=is_htmx())

