"""Issue 14: an outcome set after the fact (API PATCH, CLI, outcome-only document)
changes the outcome and its detail and nothing else of the run."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from reviewapp.actors import Actor
from reviewapp.errors import Forbidden, ValidationFailed
from reviewapp.models import Run
from reviewapp.services import admin, importers, runs

SYSTEM = Actor.system_actor()
DOC = {"session_id": "s1", "kind": "chat", "query": "Why?", "answer": "Because.", "status": "SUCCESS",
       "started_at": "2026-05-01T12:00:00Z", "finished_at": "2026-05-01T12:01:00Z",
       "messages": [{"id": "m1", "role": "user", "content": "Why?"}],
       "tool_calls": [{"id": "c1", "tool_name": "search", "status": "completed", "output": "x",
                       "started_at": "2026-05-01T12:00:10Z", "completed_at": "2026-05-01T12:00:11Z"}]}
DETAIL = {"source": "sregym", "reward": 0.5, "checks": [{"name": "diagnosis", "passed": True},
                                                        {"name": "mitigation", "passed": False}],
          "missed_actions": [{"name": "update_reservation", "kwargs": {"id": 1}}]}


def _state(session, ws_id: int, run_id: str = "r1") -> dict:
    session.expire_all()
    run = session.scalars(select(Run).where(Run.workspace_id == ws_id, Run.run_id == run_id)).one()
    return {"query": run.query, "answer": run.answer, "status": run.status, "started_at": run.started_at,
            "finished_at": run.finished_at, "messages": [(m.message_id, m.content) for m in run.messages],
            "calls": run.tool_call_count, "session": run.diagnosis_session_id, "kind": run.kind,
            "self_evaluation": run.self_evaluation}


@pytest.fixture
def world(session, make):
    ws = make.workspace()
    runs.upsert_run(session, SYSTEM, ws.id, "r1", DOC)
    return ws


def _outcome(session, ws_id: int) -> tuple:
    session.expire_all()
    run = session.scalars(select(Run).where(Run.workspace_id == ws_id, Run.run_id == "r1")).one()
    return run.external_outcome, run.external_outcome_detail


def test_set_outcome_touches_nothing_else(session, world):
    before = _state(session, world.id)
    result = runs.set_outcome(session, SYSTEM, world.id, "r1",
                              {"external_outcome": "fail", "external_outcome_detail": DETAIL})
    assert result.result == "updated"
    assert _outcome(session, world.id) == ("fail", DETAIL)
    assert _state(session, world.id) == before
    # Only the label: the detail stays; the same again is unchanged.
    assert runs.set_outcome(session, SYSTEM, world.id, "r1", {"external_outcome": "pass"}).result == "updated"
    assert _outcome(session, world.id) == ("pass", DETAIL)
    assert runs.set_outcome(session, SYSTEM, world.id, "r1", {"external_outcome": "pass"}).result == "unchanged"
    assert runs.set_outcome(session, SYSTEM, world.id, "r1",
                            {"external_outcome": None, "external_outcome_detail": None}).result == "updated"
    assert _outcome(session, world.id) == (None, None)


@pytest.mark.parametrize(("body", "field"), [
    ({}, "external_outcome"),
    ({"external_outcome": "x" * 33}, "external_outcome"),
    ({"external_outcome": "pass", "status": "FAILED"}, "status"),
    ({"external_outcome": "pass", "external_outcome_detail": {"checks": [{"name": "a", "passed": "yes"}]}},
     "external_outcome_detail.checks[0].passed"),
    ({"external_outcome": "pass", "external_outcome_detail": {"reward": "high"}}, "external_outcome_detail.reward"),
])
def test_set_outcome_refuses_bad_bodies_naming_the_field(session, world, body, field):
    with pytest.raises(ValidationFailed) as err:
        runs.set_outcome(session, SYSTEM, world.id, "r1", body)
    assert err.value.field.startswith(field)


def test_set_outcome_of_a_missing_or_foreign_run_is_forbidden(session, world, make):
    with pytest.raises(Forbidden):
        runs.set_outcome(session, SYSTEM, world.id, "nope", {"external_outcome": "pass"})
    other = make.workspace()
    with pytest.raises(Forbidden):
        runs.set_outcome(session, SYSTEM, other.id, "r1", {"external_outcome": "pass"})


def test_outcome_detail_is_redacted(session, world):
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 3
    runs.set_outcome(session, SYSTEM, world.id, "r1",
                     {"external_outcome": "pass", "external_outcome_detail": {"note": f"used {key}"}})
    assert key not in json.dumps(_outcome(session, world.id)[1])


def test_patch_outcome_over_the_api(client, session, world):
    secret = admin.create_token(session, SYSTEM, world.id, "agent").secret
    before = _state(session, world.id)
    response = client.patch("/api/ingest/runs/r1/outcome", headers={"Authorization": f"Bearer {secret}"},
                            json={"external_outcome": "fail", "external_outcome_detail": DETAIL})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert (body["result"], body["external_outcome"], body["external_outcome_detail"]) == ("updated", "fail", DETAIL)
    assert _state(session, world.id) == before
    bad = client.patch("/api/ingest/runs/r1/outcome", headers={"Authorization": f"Bearer {secret}"},
                       json={"external_outcome": "pass", "answer": "changed"})
    assert bad.status_code == 400 and "answer" in bad.get_json()["error"]["message"]
    missing = client.patch("/api/ingest/runs/nope/outcome", headers={"Authorization": f"Bearer {secret}"},
                           json={"external_outcome": "pass"})
    assert missing.status_code == 403


def test_outcome_only_document_sets_the_outcome_of_a_finished_run(client, session, world):
    secret = admin.create_token(session, SYSTEM, world.id, "agent").secret
    before = _state(session, world.id)
    response = client.put("/api/ingest/runs/r1", headers={"Authorization": f"Bearer {secret}"},
                          json={"run_id": "r1", "external_outcome": "pass"})
    assert response.status_code == 200, response.get_json()
    assert _outcome(session, world.id) == ("pass", None)
    assert _state(session, world.id) == before


def test_outcome_only_document_in_an_import(session, world, tmp_path):
    before = _state(session, world.id)
    path = tmp_path / "outcomes.jsonl"
    path.write_text(json.dumps({"run_id": "r1", "external_outcome": "fail", "external_outcome_detail": DETAIL}) + "\n")
    summary = importers.import_files(session, SYSTEM, world.id, [path])
    assert (summary.runs, summary.verdicts_set, summary.failed) == (0, 1, 0)
    assert _outcome(session, world.id) == ("fail", DETAIL)
    assert _state(session, world.id) == before


def test_cli_set_outcome(runner, session, world):
    before = _state(session, world.id)
    result = runner.invoke(args=["runs", "set-outcome", "r1", "--workspace", world.slug, "--outcome", "fail",
                                 "--reward", "0.5", "--check", "diagnosis=pass", "--check", "mitigation=fail",
                                 "--missed-action", "restart pod", "--source", "sregym"])
    assert result.exit_code == 0, result.output
    assert "r1: outcome fail (updated)" in result.output
    assert _outcome(session, world.id) == ("fail", {
        "source": "sregym", "reward": 0.5, "checks": [{"name": "diagnosis", "passed": True},
                                                      {"name": "mitigation", "passed": False}],
        "missed_actions": ["restart pod"]})
    assert _state(session, world.id) == before
    missing = runner.invoke(args=["runs", "set-outcome", "nope", "--workspace", world.slug, "--outcome", "x"])
    assert missing.exit_code == 1 and "no run 'nope'" in missing.output
    bad = runner.invoke(args=["runs", "set-outcome", "r1", "--workspace", world.slug, "--outcome", "x",
                              "--check", "nameonly"])
    assert bad.exit_code == 2
