"""``GET /api/runs/<run_id>/trace`` (SPEC 9, S001 §9): content, legacy wrapping, tenancy."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest
import yaml
from sqlalchemy import update

from reviewapp.actors import Actor
from reviewapp.models import Feedback, Run
from reviewapp.services import admin

OPENAPI = Path(__file__).resolve().parents[2] / "reviewapp" / "api" / "openapi.yaml"


def _bearer(session, workspace):
    secret = admin.create_token(session, Actor.system_actor(), workspace.id, "agent").secret
    return {"Authorization": f"Bearer {secret}"}


def _schema():
    spec = yaml.safe_load(OPENAPI.read_text())
    # The trace's schema with the components it refers to (its items' TargetType).
    return {"$ref": "#/components/schemas/RunTrace", "components": spec["components"]}


@pytest.fixture
def aiops_run(make):
    ws = make.workspace()
    run = make.run(
        ws, "trace-1", kind="aiops", query="Alert HighErrorRate on payment-api",
        alert={"alertname": "HighErrorRate", "service": "payment-api"},
        steps=[{"id": "s1", "name": "Collect logs", "status": "completed"}],
        report={"content": "## HighErrorRate on payment-api\nPool exhausted."},
        tool_calls=[{"id": "t1", "tool_name": "query_logs", "status": "completed",
                     "output": "PoolTimeout", "step_id": "s1"},
                    {"id": "t2", "tool_name": "query_metrics", "status": "failed",
                     "error": "503"}],
        verifier_evaluation={"verdict": "PASS", "groundedness_score": 0.8},
    )
    return ws, run


def test_trace_returns_the_whole_run_for_a_member(client, login, make, aiops_run):
    ws, run = aiops_run
    login(make.user(ws, "reviewer"))
    response = client.get("/api/runs/trace-1/trace")
    assert response.status_code == 200
    body = response.get_json()
    jsonschema.Draft202012Validator(_schema()).validate(body)
    assert body["run"]["runId"] == "trace-1" and body["run"]["status"] == "SUCCESS"
    assert body["session"]["sessionId"] == run.session.session_id
    assert [s["stepId"] for s in body["steps"]] == ["s1"]
    assert [(c["id"], c["status"], c["stepId"]) for c in body["toolCalls"]] == [
        ("t1", "completed", "s1"), ("t2", "failed", None)]
    assert body["report"]["content"].startswith("## HighErrorRate")
    evaluation = body["selfEvaluation"]
    assert evaluation["rule_evaluation"]["evidence_score"] == 30
    assert evaluation["verifier_evaluation"]["verdict"] == "PASS"
    assert evaluation["aiops_rule_evaluation"]["verdict"] == "WARN"  # no knowledge lookup
    assert (body["hasVerifierEvaluation"], body["hasAiOpsRuleEvaluation"]) == (True, True)
    assert body["hasFeedback"] is False
    assert body["feedback"] == {"verdict": None, "items": []}


def test_trace_answers_the_ingest_token_of_the_runs_workspace(client, session, aiops_run):
    ws, _ = aiops_run
    response = client.get("/api/runs/trace-1/trace", headers=_bearer(session, ws))
    assert response.status_code == 200
    assert response.get_json()["run"]["runId"] == "trace-1"


def test_trace_shows_the_verdict_and_feedback_rows(client, session, login, make, aiops_run):
    ws, run = aiops_run
    reviewer = make.user(ws, "reviewer")
    session.add(Feedback(author_id=reviewer.id, workspace_id=ws.id, run_pk=run.id,
                         target_type="diagnostic_report", target_id=run.report.id,
                         subject_key="", rating="negative", reason="incomplete",
                         comment="misses the failover"))
    session.commit()
    login(reviewer)
    body = client.get("/api/runs/trace-1/trace").get_json()
    assert body["hasFeedback"] is True
    [item] = body["feedback"]["items"]
    assert (item["author"], item["targetType"], item["rating"], item["comment"]) == (
        reviewer.username, "diagnostic_report", "negative", "misses the failover")
    jsonschema.Draft202012Validator(_schema()).validate(body)


def test_trace_has_feedback_when_only_the_run_verdict_is_set(
        client, session, login, make, aiops_run):
    ws, run = aiops_run
    session.execute(update(Run.__table__).where(Run.__table__.c.id == run.id)
                    .values(feedback="useful"))
    session.commit()
    login(make.user(ws))
    body = client.get("/api/runs/trace-1/trace").get_json()
    assert body["hasFeedback"] is True
    assert body["feedback"]["verdict"] == "useful" and body["run"]["feedback"] == "useful"


def test_trace_wraps_a_legacy_root_and_handles_null(client, session, login, make):
    ws = make.workspace()
    legacy = make.run(ws, "legacy-1", status="RUNNING")
    empty = make.run(ws, "empty-1", status="RUNNING", messages=[])
    table = Run.__table__
    session.execute(update(table).where(table.c.id == legacy.id).values(
        self_evaluation={"verdict": "REJECT", "groundedness_score": 0.1}))
    session.execute(update(table).where(table.c.id == empty.id).values(self_evaluation=None))
    session.commit()
    login(make.user(ws))
    body = client.get("/api/runs/legacy-1/trace").get_json()
    assert body["selfEvaluation"]["verifier_evaluation"] == {"verdict": "REJECT",
                                                             "groundedness_score": 0.1}
    assert "verdict" not in body["selfEvaluation"]
    assert body["hasVerifierEvaluation"] is True
    body = client.get("/api/runs/empty-1/trace").get_json()
    assert body["selfEvaluation"] == {}
    assert (body["hasVerifierEvaluation"], body["hasAiOpsRuleEvaluation"]) == (False, False)
    jsonschema.Draft202012Validator(_schema()).validate(body)


def test_trace_missing_and_foreign_runs_get_the_identical_403(
        client, session, login, make, aiops_run):
    _ws, _ = aiops_run
    other = make.workspace()
    login(make.user(other, "admin"))
    foreign = client.get("/api/runs/trace-1/trace")
    missing = client.get("/api/runs/no-such-run/trace")
    assert foreign.status_code == missing.status_code == 403
    assert foreign.get_data() == missing.get_data()
    assert foreign.get_json()["error"]["code"] == "AUTH_FORBIDDEN"
    headers = _bearer(session, other)
    by_token = client.get("/api/runs/trace-1/trace", headers=headers)
    assert by_token.status_code == 403 and by_token.get_data() == missing.get_data()


def test_trace_without_credentials_is_401(client, aiops_run):
    response = client.get("/api/runs/trace-1/trace")
    assert response.status_code == 401
    assert response.get_json()["error"]["code"] == "AUTH_UNAUTHENTICATED"
    bad = client.get("/api/runs/trace-1/trace", headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401


def test_trace_route_is_described_in_openapi():
    spec = yaml.safe_load(OPENAPI.read_text())
    operation = spec["paths"]["/api/runs/{run_id}/trace"]["get"]
    assert set(operation["responses"]) >= {"200", "401", "403"}


def test_a_run_id_in_two_of_my_workspaces_is_409_not_a_guess(client, session, login, make):
    from reviewapp.models import Membership

    a, b = make.workspace(slug="alpha"), make.workspace(slug="beta")
    make.run(a, "dup-1", session_id="s-dup")
    make.run(b, "dup-1", session_id="s-dup")
    user = make.user(a)
    session.add(Membership(user_id=user.id, workspace_id=b.id, role="reviewer"))
    session.commit()
    login(user)
    trace = client.get("/api/runs/dup-1/trace")
    assert trace.status_code == 409
    assert trace.get_json()["error"]["details"]["workspaces"] == ["alpha", "beta"]
    verdict = client.post("/api/feedback", json={"sessionId": "s-dup", "runId": "dup-1",
                                                 "feedback": "useful"})
    assert verdict.status_code == 409 and verdict.get_json()["error"]["message"].startswith("runId:")
    session.rollback()
    assert session.query(Run).filter(Run.feedback.isnot(None)).count() == 0
    # Each workspace's own token still sees exactly its run.
    assert client.get("/api/runs/dup-1/trace", headers=_bearer(session, a)).status_code == 200


def test_a_session_id_in_two_of_my_workspaces_without_run_id_is_409_naming_them(client, session, login, make):
    """SPEC 6.2: a sessionId without runId that the user holds in two workspaces is 409,
    never a silent pick of one of them (as runId and the trace API)."""
    from reviewapp.models import Membership

    a, b = make.workspace(slug="gamma"), make.workspace(slug="delta")
    make.run(a, "g-1", session_id="s-shared")
    make.run(b, "d-1", session_id="s-shared")
    user = make.user(a)
    session.add(Membership(user_id=user.id, workspace_id=b.id, role="reviewer"))
    session.commit()
    login(user)
    verdict = client.post("/api/feedback", json={"sessionId": "s-shared", "feedback": "useful"})
    assert verdict.status_code == 409
    error = verdict.get_json()["error"]
    assert error["message"].startswith("sessionId:") and "delta" in error["message"] and "gamma" in error["message"]
    assert error["details"] == {"session_id": "s-shared", "workspaces": ["delta", "gamma"]}
    session.rollback()
    assert session.query(Run).filter(Run.feedback.isnot(None)).count() == 0
    # A token of one workspace sees only its own session: no ambiguity there.
    response = client.post("/api/feedback", json={"sessionId": "s-shared", "feedback": "useful"},
                           headers=_bearer(session, a))
    assert response.status_code == 200 and response.get_json()["runId"] == "g-1"
