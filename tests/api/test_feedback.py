"""Feedback over JSON: target feedback list / upsert / delete and ``POST /api/feedback``
(SPEC 6.1, 6.2, 9)."""

from __future__ import annotations

import re
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path

import jsonschema
import pytest
import yaml
from sqlalchemy import event, func, select

from reviewapp.actors import Actor
from reviewapp.extensions import db
from reviewapp.models import Case, Feedback, FeedbackEvent, Run, TriageItem
from reviewapp.services import admin

from ..conftest import PG_URL
from ..factories import DEFAULT_PASSWORD
from ..services.feedback.helpers import MISSING_ID, TARGET_TYPES, answer_message, target_in

FORBIDDEN_BODY = {"error": {"code": "AUTH_FORBIDDEN",
                            "message": "The target does not exist or you do not have access to it."}}
VERDICT_KEYS = {"success", "message", "runId", "fallbackToLatestRun", "caseId"}


OPENAPI = yaml.safe_load(
    (Path(__file__).resolve().parents[2] / "reviewapp" / "api" / "openapi.yaml").read_text())


def assert_matches(instance, schema_name: str) -> None:
    """``instance`` is valid against ``components.schemas[schema_name]`` of openapi.yaml."""
    schema = {"$ref": f"#/components/schemas/{schema_name}", "components": OPENAPI["components"]}
    jsonschema.Draft202012Validator(schema).validate(instance)


def count(session, model) -> int:
    return session.scalar(select(func.count()).select_from(model))


def put(client, target_type, target_id, subject=None, rating="positive", **extra):
    body = {"targetType": target_type, "targetId": target_id, "rating": rating, **extra}
    if subject is not None:
        body["subjectId"] = subject
    return client.put("/api/feedback/targets", json=body)


@pytest.fixture
def reviewer(make, ws):
    return make.user(ws)


@pytest.fixture
def api(login, reviewer):
    return login(reviewer)


# --- target feedback ----------------------------------------------------------------------


@pytest.mark.parametrize("target_type", TARGET_TYPES)
def test_rating_matrix_own_foreign_missing(api, make, ws, session, target_type):
    """Own target: 200. Another workspace's and a nonexistent one: the same 403 bytes."""
    run, target_id, subject = target_in(make, ws, target_type)
    own = put(api, target_type, target_id, subject, "negative", reason="incorrect",
              comment="wrong", correction="right")
    assert own.status_code == 200, own.get_json()
    row = own.get_json()["feedback"]
    assert_matches(row, "TargetFeedback")
    assert {k: row[k] for k in ("runPk", "targetType", "targetId", "subjectId", "rating", "reason",
                                "comment", "correction")} == {
        "runPk": run.id, "targetType": target_type, "targetId": target_id, "subjectId": subject,
        "rating": "negative", "reason": "incorrect", "comment": "wrong", "correction": "right"}

    _, foreign_id, foreign_subject = target_in(make, make.workspace(), target_type)
    foreign = put(api, target_type, foreign_id, foreign_subject)
    missing = put(api, target_type, MISSING_ID, subject)
    assert foreign.status_code == missing.status_code == 403
    assert foreign.data == missing.data
    assert foreign.get_json() == FORBIDDEN_BODY
    assert count(session, Feedback) == 1


def test_user_message_and_unknown_citation_are_forbidden_with_the_same_body(api, make, ws):
    run = make.run(ws)
    user_message = next(m for m in run.messages if m.role == "user")
    a = put(api, "chat_message", user_message.id)
    b = put(api, "citation", answer_message(run).id, "not-a-citation")
    c = put(api, "chat_message", MISSING_ID)
    assert a.status_code == b.status_code == c.status_code == 403
    assert a.data == b.data == c.data


@pytest.mark.parametrize("body, field", [
    ({"targetType": "run", "targetId": 1, "rating": "positive"}, "targetType"),
    ({"targetType": "chat_message", "targetId": "1", "rating": "positive"}, "targetId"),
    ({"targetType": "chat_message", "targetId": 1, "rating": "meh"}, "rating"),
    ({"targetType": "chat_message", "targetId": 1, "rating": "positive", "comment": "x" * 2001},
     "comment"),
    ({"targetType": "citation", "targetId": 1, "rating": "positive"}, "subjectId"),
])
def test_bad_target_input_is_a_400_naming_the_field(api, body, field):
    response = api.put("/api/feedback/targets", json=body)
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error["code"] == "VALIDATION_INVALID_ARGUMENT"
    assert error["message"].startswith(f"{field}:")


@pytest.mark.parametrize("data, content_type", [
    ("[1, 2]", "application/json"), ("{", "application/json"), ("rating=positive", "text/plain"),
])
def test_malformed_bodies_are_400(api, data, content_type):
    response = api.put("/api/feedback/targets", data=data, content_type=content_type)
    assert response.status_code == 400
    assert response.get_json()["error"]["code"] == "VALIDATION_INVALID_ARGUMENT"


def test_unknown_reason_is_400(api, make, ws):
    run = make.run(ws)
    response = put(api, "chat_message", answer_message(run).id, rating="negative", reason="boring")
    assert response.status_code == 400
    assert response.get_json()["error"]["message"].startswith("reason:")


def test_list_restores_my_ratings(api, make, ws, session):
    run = make.run(ws)
    message_id = answer_message(run).id
    put(api, "chat_message", message_id, rating="negative", reason="incomplete", comment="短")
    put(api, "citation", message_id, "c2", "positive")
    by_run = api.get(f"/api/feedback/targets?runPk={run.id}").get_json()["feedback"]
    assert [(r["targetType"], r["subjectId"], r["rating"], r["comment"]) for r in by_run] == [
        ("chat_message", None, "negative", "短"), ("citation", "c2", "positive", None)]
    by_target = api.get("/api/feedback/targets", query_string={
        "targetType": "citation", "targetId": message_id}).get_json()["feedback"]
    assert [r["subjectId"] for r in by_target] == ["c2"]
    foreign = make.run(make.workspace())
    a = api.get(f"/api/feedback/targets?runPk={foreign.id}")
    b = api.get(f"/api/feedback/targets?runPk={MISSING_ID}")
    assert a.status_code == b.status_code == 403 and a.data == b.data
    assert api.get("/api/feedback/targets?runPk=abc").status_code == 400
    assert api.get("/api/feedback/targets").status_code == 400


def test_delete_own_then_rerate_and_foreign_delete_is_403(api, make, ws, session, login,
                                                          app_factory):
    run = make.run(ws)
    message_id = answer_message(run).id
    mine = put(api, "chat_message", message_id, rating="negative").get_json()["feedback"]["id"]
    colleague = make.user(ws)
    # Another app on the same database: the fixture app's context (and its cached
    # current_user) is shared by every request of ``client``.
    other_client = login(colleague, c=app_factory().test_client())
    theirs = put(other_client, "citation", message_id, "c1").get_json()["feedback"]["id"]

    foreign = api.delete(f"/api/feedback/{theirs}")
    missing = api.delete(f"/api/feedback/{MISSING_ID}")
    huge = api.delete("/api/feedback/99999999999999999999")
    assert foreign.status_code == missing.status_code == 403
    assert foreign.data == missing.data
    # An id no row can have is bad input, told from the value alone (reveals nothing).
    assert huge.status_code == 400 and huge.get_json()["error"]["message"].startswith("feedback_id: out of range")
    assert count(session, Feedback) == 2

    deleted = api.delete(f"/api/feedback/{mine}")
    assert deleted.status_code == 204 and deleted.data == b""
    assert api.delete(f"/api/feedback/{mine}").data == missing.data  # gone: same 403
    again = put(api, "chat_message", message_id, rating="positive")
    assert again.status_code == 200 and again.get_json()["feedback"]["id"] != mine
    actions = session.scalars(select(FeedbackEvent.action).order_by(FeedbackEvent.id)).all()
    assert actions == ["create", "create", "delete", "create"]


def test_answer_thumbs_set_the_run_verdict(api, make, ws, session):
    run = make.aiops_run(ws, status="FAILED")
    assert put(api, "diagnostic_report", run.report.id, rating="positive").status_code == 200
    session.expire_all()
    run = session.get(Run, run.id)
    assert (run.feedback, run.status) == ("useful", "FAILED")
    assert session.scalar(select(Case.diagnosis_id)) == run.run_id


def test_target_routes_need_a_login_not_a_token(client, make, ws, session):
    run = make.run(ws)
    secret = admin.create_token(session, Actor.system_actor(), ws.id, "agent").secret
    response = client.put("/api/feedback/targets", headers={"Authorization": f"Bearer {secret}"},
                          json={"targetType": "chat_message", "targetId": answer_message(run).id,
                                "rating": "positive"})
    assert response.status_code == 401
    assert client.get(f"/api/feedback/targets?runPk={run.id}").status_code == 401
    assert client.delete("/api/feedback/1").status_code == 401


class TestCsrfHeader:
    @pytest.fixture
    def csrf_client(self, app_factory, reviewer, session):
        client = app_factory(WTF_CSRF_ENABLED=True).test_client()
        html = client.get("/login").get_data(as_text=True)
        token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', html).group(1)
        client.post("/login", data={"username": reviewer.username, "password": DEFAULT_PASSWORD,
                                    "csrf_token": token})
        session.rollback()  # the login wrote (last_login_at): a snapshot from before it cannot write
        return client

    def _page_token(self, client):
        return re.search(r'"X-CSRFToken": "([^"]+)"', client.get("/").get_data(as_text=True)).group(1)

    def test_upsert_without_the_header_is_refused_and_writes_nothing(self, csrf_client, make, ws,
                                                                     session):
        run = make.run(ws)
        response = put(csrf_client, "chat_message", answer_message(run).id)
        assert response.status_code == 400
        assert response.get_json()["error"]["code"] == "CSRF_INVALID"
        assert "X-CSRFToken" in response.get_json()["error"]["message"]
        assert count(session, Feedback) == 0

    def test_upsert_with_the_header_passes(self, csrf_client, make, ws):
        run = make.run(ws)
        response = csrf_client.put(
            "/api/feedback/targets", headers={"X-CSRFToken": self._page_token(csrf_client)},
            json={"targetType": "chat_message", "targetId": answer_message(run).id,
                  "rating": "positive"})
        assert response.status_code == 200

    def test_verdict_by_login_session_needs_the_header(self, csrf_client, make, ws):
        run = make.run(ws)
        body = {"sessionId": run.session.session_id, "runId": run.run_id, "feedback": "useful"}
        assert csrf_client.post("/api/feedback", json=body).status_code == 400
        ok = csrf_client.post("/api/feedback", json=body,
                              headers={"X-CSRFToken": self._page_token(csrf_client)})
        assert ok.status_code == 200 and ok.get_json()["success"] is True


# --- POST /api/feedback (run verdict) ---------------------------------------------------------


def test_verdict_useful_answers_the_spec_shape(api, make, ws, session):
    run = make.run(ws)
    body = {"runId": run.run_id, "sessionId": run.session.session_id, "feedback": "useful"}
    first = api.post("/api/feedback", json=body)
    second = api.post("/api/feedback", json=body)
    assert first.status_code == second.status_code == 200
    a, b = first.get_json(), second.get_json()
    assert set(a) == VERDICT_KEYS
    assert_matches(a, "VerdictResponse")
    assert (a["success"], a["runId"], a["fallbackToLatestRun"]) == (True, run.run_id, False)
    assert isinstance(a["message"], str) and a["message"]
    assert a["caseId"] is not None and a["caseId"] == b["caseId"]
    assert count(session, Case) == 1


def test_verdict_not_useful_has_no_case_and_opens_triage(api, make, ws, session):
    run = make.run(ws)
    response = api.post("/api/feedback", json={"sessionId": run.session.session_id,
                                               "feedback": "not_useful"})
    data = response.get_json()
    assert_matches(data, "VerdictResponse")
    assert (data["runId"], data["fallbackToLatestRun"], data["caseId"]) == (run.run_id, True, None)
    assert session.scalar(select(TriageItem.run_pk)) == run.id


def test_verdict_on_a_run_a_queue_of_several_reviewers_decides_is_409(client, make, ws, session):
    """SPEC 6.2: the N ratings (or a lead) decide such a run's verdict; the API answers
    409 with the queue in ``details`` and writes nothing (new-user finding)."""
    from reviewapp.actors import Role
    from reviewapp.services import review_queues

    run = make.run(ws)
    make.user(ws)  # with the lead: two people who may review
    review_queues.create_queue(session, make.actor(make.user(ws, Role.LEAD)), ws.id,
                               "Pairs <b>", {}, reviewers_per_run=2)
    secret = admin.create_token(session, Actor.system_actor(), ws.id, "agent").secret
    response = client.post("/api/feedback", headers={"Authorization": f"Bearer {secret}"},
                           json={"sessionId": run.session.session_id, "feedback": "useful"})
    assert response.status_code == 409
    error = response.get_json()["error"]
    assert error["details"] == {"queue": "Pairs <b>", "reviewersPerRun": 2}
    assert "decided by the review queue 'Pairs <b>'" in error["message"]
    session.expire_all()
    assert session.get(type(run), run.id).feedback is None and count(session, Case) == 0


def test_verdict_with_a_token_of_the_workspace(client, make, ws, session):
    run = make.run(ws)
    secret = admin.create_token(session, Actor.system_actor(), ws.id, "agent").secret
    response = client.post("/api/feedback", headers={"Authorization": f"Bearer {secret}"},
                           json={"sessionId": run.session.session_id, "feedback": "useful"})
    assert response.status_code == 200 and response.get_json()["caseId"]
    other = make.run(make.workspace())
    refused = client.post("/api/feedback", headers={"Authorization": f"Bearer {secret}"},
                          json={"sessionId": other.session.session_id, "feedback": "useful"})
    assert refused.status_code == 403 and refused.get_json() == FORBIDDEN_BODY


def test_verdict_needs_credentials(client, make, ws):
    run = make.run(ws)
    response = client.post("/api/feedback", json={"sessionId": run.session.session_id,
                                                  "feedback": "useful"})
    assert response.status_code == 401


@pytest.mark.parametrize("body, field", [
    ({"sessionId": "S", "feedback": "meh"}, "feedback"),
    ({"sessionId": "S"}, "feedback"),
    ({"feedback": "useful"}, "sessionId"),
    ({"sessionId": 5, "feedback": "useful"}, "sessionId"),
    ({"sessionId": "S", "runId": 7, "feedback": "useful"}, "runId"),
])
def test_verdict_bad_input_is_400(api, make, ws, session, body, field):
    run = make.run(ws, session_id="S")
    response = api.post("/api/feedback", json=body)
    assert response.status_code == 400
    assert response.get_json()["error"]["message"].startswith(f"{field}:")
    session.expire_all()
    assert session.get(Run, run.id).feedback is None


@pytest.mark.parametrize(("path", "method", "body", "field"), [
    ("/api/feedback", "post", {"sessionId": "S", "feedback": "useful", "comment": "great"}, "comment"),
    ("/api/feedback", "post", {"sessionId": "S", "feedback": "useful", "run_id": "x"}, "run_id"),
    ("/api/feedback/targets", "put", {"targetType": "chat_message", "targetId": 1, "rating": "positive",
                                      "ratng": "negative"}, "ratng"),
])
def test_unknown_fields_are_400_naming_them(api, make, ws, session, path, method, body, field):
    run = make.run(ws, session_id="S")
    response = getattr(api, method)(path, json=body)
    assert response.status_code == 400
    assert response.get_json()["error"] == {"code": "VALIDATION_INVALID_ARGUMENT",
                                            "message": f"{field}: unknown field"}
    session.expire_all()
    assert (session.get(Run, run.id).feedback, count(session, Feedback), count(session, Case)) == (None, 0, 0)


def test_useful_verdict_on_a_running_run_without_answer_makes_no_case(api, make, ws, session):
    """SPEC 7: only a finished run with an answer is promoted; the verdict is stored."""
    run = make.run(ws, session_id="S", status="RUNNING", answer=None, messages=[])
    response = api.post("/api/feedback", json={"runId": run.run_id, "sessionId": "S", "feedback": "useful"})
    assert response.status_code == 200
    data = response.get_json()
    assert_matches(data, "VerdictResponse")
    assert (data["success"], data["runId"], data["caseId"]) == (True, run.run_id, None)
    assert data["message"] == "Feedback recorded; no case: the run is still RUNNING and has no answer yet."
    session.expire_all()
    assert (session.get(Run, run.id).feedback, count(session, Case)) == ("useful", 0)


def test_verdict_run_of_another_session_writes_nothing(api, make, ws, session):
    run = make.run(ws, session_id="one")
    make.run(ws, session_id="two")
    response = api.post("/api/feedback", json={"runId": run.run_id, "sessionId": "two",
                                               "feedback": "not_useful"})
    assert response.status_code == 400
    assert response.get_json()["error"]["message"].startswith("runId:")
    assert count(session, TriageItem) == 0
    session.expire_all()
    assert session.get(Run, run.id).feedback is None


# --- storage unavailable ----------------------------------------------------------------------


@contextmanager
def broken_storage(statement_prefix: str = ""):
    """Every statement starting with ``statement_prefix`` fails as if the database
    connection had gone away (the driver's own OperationalError)."""
    engine = db.engine
    dbapi = engine.dialect.loaded_dbapi

    def fail(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith(statement_prefix.upper()):
            raise dbapi.OperationalError("server closed the connection unexpectedly")

    event.listen(engine, "before_cursor_execute", fail)
    try:
        yield
    finally:
        event.remove(engine, "before_cursor_execute", fail)


def test_storage_failure_mid_write_is_503_and_nothing_is_kept(api, make, ws, session):
    """The feedback row was already upserted when writing its event failed: the whole
    transaction is rolled back and the client is told so."""
    run = make.run(ws)
    with broken_storage("INSERT INTO feedback_event"):
        response = put(api, "chat_message", answer_message(run).id, rating="positive")
    assert response.status_code == 503
    assert response.get_json()["error"]["code"] == "SYSTEM_UNAVAILABLE"
    session.rollback()
    assert count(session, Feedback) == 0 and count(session, FeedbackEvent) == 0
    assert count(session, Case) == 0
    assert session.get(Run, run.id).feedback is None
    # and the app recovers once the database is back
    assert put(api, "chat_message", answer_message(run).id).status_code == 200


def test_verdict_with_storage_down_is_503(api, make, ws, session):
    run = make.run(ws)
    body = {"runId": run.run_id, "sessionId": run.session.session_id, "feedback": "useful"}
    with broken_storage():
        response = api.post("/api/feedback", json=body)
    assert response.status_code == 503
    assert response.get_json()["error"]["code"] == "SYSTEM_UNAVAILABLE"
    assert "success" not in response.get_json()
    session.rollback()
    assert count(session, Case) == 0
    assert session.get(Run, run.id).feedback is None


# --- OpenAPI ----------------------------------------------------------------------------------


def test_openapi_describes_the_feedback_routes(app):
    documented = {(path, method.upper()) for path, ops in OPENAPI["paths"].items() for method in ops}
    routes = {
        (re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule), method)
        for rule in app.url_map.iter_rules() if rule.rule.startswith("/api/feedback")
        for method in rule.methods - {"HEAD", "OPTIONS"}
    }
    assert routes == {("/api/feedback", "POST"), ("/api/feedback/targets", "GET"),
                      ("/api/feedback/targets", "PUT"), ("/api/feedback/{feedback_id}", "DELETE")}
    assert routes <= documented


# --- the SQLite write lock ------------------------------------------------------------------


@pytest.fixture
def hold_write_lock(database_url):
    """``hold_write_lock()``: another SQLite connection takes the write lock (``BEGIN
    IMMEDIATE``) and keeps it until the returned function (or the test's end) releases
    it. WAL readers still read."""
    holders: list[sqlite3.Connection] = []

    def release() -> None:
        for holder in holders:
            if holder.in_transaction:
                holder.execute("ROLLBACK")

    def hold():
        holder = sqlite3.connect(database_url.removeprefix("sqlite:///"), isolation_level=None,
                                 check_same_thread=False)
        holders.append(holder)
        holder.execute("BEGIN IMMEDIATE")
        return release

    yield hold
    release()
    for holder in holders:
        holder.close()


@pytest.mark.skipif(bool(PG_URL), reason="the SQLite write lock (PostgreSQL has row locks)")
def test_a_rating_takes_the_write_lock_only_for_its_write(app_factory, login, make, ws,
                                                          hold_write_lock):
    """The login user's read, the CSRF check, parsing, validation and redaction run
    before the write transaction (issue 18, request stack): while another writer holds
    the lock, a refused rating is answered 400 at once, not after the lock wait (was 503:
    the user's read began the request's BEGIN IMMEDIATE); a valid one still waits for the
    lock and answers 503 when the wait runs out, nothing saved. Released, it saves."""
    other = app_factory(SQLITE_BUSY_TIMEOUT_MS=300)
    client = other.test_client()
    reviewer = make.user(ws)
    step_id = make.aiops_run(ws).steps[0].id
    login(reviewer, c=client)
    release = hold_write_lock()

    started = time.monotonic()
    refused = put(client, "diagnostic_step", step_id, rating="sideways")
    assert refused.status_code == 400, refused.get_data(as_text=True)
    assert refused.get_json()["error"]["message"].startswith("rating:")
    assert time.monotonic() - started < 0.25  # no lock wait (the wait is 300 ms)

    waited = put(client, "diagnostic_step", step_id, rating="negative", comment="c")
    assert waited.status_code == 503
    assert waited.get_json()["error"]["code"] == "SYSTEM_UNAVAILABLE"

    release()
    saved = put(client, "diagnostic_step", step_id, rating="negative", comment="c")
    assert saved.status_code == 200, saved.get_data(as_text=True)
    with other.app_context():
        assert db.session.scalars(select(Feedback.rating)).all() == ["negative"]
