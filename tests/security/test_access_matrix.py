"""The access matrix (SPEC 2, 8, 9): every route of the URL map × every kind of caller.

Callers: anonymous; reviewer / lead / admin of workspace A; reviewer / lead / admin of
workspace B only; an ingest token of A; an ingest token of B. Every request targets
objects of workspace A (runs with messages, citations, steps, a report and tool calls;
feedback; a case; a triage item). The expectation table is keyed by ``"<endpoint>
<METHOD>"`` and must name exactly the routes of ``app.url_map``: a new route without an
entry fails the test.

Cell outcomes:

* ``OK`` 2xx, ``SEE_OTHER`` 303 (a successful form post), ``REDIRECT`` 302/303 elsewhere;
* ``LOGIN`` 303 to ``/login`` (anonymous HTML);
* ``UNAUTH`` 401 ``AUTH_UNAUTHENTICATED`` (API without credentials);
* ``DENIED`` 403 ``AUTH_FORBIDDEN`` (insufficient role);
* ``HIDDEN`` 403 whose body is byte-identical to the same request for a missing id;
* ``CONFLICT_HIDDEN`` 409 "unknown run" identical to the missing run's answer (tool events).

CSRF is off here (``tests/security/test_csrf.py`` covers it); its token is made
deterministic so bodies can be compared byte for byte.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from reviewapp.actors import Actor, Role
from reviewapp.domain import triage_flow
from reviewapp.models import (
    Case,
    DiagnosisSession,
    Feedback,
    Membership,
    Run,
    ToolCall,
    TriageItem,
    User,
)
from reviewapp.services import admin

from ..factories import DEFAULT_PASSWORD
from ..services.feedback.helpers import CALL_ID, chat_run_with_turns, disputed_by_tie, turn_of

MISSING = 987654321
MISSING_CASE = "00000000-0000-4000-8000-000000000000"
SECRET_A = "alpha-only-marker-7f3a"  # in every A object: must never show to B

CALLERS = ("anon", "reviewer_a", "lead_a", "admin_a", "reviewer_b", "lead_b", "admin_b",
           "token_a", "token_b")
MEMBERS_A = ("reviewer_a", "lead_a", "admin_a")
MEMBERS_B = ("reviewer_b", "lead_b", "admin_b")

OK, SEE_OTHER, REDIRECT, LOGIN, UNAUTH, DENIED, HIDDEN, CONFLICT_HIDDEN = (
    "OK", "SEE_OTHER", "REDIRECT", "LOGIN", "UNAUTH", "DENIED", "HIDDEN", "CONFLICT_HIDDEN")
# A filter's workspace refused (400) in the words a missing workspace gets, its number aside.
REFUSED = "REFUSED"


@dataclass
class Req:
    method: str
    url: str
    data: dict[str, Any] | None = None
    json: Any = None


@dataclass
class World:
    ws_a: Any
    ws_b: Any
    users: dict[str, User]
    tokens: dict[str, str]
    run: Run  # chat run with citations and tool calls; has the case and the triage item
    aiops: Run  # steps and report
    running: Run  # RUNNING, to finish over the API
    case: Case
    item: TriageItem
    message_id: int
    step_id: int
    report_id: int
    call_id: str
    aiops_session_id: str
    make: Any
    session: Any
    queue_id: int
    queue_item_id: int
    counter: list[int] = field(default_factory=lambda: [0])

    def fresh(self, prefix: str) -> str:
        self.counter[0] += 1
        return f"{prefix}-{self.counter[0]}"


def _build_world(make, session) -> World:
    system = Actor.system_actor()
    ws_a = make.workspace(slug="alpha", name=f"Alpha {SECRET_A}")
    ws_b = make.workspace(slug="beta", name="Beta")
    users = {}
    for ws, suffix in ((ws_a, "a"), (ws_b, "b")):
        for role in Role:
            users[f"{role.value}_{suffix}"] = make.user(ws, role, username=f"{role.value}-{suffix}")
    tokens = {f"token_{s}": admin.create_token(session, system, ws.id, f"agent-{s}").secret
              for ws, s in ((ws_a, "a"), (ws_b, "b"))}
    run = make.run(
        ws_a, "run-a-1", query=f"Why is checkout slow? {SECRET_A}", answer=f"Because {SECRET_A}.",
        tool_calls=[
            {"id": "call-a-1", "tool_name": "kb_search", "arguments": {"q": SECRET_A},
             "output": {"hits": 1}, "started_at": "2026-01-01T00:00:00Z",
             "completed_at": "2026-01-01T00:00:01Z",
             "retrieval": {"match_level": "L0", "hit_count": 1,
                           "evidence_refs": [{"ref": "kb://one", "excerpt": "one"}]}},
        ])
    aiops = make.aiops_run(ws_a, "run-a-2", query=f"Alert {SECRET_A}")
    running = make.run(ws_a, "run-a-running", status="RUNNING")
    make.run(ws_b, "run-b-1", query="Beta question")
    unrated = make.run(ws_a, "run-a-unrated")
    message_id = next(m.id for m in run.messages if m.role == "assistant")
    make.feedback_row(run, users["reviewer_a"], comment=SECRET_A)
    case = make.case(ws_a, run=run, title=f"Case {SECRET_A}")
    item = make.triage_item(run, note=SECRET_A)
    from reviewapp.models import QueueItem
    from reviewapp.services import review_queues

    queue, _ = review_queues.create_queue(session, system, ws_a.id, f"Queue {SECRET_A}", {})
    # the item of a run nobody rated: open, so a lead may assign it (a complete item is refused)
    queue_item_id = session.scalar(select(QueueItem.id).where(
        QueueItem.queue_id == queue.id, QueueItem.run_pk == unrated.id))
    return World(ws_a, ws_b, users, tokens, run, aiops, running, case, item, message_id,
                 aiops.steps[0].id, aiops.report.id, "call-a-1",
                 session.get(DiagnosisSession, aiops.diagnosis_session_id).session_id, make, session,
                 queue.id, queue_item_id)


# --------------------------------------------------------------------------- requests
# Each builder returns (request on A's object, the same request on a missing id or None).

def _item_form(w: World, **extra: Any) -> dict[str, Any]:
    w.session.rollback()
    item = w.session.get(TriageItem, w.item.id)
    return {"version": str(item.version), **extra}


def _next_state(w: World) -> str:
    w.session.rollback()
    current = w.session.get(TriageItem, w.item.id).state
    return triage_flow.TRANSITIONS[current][0]


def _case_version(w: World) -> str:
    w.session.rollback()
    return str(w.session.scalar(select(Case.version).where(Case.case_id == w.case.case_id)))


def _own_feedback(w: World, caller: str, subject: str) -> int:
    """A rating of citation ``subject`` by the caller (A members) or by reviewer_a
    (anyone else): the row the delete routes target."""
    author = w.users[caller] if caller in MEMBERS_A else w.users["reviewer_a"]
    w.session.rollback()
    existing = w.session.scalar(select(Feedback.id).where(
        Feedback.author_id == author.id, Feedback.target_type == "citation",
        Feedback.subject_key == subject))
    if existing:
        return existing
    w.session.rollback()  # SQLite: a read snapshot older than the server's writes cannot write
    return w.make.feedback_row(w.session.get(Run, w.run.id), author, target_type="citation",
                               target_id=w.message_id, subject_key=subject).id


def _queue_form(w: World, workspace_id: int) -> dict[str, Any]:
    """The queue form, filled in (a fresh name: a successful create uses it up)."""
    return {"workspace": str(workspace_id), "name": w.fresh("queue"), "kind": "chat",
            "sample_percent": "100", "reviewers_per_run": "1", "reservation_minutes": "10",
            "reviewers": "all", "assignment": "open"}


def _case_run(w: World, caller: str) -> int:
    """A run of A without a case (a successful create uses it up)."""
    w.session.rollback()
    return w.make.run(w.ws_a, w.fresh("case-run")).id


Builder = Callable[[World, str], tuple[Req, Req | None]]


def _disputed(w: World) -> int:
    """A run of A in a queue with two reviewers per run (a lead may decide it)."""
    from reviewapp.services import review_queues

    w.session.rollback()
    run = w.make.run(w.ws_a, w.fresh("disputed"))
    queue, _ = review_queues.create_queue(w.session, Actor.system_actor(), w.ws_a.id,
                                          w.fresh("pairs"), {"q": "no-run-matches-this"},
                                          reviewers_per_run=2)
    review_queues.add_runs(w.session, Actor.system_actor(), queue.id, [run.id])
    disputed_by_tie(w.session, w.make, w.ws_a, run)
    return run.id


def _get(path: Callable[[World, Any], str], missing: Any = MISSING) -> Builder:
    def build(w: World, caller: str) -> tuple[Req, Req | None]:
        return Req("GET", path(w, None)), (None if missing is None else Req("GET", path(w, missing)))
    return build


def _member_a(w: World) -> int:
    """A fresh reviewer of A only (a successful change uses it up)."""
    w.session.rollback()
    return w.make.user(w.ws_a, Role.REVIEWER, username=w.fresh("member")).id


def _outsider(w: World) -> str:
    w.session.rollback()
    return w.make.user(None, username=w.fresh("outsider")).username


def _token_a(w: World) -> int:
    w.session.rollback()
    return admin.create_token(w.session, Actor.system_actor(), w.ws_a.id, w.fresh("tok")).token.id


def _admin_post(path: Callable[[World, int], str], data: Callable[[World], dict[str, Any]] | None = None
                ) -> Builder:
    """A POST on workspace A (``path(w, workspace_id)``) and the same on a missing workspace."""
    def build(w: World, caller: str) -> tuple[Req, Req | None]:
        body = data(w) if data else {}
        return Req("POST", path(w, w.ws_a.id), body), Req("POST", path(w, MISSING), body)
    return build


def _settings_form(w: World) -> dict[str, Any]:
    """The settings page's form as shown now, with another time zone typed in."""
    w.session.rollback()
    view = admin.get_settings(w.session, Actor.system_actor(), w.ws_a.id)
    w.session.rollback()
    zone = ("UTC", "Europe/Berlin")[w.counter[0] % 2]
    w.fresh("settings")
    return {"version": str(view.version), **view.values, "time_zone": zone}


BUILDERS: dict[str, Builder] = {
    "admin.settings GET": _get(lambda w, m: f"/admin/{m or w.ws_a.id}/settings"),
    "admin.audit GET": _get(lambda w, m: f"/admin/{m or w.ws_a.id}/audit"),
    "admin.audit_export GET": _get(lambda w, m: f"/admin/{m or w.ws_a.id}/audit.csv"),
    "admin.create_workspace POST": lambda w, c: (Req("POST", "/admin/workspaces", {
        "slug": w.fresh("made-by"), "name": "Made in the matrix"}), None),
    "admin.rename_workspace POST": _admin_post(lambda w, ws: f"/admin/{ws}/rename",
                                               lambda w: {"name": f"Alpha {SECRET_A} {w.fresh('n')}"}),
    "admin.save_settings POST": _admin_post(lambda w, ws: f"/admin/{ws}/settings", _settings_form),
    "account.index GET": _get(lambda w, m: "/account/", None),
    "account.password POST": lambda w, c: (Req("POST", "/account/password", {
        "current_password": DEFAULT_PASSWORD, "new_password": "a-new-password-1",
        "confirm": "a-new-password-1"}), None),
    "admin.index GET": _get(lambda w, m: "/admin/", None),
    "admin.members GET": _get(lambda w, m: f"/admin/{m or w.ws_a.id}/members"),
    "admin.tokens GET": _get(lambda w, m: f"/admin/{m or w.ws_a.id}/tokens"),
    "admin.add_member POST": _admin_post(lambda w, ws: f"/admin/{ws}/members/add",
                                         lambda w: {"username": _outsider(w), "role": "reviewer"}),
    "admin.new_account POST": _admin_post(lambda w, ws: f"/admin/{ws}/members/new",
                                          lambda w: {"username": w.fresh("new"), "role": "lead"}),
    "admin.change_role POST": lambda w, c: (lambda uid: (
        Req("POST", f"/admin/{w.ws_a.id}/members/{uid}/role", {"role": "lead"}),
        Req("POST", f"/admin/{w.ws_a.id}/members/{MISSING}/role", {"role": "lead"})))(_member_a(w)),
    "admin.remove_member POST": lambda w, c: (lambda uid: (
        Req("POST", f"/admin/{w.ws_a.id}/members/{uid}/remove", {"confirm": "1"}),
        Req("POST", f"/admin/{w.ws_a.id}/members/{MISSING}/remove", {"confirm": "1"})))(_member_a(w)),
    "admin.confirm_remove_member GET": lambda w, c: (lambda uid: (
        Req("GET", f"/admin/{w.ws_a.id}/members/{uid}/remove"),
        Req("GET", f"/admin/{w.ws_a.id}/members/{MISSING}/remove")))(_member_a(w)),
    "admin.set_active POST": lambda w, c: (lambda uid: (
        Req("POST", f"/admin/{w.ws_a.id}/members/{uid}/active", {"active": "0", "confirm": "1"}),
        Req("POST", f"/admin/{w.ws_a.id}/members/{MISSING}/active", {"active": "0", "confirm": "1"})))(_member_a(w)),
    "admin.confirm_deactivate GET": lambda w, c: (lambda uid: (
        Req("GET", f"/admin/{w.ws_a.id}/members/{uid}/deactivate"),
        Req("GET", f"/admin/{w.ws_a.id}/members/{MISSING}/deactivate")))(_member_a(w)),
    "admin.reset_password POST": lambda w, c: (lambda uid: (
        Req("POST", f"/admin/{w.ws_a.id}/members/{uid}/password"),
        Req("POST", f"/admin/{w.ws_a.id}/members/{MISSING}/password")))(_member_a(w)),
    "admin.create_token POST": _admin_post(lambda w, ws: f"/admin/{ws}/tokens",
                                           lambda w: {"name": w.fresh("agent")}),
    "admin.revoke_token POST": lambda w, c: (lambda tid: (
        Req("POST", f"/admin/{w.ws_a.id}/tokens/{tid}/revoke", {"confirm": "1"}),
        Req("POST", f"/admin/{w.ws_a.id}/tokens/{MISSING}/revoke", {"confirm": "1"})))(_token_a(w)),
    "admin.confirm_revoke_token GET": lambda w, c: (lambda tid: (
        Req("GET", f"/admin/{w.ws_a.id}/tokens/{tid}/revoke"),
        Req("GET", f"/admin/{w.ws_a.id}/tokens/{MISSING}/revoke")))(_token_a(w)),
    "runs.index GET": _get(lambda w, m: "/", None),
    "runs.detail GET": _get(lambda w, m: f"/runs/{m or w.run.id}"),
    "runs.timeline GET": _get(lambda w, m: f"/runs/{m or w.run.id}/timeline"),
    "runs.by_id GET": _get(lambda w, m: f"/runs/by-id/{'run-missing' if m else w.run.run_id}"),
    "runs.tool_call GET": _get(lambda w, m: f"/runs/{m or w.run.id}/tool-calls/{w.call_id}"),
    "runs.timeline_calls GET": _get(lambda w, m: f"/runs/{m or w.run.id}/timeline/calls?after={w.call_id}"),
    "runs.verdict GET": _get(lambda w, m: f"/runs/{m or w.run.id}/verdict"),
    "adjudication.index GET": _get(lambda w, m: f"/adjudication/?workspace={m or w.ws_a.id}"),
    "adjudication.decide POST": lambda w, c: (
        Req("POST", f"/adjudication/runs/{_disputed(w)}/decide", {"verdict": "useful"}),
        Req("POST", f"/adjudication/runs/{MISSING}/decide", {"verdict": "useful"})),
    "queue.next_run GET": _get(lambda w, m: f"/queue?after={m or w.run.id}"),
    "queues.index GET": _get(lambda w, m: "/queues/", None),
    "queues.new GET": _get(lambda w, m: f"/queues/new?workspace={m or w.ws_a.id}", None),
    "queues.new POST": lambda w, c: tuple(Req("POST", "/queues/new", _queue_form(w, ws))
                                          for ws in (w.ws_a.id, MISSING)),
    "queues.detail GET": _get(lambda w, m: f"/queues/{m or w.queue_id}"),
    "queues.edit GET": _get(lambda w, m: f"/queues/{m or w.queue_id}/edit"),
    "queues.edit POST": lambda w, c: tuple(
        Req("POST", f"/queues/{q}/edit", {**_queue_form(w, w.ws_a.id), "name": f"Queue {SECRET_A}"})
        for q in (w.queue_id, MISSING)),
    "queues.remove POST": lambda w, c: tuple(
        Req("POST", f"/queues/{q}/items/{w.aiops.id}/remove", {"confirm": "1"})
        for q in (w.queue_id, MISSING)),
    "queues.confirm_remove GET": lambda w, c: tuple(
        Req("GET", f"/queues/{q}/items/{w.aiops.id}/remove") for q in (w.queue_id, MISSING)),
    "queues.assign POST": lambda w, c: tuple(
        Req("POST", f"/queues/{w.queue_id}/items/{i}/assign", {"assignees": ""})
        for i in (w.queue_item_id, MISSING)),
    "queues.add_runs POST": lambda w, c: tuple(
        Req("POST", "/queues/add-runs", {"queue": q, "runs": str(w.aiops.id), "next": "/"})
        for q in (w.queue_id, MISSING)),
    "queue_items.next_item POST": lambda w, c: tuple(
        Req("POST", "/queues/next", {"queue": q}) for q in (w.queue_id, MISSING)),
    "queue_items.renew POST": lambda w, c: tuple(
        Req("POST", f"/queues/items/{i}/renew") for i in (w.queue_item_id, MISSING)),
    "queue.progress GET": _get(lambda w, m: "/queue/progress", None),
    "cases.index GET": _get(lambda w, m: "/cases/", None),
    "cases.detail GET": _get(lambda w, m: f"/cases/{m or w.case.case_id}", MISSING_CASE),
    "cases.edit GET": _get(lambda w, m: f"/cases/{m or w.case.case_id}/edit", MISSING_CASE),
    "cases.edit POST": lambda w, c: (
        Req("POST", f"/cases/{w.case.case_id}/edit",
            {"version": _case_version(w), "title": f"Edited by {c}", "fault_category": "GENERAL"}),
        Req("POST", f"/cases/{MISSING_CASE}/edit",
            {"version": _case_version(w), "title": f"Edited by {c}", "fault_category": "GENERAL"})),
    "cases.new GET": lambda w, c: (Req("GET", f"/cases/new?run={_case_run(w, c)}"),
                                   Req("GET", f"/cases/new?run={MISSING}")),
    "cases.new POST": lambda w, c: (Req("POST", f"/cases/new?run={_case_run(w, c)}", {"title": "New"}),
                                    Req("POST", f"/cases/new?run={MISSING}", {"title": "New"})),
    "dashboard.index GET": _get(lambda w, m: f"/dashboard/?workspace={m or w.ws_a.id}"),
    "dashboard.agreement_page GET": _get(
        lambda w, m: f"/dashboard/agreement?workspace={m or w.ws_a.id}"),
    "dashboard.agreement_export GET": _get(
        lambda w, m: f"/dashboard/agreement.csv?workspace={m or w.ws_a.id}"),
    "dashboard.alignment_page GET": _get(
        lambda w, m: f"/dashboard/alignment?workspace={m or w.ws_a.id}"),
    "dashboard.alignment_export GET": _get(
        lambda w, m: f"/dashboard/alignment.csv?table=disagreements&workspace={m or w.ws_a.id}"),
    "exports.index GET": _get(lambda w, m: "/exports/", None),
    "exports.download GET": _get(lambda w, m: f"/exports/feedback.csv?workspace={m or w.ws_a.id}"),
    "feedback.rate POST": lambda w, c: tuple(
        Req("POST", "/feedback", {"target_type": "diagnostic_step", "target_id": target,
                                  "rating": "positive", "next": "/"})
        for target in (w.step_id, MISSING)),
    "feedback.delete POST": lambda w, c: (
        Req("POST", f"/feedback/{_own_feedback(w, c, 'c1')}/delete", {"next": "/"}),
        Req("POST", f"/feedback/{MISSING}/delete", {"next": "/"})),
    "auth.login GET": _get(lambda w, m: "/login", None),
    "auth.login POST": lambda w, c: (
        Req("POST", "/login", {"username": "login-probe", "password": DEFAULT_PASSWORD}), None),
    "auth.logout POST": lambda w, c: (Req("POST", "/logout"), None),
    "triage.index GET": _get(lambda w, m: f"/triage/?workspace={m or w.ws_a.id}"),
    "triage.detail GET": _get(lambda w, m: f"/triage/{m or w.item.id}"),
    "triage.assign POST": lambda w, c: tuple(
        Req("POST", f"/triage/{i}/assign", _item_form(w, assignee_id="", next="/triage/"))
        for i in (w.item.id, MISSING)),
    "triage.category POST": lambda w, c: tuple(
        Req("POST", f"/triage/{i}/category", _item_form(w, fault_category="RETRIEVAL_MISS"))
        for i in (w.item.id, MISSING)),
    "triage.note POST": lambda w, c: tuple(
        Req("POST", f"/triage/{i}/note", _item_form(w, note=f"note by {c}"))
        for i in (w.item.id, MISSING)),
    "triage.state POST": lambda w, c: tuple(
        Req("POST", f"/triage/{i}/state", _item_form(w, state=_next_state(w)))
        for i in (w.item.id, MISSING)),
    "triage.bulk POST": lambda w, c: tuple(
        Req("POST", "/triage/bulk", {"items": f"{i}:{_item_form(w)['version']}", "action": "assign",
                                     "assignee_id": "", "next": "/triage/"})
        for i in (w.item.id, MISSING)),
    # --- JSON API
    "api.health GET": _get(lambda w, m: "/api/health", None),
    "api.run_trace GET": _get(lambda w, m: f"/api/runs/{'run-missing' if m else w.run.run_id}/trace"),
    "api.run_verdict POST": lambda w, c: tuple(
        Req("POST", "/api/feedback", json={"sessionId": sid, "runId": rid, "feedback": "useful"})
        for sid, rid in ((w.aiops_session_id, w.aiops.run_id),
                         ("session-missing", "run-missing"))),
    "api.list_target_feedback GET": _get(lambda w, m: f"/api/feedback/targets?runPk={m or w.run.id}"),
    "api.upsert_target_feedback PUT": lambda w, c: tuple(
        Req("PUT", "/api/feedback/targets",
            json={"targetType": "diagnostic_report", "targetId": target, "rating": "positive"})
        for target in (w.report_id, MISSING)),
    "api.delete_target_feedback DELETE": lambda w, c: (
        Req("DELETE", f"/api/feedback/{_own_feedback(w, c, 'c2')}"),
        Req("DELETE", f"/api/feedback/{MISSING}")),
    "api.put_run PUT": lambda w, c: (
        Req("PUT", f"/api/ingest/runs/{w.fresh('ingested')}",
            json={"session_id": "s-ingest", "query": "q", "status": "RUNNING"}), None),
    "api.finish_run POST": lambda w, c: tuple(
        Req("POST", f"/api/ingest/runs/{rid}/finish", json={"status": "SUCCESS"})
        for rid in (w.running.run_id, "run-missing")),
    "api.set_run_outcome PATCH": lambda w, c: tuple(
        Req("PATCH", f"/api/ingest/runs/{rid}/outcome",
            json={"external_outcome": "pass", "external_outcome_detail": {"reward": 1}})
        for rid in (w.running.run_id, "run-missing")),
    "api.post_tool_events POST": lambda w, c: tuple(
        Req("POST", "/api/ingest/tool-events",
            json={"id": "call-probe", "run_id": rid, "event": "started", "tool_name": "logs"})
        for rid in (w.running.run_id, "run-missing")),
    # One trace id for every caller: A's token and B's token each make the run in their own
    # workspace (the test's end checks A's run is untouched).
    "otel.traces POST": lambda w, c: (Req("POST", "/v1/traces", json=_otlp_trace()), None),
    "otel_api.traces_under_api POST": lambda w, c: (
        Req("POST", "/api/otel/v1/traces", json=_otlp_trace()), None),
}


def _otlp_trace() -> dict[str, Any]:
    now = time.time_ns()
    return {"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331",
        "name": "invoke_agent probe", "startTimeUnixNano": str(now - 1000),
        "endTimeUnixNano": str(now)}]}]}]}


# --------------------------------------------------------------------------- expectations

def roles(*, anon: str, a: tuple[str, str, str], b: tuple[str, str, str],
          tokens: tuple[str, str]) -> dict[str, str]:
    """Expectations per caller: ``a`` / ``b`` are (reviewer, lead, admin)."""
    return {"anon": anon, **dict(zip(MEMBERS_A, a)), **dict(zip(MEMBERS_B, b)),
            "token_a": tokens[0], "token_b": tokens[1]}


def html(a: tuple[str, str, str], b: tuple[str, str, str]) -> dict[str, str]:
    """An HTML route: anonymous and token callers go to the login page."""
    return roles(anon=LOGIN, a=a, b=b, tokens=(LOGIN, LOGIN))


READ_A = (OK, OK, OK)
LEAD_A = (DENIED, OK, OK)
LEAD_POST_A = (DENIED, SEE_OTHER, SEE_OTHER)
ALL_HIDDEN = (HIDDEN, HIDDEN, HIDDEN)
SESSION_ONLY_TOKENS = (UNAUTH, UNAUTH)

ADMIN_A = (DENIED, DENIED, OK)
ADMIN_POST_A = (DENIED, DENIED, SEE_OTHER)

EXPECTED: dict[str, dict[str, str]] = {
    "account.index GET": html(READ_A, READ_A),
    "account.password POST": html((SEE_OTHER,) * 3, (SEE_OTHER,) * 3),
    # Admin pages: admins of the named workspace only; B's admin gets what a missing
    # workspace gets, and the index lists only the workspaces one administers.
    "admin.index GET": html(ADMIN_A, ADMIN_A),
    "admin.members GET": html(ADMIN_A, ALL_HIDDEN),
    "admin.tokens GET": html(ADMIN_A, ALL_HIDDEN),
    "admin.settings GET": html(ADMIN_A, ALL_HIDDEN),
    "admin.audit GET": html(ADMIN_A, ALL_HIDDEN),
    "admin.audit_export GET": html(ADMIN_A, ALL_HIDDEN),
    # Any admin may create a workspace (and becomes its admin); others may not.
    "admin.create_workspace POST": html(ADMIN_POST_A, ADMIN_POST_A),
    "admin.rename_workspace POST": html(ADMIN_POST_A, ALL_HIDDEN),
    "admin.save_settings POST": html(ADMIN_POST_A, ALL_HIDDEN),
    "admin.add_member POST": html(ADMIN_POST_A, ALL_HIDDEN),
    "admin.new_account POST": html(ADMIN_A, ALL_HIDDEN),  # 200: the one-time password
    "admin.change_role POST": html(ADMIN_POST_A, ALL_HIDDEN),
    "admin.remove_member POST": html(ADMIN_POST_A, ALL_HIDDEN),
    "admin.confirm_remove_member GET": html(ADMIN_A, ALL_HIDDEN),
    "admin.set_active POST": html(ADMIN_POST_A, ALL_HIDDEN),
    "admin.confirm_deactivate GET": html(ADMIN_A, ALL_HIDDEN),
    "admin.reset_password POST": html(ADMIN_A, ALL_HIDDEN),  # 200: the one-time password
    "admin.create_token POST": html(ADMIN_A, ALL_HIDDEN),  # 201: the secret on this answer
    "admin.revoke_token POST": html(ADMIN_POST_A, ALL_HIDDEN),
    "admin.confirm_revoke_token GET": html(ADMIN_A, ALL_HIDDEN),
    "runs.index GET": html(READ_A, (OK, OK, OK)),
    "runs.detail GET": html(READ_A, ALL_HIDDEN),
    "runs.timeline GET": html(READ_A, ALL_HIDDEN),
    # A redirect to the run's page for A's members; B gets the missing id's 403.
    "runs.by_id GET": html((SEE_OTHER,) * 3, ALL_HIDDEN),
    "runs.tool_call GET": html(READ_A, ALL_HIDDEN),
    # "Show the next" without htmx: A's members go to the run page showing the next calls.
    "runs.timeline_calls GET": html((SEE_OTHER,) * 3, ALL_HIDDEN),
    "runs.verdict GET": html(READ_A, ALL_HIDDEN),
    # Leads and admins of A; a reviewer is lead nowhere (403); B's leads get 403 for
    # A's workspace and A's run alike, as for missing ones.
    "adjudication.index GET": html(LEAD_A, (DENIED, HIDDEN, HIDDEN)),
    "adjudication.decide POST": html(LEAD_POST_A, ALL_HIDDEN),
    "queue.next_run GET": html((SEE_OTHER,) * 3, ALL_HIDDEN),
    "queue.progress GET": html(READ_A, (OK, OK, OK)),
    # Review queues (issue 16): leads of A set them up; every member of A reviews (an
    # open queue); B's members get what a missing queue / item gets.
    "queues.index GET": html(READ_A, READ_A),
    "queues.new GET": html(LEAD_A, (DENIED, OK, OK)),  # B's lead: a form for B only
    "queues.new POST": html(LEAD_POST_A, ALL_HIDDEN),
    "queues.detail GET": html(LEAD_A, ALL_HIDDEN),
    "queues.edit GET": html(LEAD_A, ALL_HIDDEN),
    "queues.edit POST": html(LEAD_POST_A, ALL_HIDDEN),
    "queues.remove POST": html(LEAD_POST_A, ALL_HIDDEN),
    "queues.confirm_remove GET": html(LEAD_A, ALL_HIDDEN),
    "queues.assign POST": html(LEAD_POST_A, ALL_HIDDEN),
    "queues.add_runs POST": html(LEAD_POST_A, ALL_HIDDEN),
    "queue_items.next_item POST": html((SEE_OTHER,) * 3, ALL_HIDDEN),
    "queue_items.renew POST": html(READ_A, ALL_HIDDEN),
    "cases.index GET": html(READ_A, (OK, OK, OK)),
    "cases.detail GET": html(READ_A, ALL_HIDDEN),
    "cases.edit GET": html(LEAD_A, ALL_HIDDEN),
    "cases.edit POST": html(LEAD_POST_A, ALL_HIDDEN),
    "cases.new GET": html(LEAD_A, ALL_HIDDEN),
    "cases.new POST": html(LEAD_POST_A, ALL_HIDDEN),
    # A filter naming a workspace one does not lead / administer is refused as a missing
    # one is, as on the triage list (400).
    "dashboard.index GET": html(LEAD_A, (DENIED, REFUSED, REFUSED)),
    "dashboard.agreement_page GET": html(LEAD_A, (DENIED, HIDDEN, HIDDEN)),
    "dashboard.agreement_export GET": html(LEAD_A, (DENIED, HIDDEN, HIDDEN)),
    "dashboard.alignment_page GET": html(LEAD_A, (DENIED, HIDDEN, HIDDEN)),
    "dashboard.alignment_export GET": html(LEAD_A, (DENIED, HIDDEN, HIDDEN)),
    "exports.index GET": html((DENIED, DENIED, OK), (DENIED, DENIED, OK)),
    "exports.download GET": html((DENIED, DENIED, OK), (DENIED, DENIED, REFUSED)),
    "feedback.rate POST": html((SEE_OTHER,) * 3, ALL_HIDDEN),
    "feedback.delete POST": html((SEE_OTHER,) * 3, ALL_HIDDEN),
    "auth.login GET": roles(anon=OK, a=(REDIRECT,) * 3, b=(REDIRECT,) * 3, tokens=(OK, OK)),
    "auth.login POST": roles(anon=SEE_OTHER, a=(REDIRECT,) * 3, b=(REDIRECT,) * 3,
                             tokens=(SEE_OTHER, SEE_OTHER)),
    "auth.logout POST": html((SEE_OTHER,) * 3, (SEE_OTHER,) * 3),
    # A filter naming a workspace one does not triage in is refused as a missing one is.
    "triage.index GET": html(LEAD_A, (DENIED, REFUSED, REFUSED)),
    "triage.detail GET": html(LEAD_A, ALL_HIDDEN),
    "triage.assign POST": html(LEAD_POST_A, ALL_HIDDEN),
    "triage.category POST": html(LEAD_POST_A, ALL_HIDDEN),
    "triage.note POST": html(LEAD_POST_A, ALL_HIDDEN),
    "triage.state POST": html(LEAD_POST_A, ALL_HIDDEN),
    # Reviewers are lead nowhere: 403. A lead of B gets 303 with a per-item outcome that
    # reads the same for A's item and a missing one (checked below).
    "triage.bulk POST": html(LEAD_POST_A, (DENIED, SEE_OTHER, SEE_OTHER)),
    "api.health GET": roles(anon=OK, a=READ_A, b=(OK, OK, OK), tokens=(OK, OK)),
    "api.run_trace GET": roles(anon=UNAUTH, a=READ_A, b=ALL_HIDDEN, tokens=(OK, HIDDEN)),
    "api.run_verdict POST": roles(anon=UNAUTH, a=READ_A, b=ALL_HIDDEN, tokens=(OK, HIDDEN)),
    "api.list_target_feedback GET": roles(anon=UNAUTH, a=READ_A, b=ALL_HIDDEN,
                                          tokens=SESSION_ONLY_TOKENS),
    "api.upsert_target_feedback PUT": roles(anon=UNAUTH, a=READ_A, b=ALL_HIDDEN,
                                            tokens=SESSION_ONLY_TOKENS),
    "api.delete_target_feedback DELETE": roles(anon=UNAUTH, a=READ_A, b=ALL_HIDDEN,
                                               tokens=SESSION_ONLY_TOKENS),
    # Ingest is for tokens only; a token writes only into its own workspace.
    "api.put_run PUT": roles(anon=UNAUTH, a=(UNAUTH,) * 3, b=(UNAUTH,) * 3, tokens=(OK, OK)),
    "api.finish_run POST": roles(anon=UNAUTH, a=(UNAUTH,) * 3, b=(UNAUTH,) * 3,
                                 tokens=(OK, HIDDEN)),
    "api.post_tool_events POST": roles(anon=UNAUTH, a=(UNAUTH,) * 3, b=(UNAUTH,) * 3,
                                       tokens=(OK, CONFLICT_HIDDEN)),
    "otel.traces POST": roles(anon=UNAUTH, a=(UNAUTH,) * 3, b=(UNAUTH,) * 3, tokens=(OK, OK)),
    "otel_api.traces_under_api POST": roles(anon=UNAUTH, a=(UNAUTH,) * 3, b=(UNAUTH,) * 3, tokens=(OK, OK)),
    "api.set_run_outcome PATCH": roles(anon=UNAUTH, a=(UNAUTH,) * 3, b=(UNAUTH,) * 3,
                                       tokens=(OK, HIDDEN)),
}


# Reads whose 2xx answer for an A caller must hold A's data (a check that hid everything
# from everyone would otherwise pass as "OK").
SHOWS_A = {"admin.audit GET", "admin.audit_export GET", "admin.index GET", "admin.members GET", "admin.settings GET", "admin.tokens GET", "runs.index GET", "runs.detail GET", "runs.tool_call GET", "cases.index GET",
           "cases.detail GET", "cases.edit GET", "queues.index GET", "queues.detail GET",
           "queues.edit GET", "triage.index GET", "triage.detail GET",
           "exports.download GET", "api.run_trace GET"}


def route_keys(app) -> set[str]:
    """``"<endpoint> <METHOD>"`` for every route but static files (HEAD / OPTIONS aside)."""
    return {f"{rule.endpoint} {method}"
            for rule in app.url_map.iter_rules() if rule.endpoint != "static"
            for method in rule.methods - {"HEAD", "OPTIONS"}}


# --------------------------------------------------------------------------- running

class Callers:
    """One test client per caller; logged-in users stay logged in for the whole walk."""

    def __init__(self, app, world: World) -> None:
        self.app, self.world = app, world
        self.clients: dict[str, Any] = {}
        for name in CALLERS:
            client = app.test_client()
            if name in world.users:
                _log_in(client, world.users[name].username)
            self.clients[name] = client

    def headers(self, caller: str) -> dict[str, str]:
        if caller.startswith("token_"):
            return {"Authorization": f"Bearer {self.world.tokens[caller]}"}
        return {}

    def send(self, caller: str, req: Req, client: Any = None):
        client = client or self.clients[caller]
        with client.session_transaction() as s:  # a flash from an earlier cell would show
            s.pop("_flashes", None)
        kwargs: dict[str, Any] = {"headers": self.headers(caller)}
        if req.json is not None:
            kwargs["json"] = req.json
        elif req.data is not None:
            kwargs["data"] = req.data
        return client.open(req.url, method=req.method, **kwargs)


def _log_in(client, username: str) -> None:
    response = client.post("/login", data={"username": username, "password": DEFAULT_PASSWORD})
    assert response.status_code == 303, (username, response.status_code)


def _throwaway(app, world: World, caller: str):
    """A separate client for the login / logout / password cells, so the caller's own
    session lives on: logout and a password change end every session of their user, so a
    logged-in caller acts as a new user holding the same role in the same workspace."""
    client = app.test_client()
    if caller in world.users:
        original = world.users[caller]
        world.session.rollback()
        membership = world.session.scalar(select(Membership).where(Membership.user_id == original.id))
        workspace = world.session.get(type(world.ws_a), membership.workspace_id)
        role = membership.role
        world.session.rollback()
        twin = world.make.user(workspace, role, username=world.fresh(f"twin-{caller}"))
        _log_in(client, twin.username)
    return client


def _check(cell: str, expected: str, response, missing_response, world: World) -> str | None:
    """``None`` when the response matches ``expected``, else what went wrong."""
    status = response.status_code
    body = response.get_data()
    location = response.headers.get("Location", "")
    problems = []
    if expected == OK and not 200 <= status < 300:
        problems.append(f"expected 2xx, got {status}")
    elif expected == SEE_OTHER and status != 303:
        problems.append(f"expected 303, got {status}")
    elif expected == REDIRECT and status not in (302, 303):
        problems.append(f"expected a redirect, got {status}")
    elif expected == LOGIN and not (status == 303 and location.startswith("/login")):
        problems.append(f"expected 303 to /login, got {status} {location}")
    elif expected == UNAUTH and not (status == 401 and b"AUTH_UNAUTHENTICATED" in body):
        problems.append(f"expected 401 AUTH_UNAUTHENTICATED, got {status} {body[:120]!r}")
    elif expected == DENIED and not (status == 403 and b"AUTH_FORBIDDEN" in body
                                     or status == 403 and b"Auth Forbidden" in body):
        problems.append(f"expected 403 AUTH_FORBIDDEN, got {status} {body[:120]!r}")
    elif expected == DENIED and missing_response is not None \
            and (missing_response.status_code, missing_response.get_data()) != (status, body):
        problems.append("the role's 403 differs from the missing id's answer")
    elif expected in (HIDDEN, CONFLICT_HIDDEN):
        want = 403 if expected == HIDDEN else 409
        if status != want:
            problems.append(f"expected {want} like a missing id, got {status} {body[:160]!r}")
        elif missing_response is None:
            problems.append("no missing-id request to compare with")
        elif (missing_response.status_code, missing_response.get_data()) != (status, body):
            problems.append(f"differs from the missing id's answer ({missing_response.status_code})")
    elif expected == REFUSED:
        if status != 400:
            problems.append(f"expected 400 like a missing workspace, got {status} {body[:160]!r}")
        elif missing_response is None:
            problems.append("no missing-id request to compare with")
        elif (missing_response.status_code, missing_response.get_data().replace(
                str(MISSING).encode(), str(world.ws_a.id).encode())) != (status, body):
            problems.append(f"differs from the missing workspace's answer ({missing_response.status_code})")
    key, caller = cell.rsplit(" ", 1)
    if caller.endswith("_b") and SECRET_A.encode() in body:
        problems.append("shows workspace A's data to a caller of B")
    if expected == OK and key in SHOWS_A and caller.endswith("_a") and SECRET_A.encode() not in body:
        problems.append("answers 2xx without A's data")
    return "; ".join(problems) or None


def test_access_matrix(app_factory, make, session, monkeypatch, record_property):
    """Every route × every caller against workspace A's objects (SPEC 2)."""
    # The requests go to a second app on the same database: no app context is shared
    # with the test (Flask-Login and Flask-WTF cache the user and the token in ``g``).
    app = app_factory()
    # CSRF tokens embed a timestamp; freeze it so two pages can be compared byte for byte.
    from itsdangerous import timed

    frozen = int(time.time())
    monkeypatch.setattr(timed.TimestampSigner, "get_timestamp", lambda self: frozen)
    world = _build_world(make, session)
    make.user(None, username="login-probe")
    assert set(EXPECTED) == route_keys(app), (
        f"routes without an expectation: {sorted(route_keys(app) - set(EXPECTED))}; "
        f"stale entries: {sorted(set(EXPECTED) - route_keys(app))}")
    assert set(BUILDERS) == set(EXPECTED)
    callers = Callers(app, world)
    a_run_before = _run_state(session, world.run.id)

    failures: list[str] = []
    cells = 0
    started = time.monotonic()
    for key in sorted(EXPECTED):
        for caller in CALLERS:
            expected = EXPECTED[key][caller]
            req, missing = BUILDERS[key](world, caller)
            client = _throwaway(app, world, caller) \
                if key.startswith("auth.log") or key == "account.password POST" else None
            response = callers.send(caller, req, client)
            missing_response = None
            if expected in (HIDDEN, CONFLICT_HIDDEN, DENIED, REFUSED) and missing is not None:
                missing_response = callers.send(caller, missing, client)
            problem = _check(f"{key} {caller}", expected, response, missing_response, world)
            if key == "triage.bulk POST" and caller in ("lead_b", "admin_b") and problem is None:
                problem = _bulk_reads_like_missing(callers, caller, req, missing, world)
            cells += 1
            if problem:
                failures.append(f"{key} as {caller}: {problem}")
    elapsed = time.monotonic() - started

    # Nobody of B changed A's run (B's token writes into B only).
    assert _run_state(session, world.run.id) == a_run_before
    ingested = session.execute(select(Run.workspace_id, Run.run_id)
                               .where(Run.run_id.like("ingested-%"))).all()
    assert sorted(ws for ws, _ in ingested) == sorted([world.ws_a.id, world.ws_b.id])
    traced = session.execute(select(Run.workspace_id).where(
        Run.run_id == "0af7651916cd43dd8448eb211c80319c")).scalars().all()
    assert sorted(traced) == sorted([world.ws_a.id, world.ws_b.id])  # one run per workspace

    print(f"access matrix: {cells} cells ({len(EXPECTED)} routes × {len(CALLERS)} callers) "
          f"in {elapsed:.1f} s")
    record_property("access_matrix_cells", cells)
    record_property("access_matrix_routes", len(EXPECTED))
    assert cells == len(EXPECTED) * len(CALLERS)
    assert not failures, "\n".join(failures)


def _run_state(session, run_pk: int) -> tuple:
    session.rollback()
    run = session.get(Run, run_pk)
    return (run.query, run.answer, run.status, run.tool_call_count,
            sorted(session.execute(select(ToolCall.id, ToolCall.status)
                                   .where(ToolCall.run_pk == run_pk)).all()))


def _bulk_reads_like_missing(callers: Callers, caller: str, req: Req, missing: Req,
                             world: World) -> str | None:
    """The bulk outcome for A's item and for a missing item read the same (item id aside),
    and A's item did not change."""
    before = _item_form(world)["version"]
    pages = []
    for r, item_id in ((req, world.item.id), (missing, MISSING)):
        response = callers.send(caller, r)
        page = callers.clients[caller].get(response.headers["Location"]).get_data(as_text=True)
        flash = page.split('id="messages"', 1)[1].split("</div>", 2)[1]
        pages.append(flash.replace(str(item_id), "ID"))
    if _item_form(world)["version"] != before:
        return "a lead of B changed A's item through bulk"
    if pages[0] != pages[1]:
        return f"bulk outcome differs for A's item and a missing one: {pages}"
    return None


def test_access_matrix_of_the_tool_call_and_turn_targets(app_factory, make, session, monkeypatch):
    """Issue 19: rating a tool call or a conversation turn through the thumbs form and
    the JSON API, by every caller, reads as the route's row of ``EXPECTED`` says; B's
    answer for A's target is byte for byte the answer for a missing one."""
    app = app_factory()
    from itsdangerous import timed

    frozen = int(time.time())
    monkeypatch.setattr(timed.TimestampSigner, "get_timestamp", lambda self: frozen)
    world = _build_world(make, session)
    run = chat_run_with_turns(make, world.ws_a)
    turn_id = turn_of(run).id
    targets = {"tool_call": ((run.id, CALL_ID), (MISSING, CALL_ID)),
               "conversation_turn": ((turn_id, None), (MISSING, None))}
    callers = Callers(app, world)
    failures = []
    for target_type, pair in targets.items():
        form = [Req("POST", "/feedback", {"target_type": target_type, "target_id": tid,
                                          "subject_id": sid or "", "rating": "negative",
                                          "next": "/"}) for tid, sid in pair]
        api = [Req("PUT", "/api/feedback/targets",
                   json={"targetType": target_type, "targetId": tid, "subjectId": sid,
                         "rating": "negative"}) for tid, sid in pair]
        for key, (req, missing) in (("feedback.rate POST", form),
                                    ("api.upsert_target_feedback PUT", api)):
            for caller in CALLERS:
                expected = EXPECTED[key][caller]
                response = callers.send(caller, req)
                missing_response = (callers.send(caller, missing)
                                    if expected in (HIDDEN, DENIED) else None)
                problem = _check(f"{key} {caller}", expected, response, missing_response, world)
                if problem:
                    failures.append(f"{target_type} {key} as {caller}: {problem}")
    assert not failures, "\n".join(failures)
    session.rollback()
    rated = session.execute(select(Feedback.target_type, Feedback.author_id)
                            .where(Feedback.run_pk == run.id)).all()
    assert sorted(rated) == sorted((t, world.users[c].id) for t in targets for c in MEMBERS_A)


BLIND_MARKER = "blind-only-marker-41c9"  # in other reviewers' judgement of the blind run


def test_access_matrix_of_blind_review(app_factory, make, session):
    """Issue 16 "Blind review": a run in a blind queue, rated by reviewer_a (comment and
    case carry ``BLIND_MARKER``). A second reviewer of A who has not rated its answer gets
    no page, fragment or API answer showing the marker or the verdict; leads and admins of
    A always see it; once the reviewer rated the answer, they see it too. Each route that
    shows a run's judgement to a reviewer is walked."""
    from reviewapp.services import review_queues

    app = app_factory()
    world = _build_world(make, session)
    run = world.run
    make.feedback_row(run, world.users["reviewer_a"], rating="positive", target_type="citation",
                      subject_key="c1", comment=BLIND_MARKER)
    session.get(Run, run.id).feedback = "useful"
    world.case.title = f"Case {BLIND_MARKER}"
    session.commit()
    queue, _ = review_queues.create_queue(session, Actor.system_actor(), world.ws_a.id,
                                          "Blind", {"q": "never-matches-anything"}, blind=True)
    review_queues.add_runs(session, Actor.system_actor(), queue.id, [run.id])
    make.user(world.ws_a, Role.REVIEWER, username="reviewer-blind")
    reads = {
        "runs.detail": f"/runs/{run.id}",
        "runs.verdict": f"/runs/{run.id}/verdict",
        "runs.timeline": f"/runs/{run.id}/timeline",
        "runs.index": "/",
        "runs.index (verdict filter)": "/?feedback=useful",
        "cases.index": "/cases",
        "api.run_trace": f"/api/runs/{run.run_id}/trace",
    }
    case_url = f"/cases/{world.case.case_id}"

    def client_for(username):
        client = app.test_client()
        _log_in(client, username)
        return client

    failures = []
    blind_client = client_for("reviewer-blind")
    for name, url in reads.items():
        body = blind_client.get(url).get_data(as_text=True)
        for leak in (BLIND_MARKER, "✓ Useful", "✓ useful", '"verdict": "useful"',
                     '"verdict":"useful"', world.case.case_id, "reviewer-a"):
            if leak in body:
                failures.append(f"{name} shows {leak!r} to a blind reviewer")
    if blind_client.get(case_url).status_code != 403:
        failures.append("the blind run's case page answers the blind reviewer")
    for caller in ("lead_a", "admin_a"):
        client = client_for(world.users[caller].username)
        if BLIND_MARKER not in client.get(reads["api.run_trace"]).get_data(as_text=True):
            failures.append(f"the trace hides the other reviewer's comment from {caller}")
        page = client.get(reads["runs.detail"]).get_data(as_text=True)
        if "reviewer-a" not in page or world.case.case_id not in page:
            failures.append(f"the run page hides the ratings or the case from {caller}")
    assert not failures, "\n".join(failures)

    # Once the reviewer has rated the answer, the same reads show everything.
    rated = blind_client.put("/api/feedback/targets", json={
        "targetType": "chat_message", "targetId": world.message_id, "rating": "negative"})
    assert rated.status_code == 200, rated.get_data(as_text=True)
    assert BLIND_MARKER in blind_client.get(reads["api.run_trace"]).get_data(as_text=True)
    assert "reviewer-a" in blind_client.get(f"/runs/{run.id}").get_data(as_text=True)
    assert "Blind review" not in blind_client.get(reads["runs.verdict"]).get_data(as_text=True)
