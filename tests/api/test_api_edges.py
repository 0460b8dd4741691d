"""Inputs at the edge of the JSON API that must give a 4xx with the documented error body,
never a 500 or a 503 (SPEC 9, 10): huge integer ids, NUL characters, ``/`` in a run_id.
Each was a fault class looked for by the schemathesis run (tests/api/test_schemathesis.py)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from reviewapp.errors import FORBIDDEN_MESSAGE
from reviewapp.models import Run

HUGE = 99999999999999999999  # > 2**64: overflows every SQL integer type


@pytest.fixture
def token(make, ws):
    return make.token(ws)


@pytest.fixture
def user_client(make, ws, login):
    return login(make.user(ws))


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def assert_error(response, status: int, code: str, field: str | None = None) -> None:
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True))
    error = response.get_json()["error"]
    assert error["code"] == code
    if field is not None:
        assert error["message"].startswith(f"{field}: "), error["message"]


# --- huge integers -----------------------------------------------------------------------


# An id beyond the id range (2**31 - 1) is refused by its number alone (400 naming the
# field), before any lookup: the answer says nothing about which objects exist.
def test_delete_feedback_with_a_huge_id_is_400(user_client):
    response = user_client.delete(f"/api/feedback/{HUGE}")
    assert_error(response, 400, "VALIDATION_INVALID_ARGUMENT", "feedback_id")


@pytest.mark.parametrize("query", [f"runPk={HUGE}", f"targetType=chat_message&targetId={HUGE}",
                                   f"runPk=-{HUGE}"])
def test_list_feedback_with_huge_ids_is_refused(user_client, query):
    response = user_client.get(f"/api/feedback/targets?{query}")
    assert response.status_code in (400, 403), response.get_json()
    if response.status_code == 403:  # a negative id: no such object, the uniform answer
        assert response.get_json()["error"]["message"] == FORBIDDEN_MESSAGE
    else:
        assert response.get_json()["error"]["code"] == "VALIDATION_INVALID_ARGUMENT"


@pytest.mark.parametrize("target_id", [HUGE, -HUGE, 2**63, 2**31])
def test_rate_a_huge_target_id_is_refused(user_client, target_id):
    response = user_client.put("/api/feedback/targets", json={
        "targetType": "diagnostic_step", "targetId": target_id, "rating": "positive"})
    assert response.status_code in (400, 403), response.get_json()
    if target_id > 0:
        assert_error(response, 400, "VALIDATION_INVALID_ARGUMENT", "targetId")
    else:
        assert response.get_json()["error"]["message"] == FORBIDDEN_MESSAGE


def test_huge_timestamps_in_a_run_document_are_400(client, token):
    response = client.put("/api/ingest/runs/r-huge", headers=bearer(token), json={
        "query": "q", "started_at": HUGE})
    assert_error(response, 400, "VALIDATION_INVALID_ARGUMENT", "started_at")
    response = client.put("/api/ingest/runs/r-huge", headers=bearer(token), json={
        "query": "q", "steps": [{"id": "s", "name": "n", "started_at": HUGE}]})
    assert_error(response, 400, "VALIDATION_INVALID_ARGUMENT", "steps[0].started_at")


def test_huge_timestamp_in_finish_is_400(client, token):
    assert client.put("/api/ingest/runs/r1", headers=bearer(token), json={"query": "q"}).status_code == 201
    response = client.post("/api/ingest/runs/r1/finish", headers=bearer(token),
                           json={"status": "SUCCESS", "finished_at": HUGE})
    assert_error(response, 400, "VALIDATION_INVALID_ARGUMENT", "finished_at")


def test_huge_timestamp_in_a_tool_event_is_400(client, token):
    assert client.put("/api/ingest/runs/r1", headers=bearer(token), json={"query": "q"}).status_code == 201
    response = client.post("/api/ingest/tool-events", headers=bearer(token), json={
        "id": "c1", "run_id": "r1", "event": "started", "tool_name": "t", "timestamp": HUGE})
    assert_error(response, 400, "VALIDATION_INVALID_ARGUMENT", "timestamp")


# --- NUL characters ----------------------------------------------------------------------


def test_nul_in_the_run_id_of_the_address_is_400(client, token, session):
    response = client.put("/api/ingest/runs/a%00b", headers=bearer(token), json={"query": "q"})
    assert_error(response, 400, "VALIDATION_INVALID_ARGUMENT", "run_id")
    assert session.scalar(select(func.count()).select_from(Run)) == 0


def test_nul_in_the_run_id_of_finish_and_trace_is_400(client, token):
    response = client.post("/api/ingest/runs/a%00b/finish", headers=bearer(token),
                           json={"status": "SUCCESS"})
    assert_error(response, 400, "VALIDATION_INVALID_ARGUMENT", "run_id")
    assert_error(client.get("/api/runs/a%00b/trace", headers=bearer(token)),
                 400, "VALIDATION_INVALID_ARGUMENT", "run_id")


def test_nul_in_a_query_parameter_is_400_naming_it(user_client):
    response = user_client.get("/api/feedback/targets?targetType=citation&targetId=1&subjectId=a%00b")
    assert_error(response, 400, "VALIDATION_INVALID_ARGUMENT", "subjectId")


def test_nul_in_a_body_string_is_400_naming_the_path(client, token):
    response = client.put("/api/ingest/runs/r1", headers=bearer(token),
                          json={"query": "q", "messages": [{"role": "user", "content": "a\x00b"}]})
    assert_error(response, 400, "VALIDATION_INVALID_ARGUMENT", "messages[0].content")


# --- "/" in a run id ---------------------------------------------------------------------


def test_put_to_a_finish_address_does_not_create_run_abc_finish(client, token, session):
    response = client.put("/api/ingest/runs/abc/finish", headers=bearer(token), json={"query": "q"})
    assert_error(response, 400, "VALIDATION_INVALID_ARGUMENT", "run_id")
    assert session.scalars(select(Run.run_id)).all() == []


@pytest.mark.parametrize("run_id", ["a/b", "a%2Fb"])
def test_slash_in_run_id_is_400_everywhere(client, token, run_id):
    assert_error(client.put(f"/api/ingest/runs/{run_id}", headers=bearer(token), json={"query": "q"}),
                 400, "VALIDATION_INVALID_ARGUMENT", "run_id")
    assert_error(client.post(f"/api/ingest/runs/{run_id}/finish", headers=bearer(token),
                             json={"status": "SUCCESS"}),
                 400, "VALIDATION_INVALID_ARGUMENT", "run_id")
    assert_error(client.get(f"/api/runs/{run_id}/trace", headers=bearer(token)),
                 400, "VALIDATION_INVALID_ARGUMENT", "run_id")


def test_control_characters_and_blank_run_ids_are_400(client, token):
    for run_id in ("a%09b", "%20%20", "a%7Fb", "a%1Fb"):
        response = client.put(f"/api/ingest/runs/{run_id}", headers=bearer(token), json={"query": "q"})
        assert_error(response, 400, "VALIDATION_INVALID_ARGUMENT", "run_id")


def test_line_break_in_a_run_id_matches_no_route(client, token):
    """werkzeug's path converter stops at a line break: documented 404 NOT_FOUND."""
    response = client.put("/api/ingest/runs/a%0Ab", headers=bearer(token), json={"query": "q"})
    assert_error(response, 404, "NOT_FOUND")


def test_ordinary_run_ids_still_work(client, token):
    for run_id in ("run-1", "tau-airline-t3-r0", "a.b:c@d", "agent@host:run_7"):
        response = client.put(f"/api/ingest/runs/{run_id}", headers=bearer(token), json={"query": "q"})
        assert response.status_code == 201, (run_id, response.get_json())
        assert response.get_json()["run_id"] == run_id
        trace = client.get(f"/api/runs/{run_id}/trace", headers=bearer(token))
        assert trace.status_code == 200
        assert trace.get_json()["run"]["runId"] == run_id


def test_tool_event_and_document_run_ids_follow_the_same_rule(client, token):
    response = client.post("/api/ingest/tool-events", headers=bearer(token), json={
        "id": "c1", "run_id": "a/b", "event": "started", "tool_name": "t"})
    assert response.status_code in (400, 409), response.get_json()
    assert response.get_json()["error"]["code"] in ("VALIDATION_INVALID_ARGUMENT", "CONFLICT")


# --- found by a long schemathesis run (5,197 examples, PostgreSQL) -------------------------


@pytest.mark.parametrize("extra", ["targetType=", "targetType=chat_message&targetId=1",
                                   "subjectId=c1", "targetId=5", "subjectId=" + "x" * 161])
def test_run_pk_with_target_parameters_is_400_not_silently_ignored(make, ws, login, extra):
    """Was 200 with the run's ratings: targetType / targetId / subjectId (even invalid ones)
    were ignored when runPk was sent."""
    user = make.user(ws)
    run = make.run(ws)
    client = login(user)
    assert client.get(f"/api/feedback/targets?runPk={run.id}").status_code == 200
    response = client.get(f"/api/feedback/targets?runPk={run.id}&{extra}")
    assert_error(response, 400, "VALIDATION_INVALID_ARGUMENT", "runPk")
