"""CSRF on every state-changing route, with CSRF enabled as in production (SPEC 10,
STYLE 4.8).

The routes come from the URL map: every non-GET HTML route, plus the ``/api`` routes a
login session may call (``reviewapp/api/auth.session_actor`` checks the ``X-CSRFToken``
header there). Every other state-changing ``/api`` route must refuse a login session
outright (token only), which is checked too, so the two lists together cover the map.

For each route: a form POST without a token, with another session's token, and an htmx
request without / with another session's header token are refused (HTML: 400
``CSRF_INVALID``; API: 401 naming the header) and leave every table of the database as
it was; the right token — as a form field and as the htmx header — is accepted and the
request does its work.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import html5lib
import pytest
from sqlalchemy import select

from reviewapp.actors import Actor, Role
from reviewapp.domain import triage_flow
from reviewapp.extensions import db
from reviewapp.models import Case, Feedback, TriageItem
from reviewapp.services import admin

from ..factories import DEFAULT_PASSWORD
from ..services.feedback.helpers import CALL_ID, chat_run_with_turns, disputed_by_tie, turn_of

SAFE = {"GET", "HEAD", "OPTIONS"}
# The /api routes that accept the login session (the rest need an ingest token).
SESSION_API = {"api.run_verdict POST", "api.upsert_target_feedback PUT",
               "api.delete_target_feedback DELETE"}
# Machine routes outside /api: OTLP's standard path (token-only, like ingest).
OUTSIDE_API = {"/v1/traces"}
_n = itertools.count(1)
_subjects = itertools.count(0)


def state_changing_routes(app) -> tuple[set[str], set[str]]:
    """(HTML routes, /api routes) as ``"<endpoint> <METHOD>"`` for every non-GET method."""
    html_routes, api_routes = set(), set()
    for rule in app.url_map.iter_rules():
        for method in rule.methods - SAFE:
            key = f"{rule.endpoint} {method}"
            machine = rule.rule.startswith("/api/") or rule.rule in OUTSIDE_API
            (api_routes if machine else html_routes).add(key)
    return html_routes, api_routes


def page_token(client, path: str = "/") -> str:
    """The CSRF token the page at ``path`` gives this client: the ``<body hx-headers>``
    value htmx sends (``static/js`` has no other source), or the login form's field."""
    doc = html5lib.parse(client.get(path).get_data(as_text=True), namespaceHTMLElements=False)
    body = doc.find("body")
    if body is not None and body.get("hx-headers"):
        return json.loads(body.get("hx-headers"))["X-CSRFToken"]
    field = next(el for el in doc.iter("input") if el.get("name") == "csrf_token")
    return field.get("value")


def snapshot() -> dict[str, list[tuple]]:
    """Every row of every table, to prove a refused request changed nothing."""
    db.session.rollback()
    out = {}
    for table in db.metadata.sorted_tables:
        rows = db.session.execute(select(table)).all()
        out[table.name] = sorted(tuple(map(repr, row)) for row in rows)
    db.session.rollback()
    return out


class Site:
    """Workspace, users, a run with steps / report / citations, a case, a triage item."""

    def __init__(self, make, session) -> None:
        self.make, self.session = make, session
        self.ws = make.workspace()
        self.admin = make.user(self.ws, Role.ADMIN, username="csrf-admin")
        self.attacker = make.user(self.ws, Role.REVIEWER, username="csrf-attacker")
        self.run = make.aiops_run(self.ws, messages=[
            {"id": "a1", "role": "assistant", "content": "x",
             "metadata": {"citations": [{"id": f"c{i}", "title": "t"} for i in range(40)]}}])
        self.message_id = self.run.messages[0].id
        self.step_id = self.run.steps[0].id
        self.report_id = self.run.report.id
        self.case = make.case(self.ws, run=self.run)
        self.item = make.triage_item(self.run)
        from reviewapp.models import DiagnosisSession

        self.session_id = session.get(DiagnosisSession, self.run.diagnosis_session_id).session_id
        self.token = admin.create_token(session, Actor.system_actor(), self.ws.id, "agent").secret

    def fresh(self) -> int:
        return next(_n)

    def item_version(self) -> str:
        self.session.rollback()
        return str(self.session.get(TriageItem, self.item.id).version)

    def next_state(self) -> str:
        self.session.rollback()
        return triage_flow.TRANSITIONS[self.session.get(TriageItem, self.item.id).state][0]

    def case_version(self) -> str:
        self.session.rollback()
        return str(self.session.scalar(select(Case.version).where(Case.case_id == self.case.case_id)))

    def own_feedback(self) -> int:
        self.session.rollback()
        n = next(_subjects)
        return self.make.feedback_row(self.session.get(type(self.run), self.run.id), self.admin,
                                      target_type="citation", target_id=self.message_id,
                                      subject_key=f"c{n}", rating="positive").id

    def member(self) -> int:
        """A fresh reviewer of the workspace (a successful admin change uses it up)."""
        self.session.rollback()
        return self.make.user(self.ws, Role.REVIEWER, username=f"member-{self.fresh()}").id

    def outsider(self) -> str:
        self.session.rollback()
        return self.make.user(None, username=f"outsider-{self.fresh()}").username

    def token_id(self) -> int:
        self.session.rollback()
        return admin.create_token(self.session, Actor.system_actor(), self.ws.id,
                                  f"tok-{self.fresh()}").token.id

    def settings_form(self) -> dict[str, Any]:
        """The settings form as shown now, with the other of two time zones typed in."""
        self.session.rollback()
        view = admin.get_settings(self.session, Actor.system_actor(), self.ws.id)
        self.session.rollback()
        zone = "Europe/Berlin" if view.values["time_zone"] == "UTC" else "UTC"
        return {"version": str(view.version), **view.values, "time_zone": zone}

    def new_run(self) -> int:
        self.session.rollback()
        return self.make.run(self.ws).id

    def multi_reviewer_run(self) -> int:
        """A fresh run in a queue with two reviewers per run (a lead may decide it)."""
        from reviewapp.services import review_queues

        self.session.rollback()
        run = self.make.run(self.ws)
        queue, _ = review_queues.create_queue(
            self.session, Actor.system_actor(), self.ws.id, f"pairs-{self.fresh()}",
            {"q": "no-run-matches-this"}, reviewers_per_run=2)
        review_queues.add_runs(self.session, Actor.system_actor(), queue.id, [run.id])
        disputed_by_tie(self.session, self.make, self.ws, run)
        return run.id

    # Review queues (issue 16): one queue whose rule takes no new run (runs enter by hand).
    def queue(self) -> int:
        from reviewapp.services import review_queues

        self.session.rollback()
        if not hasattr(self, "_queue_id"):
            queue, _ = review_queues.create_queue(self.session, Actor.system_actor(), self.ws.id,
                                                  "CSRF queue", {"status": "FAILED"})
            self._queue_id = queue.id
        return self._queue_id

    def queued_run(self) -> int:
        """A new run, added to the queue by hand; returns its id."""
        from reviewapp.services import review_queues

        pk = self.new_run()
        review_queues.add_runs(self.session, Actor.system_actor(), self.queue(), [pk])
        return pk

    def queue_item(self, *, held: bool = False) -> int:
        """An item of the queue (the admin holds it when ``held``: a live reservation, so
        Skip, which is only the holder's, takes effect)."""
        from reviewapp.models import QueueItem
        from reviewapp.services import review_queues

        pk = self.queued_run()
        item_id = self.session.scalar(select(QueueItem.id).where(QueueItem.run_pk == pk))
        if held:
            self.session.execute(db.update(QueueItem).where(QueueItem.id == item_id).values(
                reserved_by=self.admin.id,
                reserved_until=review_queues.utcnow() + timedelta(minutes=10)))
            self.session.commit()
        return item_id

    def queue_form(self) -> dict[str, Any]:
        return {"workspace": str(self.ws.id), "name": f"Queue {self.fresh()}",
                "status": "FAILED", "sample_percent": "100", "reviewers_per_run": "1",
                "reservation_minutes": "10", "reviewers": "all", "assignment": "open"}


# (method, url, form data or JSON body) of a valid request by the admin; built fresh
# each time because a successful one uses its target up (versions, deleted rows ...).
Request = tuple[str, str, dict[str, Any]]
BUILDERS: dict[str, Callable[[Site], Request]] = {
    "account.password POST": lambda s: ("POST", "/account/password", {
        "current_password": DEFAULT_PASSWORD, "new_password": "another-pass-1",
        "confirm": "another-pass-1"}),
    "adjudication.decide POST": lambda s: ("POST", f"/adjudication/runs/{s.multi_reviewer_run()}/decide",
                                           {"verdict": "not_useful", "note": "decided"}),
    "admin.add_member POST": lambda s: ("POST", f"/admin/{s.ws.id}/members/add", {
        "username": s.outsider(), "role": "reviewer"}),
    "admin.new_account POST": lambda s: ("POST", f"/admin/{s.ws.id}/members/new", {
        "username": f"new-{s.fresh()}", "role": "reviewer"}),
    "admin.change_role POST": lambda s: ("POST", f"/admin/{s.ws.id}/members/{s.member()}/role",
                                         {"role": "lead"}),
    "admin.remove_member POST": lambda s: ("POST", f"/admin/{s.ws.id}/members/{s.member()}/remove",
                                          {"confirm": "1"}),
    "admin.set_active POST": lambda s: ("POST", f"/admin/{s.ws.id}/members/{s.member()}/active",
                                        {"active": "0", "confirm": "1"}),
    "admin.reset_password POST": lambda s: ("POST", f"/admin/{s.ws.id}/members/{s.member()}/password", {}),
    "admin.save_settings POST": lambda s: ("POST", f"/admin/{s.ws.id}/settings", s.settings_form()),
    "admin.create_workspace POST": lambda s: ("POST", "/admin/workspaces", {
        "slug": f"csrf-ws-{s.fresh()}", "name": "Made"}),
    "admin.rename_workspace POST": lambda s: ("POST", f"/admin/{s.ws.id}/rename", {"name": f"Name {s.fresh()}"}),
    "admin.create_token POST": lambda s: ("POST", f"/admin/{s.ws.id}/tokens", {"name": f"t-{s.fresh()}"}),
    "admin.revoke_token POST": lambda s: ("POST", f"/admin/{s.ws.id}/tokens/{s.token_id()}/revoke",
                                          {"confirm": "1"}),
    "auth.login POST": lambda s: ("POST", "/login", {"username": s.admin.username,
                                                     "password": DEFAULT_PASSWORD}),
    "auth.logout POST": lambda s: ("POST", "/logout", {}),
    "cases.edit POST": lambda s: ("POST", f"/cases/{s.case.case_id}/edit", {
        "version": s.case_version(), "title": f"Title {s.fresh()}", "fault_category": "GENERAL"}),
    "cases.new POST": lambda s: ("POST", f"/cases/new?run={s.new_run()}", {"title": "New case"}),
    "feedback.rate POST": lambda s: ("POST", "/feedback", {
        "target_type": "diagnostic_step", "target_id": s.step_id, "rating": "negative",
        "comment": f"comment {s.fresh()}", "next": "/"}),
    "feedback.delete POST": lambda s: ("POST", f"/feedback/{s.own_feedback()}/delete", {"next": "/"}),
    "queues.new POST": lambda s: ("POST", "/queues/new", s.queue_form()),
    "queues.edit POST": lambda s: ("POST", f"/queues/{s.queue()}/edit", s.queue_form()),
    "queues.remove POST": lambda s: ("POST", f"/queues/{s.queue()}/items/{s.queued_run()}/remove",
                                     {"confirm": "1"}),
    "queues.assign POST": lambda s: ("POST", f"/queues/{s.queue()}/items/{s.queue_item()}/assign",
                                     {"assignees": str(s.admin.id)}),
    "queues.add_runs POST": lambda s: ("POST", "/queues/add-runs", {
        "queue": str(s.queue()), "runs": str(s.new_run()), "next": "/"}),
    "queue_items.next_item POST": lambda s: ("POST", "/queues/next", {
        "queue": str(s.queue()), "skip": str(s.queue_item(held=True))}),
    "queue_items.renew POST": lambda s: ("POST", f"/queues/items/{s.queue_item(held=True)}/renew", {}),
    "triage.assign POST": lambda s: ("POST", f"/triage/{s.item.id}/assign", {
        "version": s.item_version(), "assignee_id": str(s.admin.id) if s.fresh() % 2 else ""}),
    "triage.category POST": lambda s: ("POST", f"/triage/{s.item.id}/category", {
        "version": s.item_version(),
        "fault_category": ("RETRIEVAL_MISS", "TOOL_FAILURE")[s.fresh() % 2]}),
    "triage.note POST": lambda s: ("POST", f"/triage/{s.item.id}/note", {
        "version": s.item_version(), "note": f"note {s.fresh()}"}),
    "triage.state POST": lambda s: ("POST", f"/triage/{s.item.id}/state", {
        "version": s.item_version(), "state": s.next_state()}),
    "triage.bulk POST": lambda s: ("POST", "/triage/bulk", {
        "items": f"{s.item.id}:{s.item_version()}", "action": "move", "state": s.next_state()}),
    "api.run_verdict POST": lambda s: ("POST", "/api/feedback", {
        "sessionId": s.session_id, "runId": s.run.run_id,
        "feedback": "useful" if s.fresh() % 2 else "not_useful"}),
    "api.upsert_target_feedback PUT": lambda s: ("PUT", "/api/feedback/targets", {
        "targetType": "diagnostic_report", "targetId": s.report_id, "rating": "negative",
        "comment": f"comment {s.fresh()}"}),
    "api.delete_target_feedback DELETE": lambda s: ("DELETE", f"/api/feedback/{s.own_feedback()}", {}),
}


@pytest.fixture
def site(make, session) -> Site:
    return Site(make, session)


@pytest.fixture
def csrf_app(app_factory):
    return app_factory(WTF_CSRF_ENABLED=True)


def _logged_in(app, user) -> Any:
    client = app.test_client()
    token = page_token(client, "/login")
    response = client.post("/login", data={"username": user.username, "password": DEFAULT_PASSWORD,
                                           "csrf_token": token})
    assert response.status_code == 303
    return client


def _send(client, key: str, req: Request, *, field: str | None = None,
          header: str | None = None, htmx: bool = False):
    method, url, data = req
    headers = {"HX-Request": "true"} if htmx else {}
    if header is not None:
        headers["X-CSRFToken"] = header
    if key.startswith("api."):
        return client.open(url, method=method, json=data or None, headers=headers)
    form = dict(data)
    if field is not None:
        form["csrf_token"] = field
    return client.open(url, method=method, data=form, headers=headers)


def _client_for(app, site: Site, key: str):
    """The admin's client; anonymous for the login form (logout gets its own session); a
    fresh user's for the password change (it ends the user's other sessions and changes
    the password every later login would need)."""
    if key == "auth.login POST":
        return app.test_client()
    if key == "account.password POST":
        site.session.rollback()
        return _logged_in(app, site.make.user(site.ws, Role.REVIEWER, username=f"pw-{site.fresh()}"))
    return _logged_in(app, site.admin)


def _refused(key: str, response) -> str | None:
    body = response.get_data(as_text=True)
    if key.startswith("api."):
        ok = response.status_code in (400, 401, 403) and "X-CSRFToken" in body
    else:
        ok = response.status_code == 400 and "CSRF" in body
    return None if ok else f"{response.status_code} {body[:200]!r}"


def test_route_lists_cover_the_url_map(app):
    html_routes, api_routes = state_changing_routes(app)
    assert set(BUILDERS) == html_routes | SESSION_API
    assert SESSION_API <= api_routes
    # What is left under /api is ingest: token-only (checked below).
    assert api_routes - SESSION_API == {"api.put_run PUT", "api.finish_run POST",
                                        "api.post_tool_events POST", "otel_api.traces_under_api POST",
                                        "otel.traces POST", "api.set_run_outcome PATCH"}


def test_every_state_changing_route_refuses_missing_and_foreign_tokens(csrf_app, site, record_property):
    """No token, another session's token (form field or htmx header), htmx without the
    header: refused, visibly, and the database is byte for byte unchanged (SPEC 10)."""
    attacker = _logged_in(csrf_app, site.attacker)
    foreign = page_token(attacker)
    failures = []
    checked = 0
    for key in sorted(BUILDERS):
        client = _client_for(csrf_app, site, key)
        mine = page_token(client, "/login" if key == "auth.login POST" else "/")
        assert mine != foreign
        attempts = {
            "form without token": {},
            "form with another session's token": dict(field=foreign),
            "htmx without header": dict(htmx=True),
            "htmx with another session's header": dict(htmx=True, header=foreign),
        }
        for label, options in attempts.items():
            req = BUILDERS[key](site)
            before = snapshot()
            response = _send(client, key, req, **options)
            problem = _refused(key, response)
            if problem:
                failures.append(f"{key}, {label}: not refused: {problem}")
            elif snapshot() != before:
                failures.append(f"{key}, {label}: refused but the database changed")
            if options.get("htmx") and not key.startswith("api.") and not problem:
                if response.headers.get("HX-Retarget") != "#messages":
                    failures.append(f"{key}, {label}: htmx error not sent to #messages")
            checked += 1
    print(f"csrf: {len(BUILDERS)} routes, {checked} refused attempts")
    record_property("csrf_routes", len(BUILDERS))
    assert not failures, "\n".join(failures)


def test_every_state_changing_route_accepts_the_right_token(csrf_app, site):
    """The page's own token works as the form field and as the htmx header, and the
    request does its work (the database changes)."""
    failures = []
    for key in sorted(BUILDERS):
        variants = [dict(htmx=True)] if key.startswith("api.") else [{}, dict(htmx=True)]
        for options in variants:
            client = _client_for(csrf_app, site, key)
            mine = page_token(client, "/login" if key == "auth.login POST" else "/")
            if options.get("htmx"):
                options = {**options, "header": mine}
            else:
                options = {**options, "field": mine}
            req = BUILDERS[key](site)
            before = snapshot()
            response = _send(client, key, req, **options)
            if response.status_code not in (200, 201, 204, 303):  # 201: a new token
                failures.append(f"{key} {options}: {response.status_code} "
                                f"{response.get_data(as_text=True)[:200]!r}")
            elif key in ("auth.login POST", "auth.logout POST"):
                logged_in = client.get("/").status_code == 200
                if logged_in != (key == "auth.login POST"):
                    failures.append(f"{key} {options}: did not take effect")
            elif snapshot() == before:
                failures.append(f"{key} {options}: accepted but nothing changed")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("key", ["api.put_run PUT", "api.finish_run POST", "api.post_tool_events POST",
                                 "otel_api.traces_under_api POST", "otel.traces POST",
                                 "api.set_run_outcome PATCH"])
def test_ingest_routes_refuse_a_login_session_even_with_its_token(csrf_app, site, key):
    """A login session (with a valid CSRF header) cannot ingest: token only, so CSRF
    cannot reach these routes through a browser's cookie."""
    client = _logged_in(csrf_app, site.admin)
    mine = page_token(client)
    method, url, body = {
        "api.put_run PUT": ("PUT", "/api/ingest/runs/csrf-probe", {"query": "q"}),
        "api.finish_run POST": ("POST", f"/api/ingest/runs/{site.run.run_id}/finish",
                                {"status": "SUCCESS"}),
        "api.post_tool_events POST": ("POST", "/api/ingest/tool-events",
                                      {"id": "x", "run_id": site.run.run_id, "event": "started",
                                       "tool_name": "t"}),
        "otel_api.traces_under_api POST": ("POST", "/api/otel/v1/traces", {"resourceSpans": []}),
        "otel.traces POST": ("POST", "/v1/traces", {"resourceSpans": []}),
        "api.set_run_outcome PATCH": ("PATCH", f"/api/ingest/runs/{site.run.run_id}/outcome",
                                      {"external_outcome": "fail"}),
    }[key]
    before = snapshot()
    response = client.open(url, method=method, json=body, headers={"X-CSRFToken": mine})
    assert response.status_code == 401
    assert response.get_json()["error"]["code"] == "AUTH_UNAUTHENTICATED"
    assert snapshot() == before


@pytest.mark.parametrize("route", ["feedback.rate POST", "api.upsert_target_feedback PUT"])
@pytest.mark.parametrize("target_type", ["tool_call", "conversation_turn"])
def test_rating_a_tool_call_or_a_turn_needs_the_token(csrf_app, site, route, target_type):
    """Issue 19: the two targets rated through the same routes obey the same CSRF rule:
    refused without the token or with another session's (nothing changes), accepted with
    the page's own."""
    run = chat_run_with_turns(site.make, site.ws)
    target_id, subject = (run.id, CALL_ID) if target_type == "tool_call" else (turn_of(run).id, "")
    if route.startswith("api."):
        req: Request = ("PUT", "/api/feedback/targets", {
            "targetType": target_type, "targetId": target_id, "subjectId": subject or None,
            "rating": "negative", "comment": "said updated; the call failed"})
    else:
        req = ("POST", "/feedback", {
            "target_type": target_type, "target_id": target_id, "subject_id": subject,
            "rating": "negative", "comment": "said updated; the call failed", "next": "/"})
    client = _logged_in(csrf_app, site.admin)
    foreign = page_token(_logged_in(csrf_app, site.attacker))
    for options in ({}, dict(field=foreign), dict(htmx=True), dict(htmx=True, header=foreign)):
        before = snapshot()
        response = _send(client, route, req, **options)
        assert _refused(route, response) is None, options
        assert snapshot() == before
    mine = page_token(client)
    options = dict(htmx=True, header=mine) if route.startswith("api.") else dict(field=mine)
    response = _send(client, route, req, **options)
    assert response.status_code in (200, 303), response.get_data(as_text=True)[:300]
    db.session.rollback()
    row = db.session.scalars(select(Feedback).where(Feedback.author_id == site.admin.id)).one()
    assert (row.target_type, row.target_id, row.subject_key, row.comment) == (
        target_type, target_id, subject, "said updated; the call failed")
