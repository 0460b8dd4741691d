"""The app's own evaluations at ingest, imported ones, the one-key merge, bulk re-score
(SPEC 5)."""

from __future__ import annotations

import logging
import threading

import pytest
from sqlalchemy import select, update

from reviewapp.actors import Actor
from reviewapp.db_setup import write_intent
from reviewapp.errors import Forbidden, ValidationFailed
from reviewapp.extensions import db
from reviewapp.models import Run
from reviewapp.services import evaluations, tool_calls
from reviewapp.services.demo import DEMO_SLUG

SYSTEM = Actor.system_actor()


def _call(call_id, status="completed", retrieval=None, tool="query_logs"):
    return {"id": call_id, "tool_name": tool, "status": status, "output": f"out {call_id}",
            "error": "boom" if status == "failed" else None, "retrieval": retrieval}


def _stored(session, run):
    session.rollback()
    return session.get(Run, run.id)


def test_finished_run_gets_rule_evaluation_and_column_at_ingest(session, make):
    ws = make.workspace()
    calls = [_call(f"c{i}") for i in range(19)] + [
        _call("c19", retrieval={"match_level": "L0", "hit_count": 1, "evidence_refs": []})]
    run = _stored(session, make.run(ws, tool_calls=calls))
    assert run.self_evaluation["rule_evaluation"] == {
        "evidence_score": 65, "source": "rule", "factors": [
            {"name": "has_successful_tool_call", "delta": 30,
             "description": "successful tool calls: 20"},
            {"name": "l0_exact_match", "delta": 35,
             "description": "calls with an L0 exact hit: 1"}]}
    assert run.evidence_score == 65
    assert (run.tool_call_count, run.failed_tool_call_count) == (20, 0)


def test_running_run_is_scored_when_it_finishes(session, make):
    ws = make.workspace()
    run = _stored(session, make.run(ws, "r1", status="RUNNING", tool_calls=[_call("a")]))
    assert "rule_evaluation" not in (run.self_evaluation or {})
    assert run.evidence_score is None
    make.run(ws, "r1", status="FAILED", session_id=run.session.session_id, tool_calls=[_call("a")])
    run = _stored(session, run)
    assert run.self_evaluation["rule_evaluation"]["factors"][0]["name"] == "execution_failed"
    assert run.evidence_score == 0


def test_tool_call_events_rescore_a_finished_run(session, make):
    ws = make.workspace()
    run = make.run(ws, "r2", tool_calls=[_call("a", "failed")])
    assert _stored(session, run).evidence_score == 0
    tool_calls.apply_events(session, SYSTEM, ws.id, [
        {"id": "b", "run_id": "r2", "event": "completed", "tool_name": "kb",
         "retrieval": {"match_level": "L1", "hit_count": 2}}])
    run = _stored(session, run)
    assert run.evidence_score == 50
    assert [f["name"] for f in run.self_evaluation["rule_evaluation"]["factors"]] == [
        "has_successful_tool_call", "l1_semantic_match"]
    assert (run.tool_call_count, run.failed_tool_call_count) == (2, 1)


def test_scoring_failure_leaves_the_key_absent_logs_the_run_and_ingest_succeeds(
        session, make, monkeypatch, caplog):
    ws = make.workspace()
    run = make.run(ws, "r-fail", tool_calls=[_call("a")],
                   verifier_evaluation={"verdict": "PASS"})
    assert _stored(session, run).evidence_score == 30

    def broken(*args, **kwargs):
        raise RuntimeError("scoring bug")

    monkeypatch.setattr(evaluations, "score_evidence", broken)
    with caplog.at_level(logging.ERROR, logger="reviewapp.evaluations"):
        result = make.run(ws, "r-fail", session_id=run.session.session_id,
                          tool_calls=[_call("a"), _call("b")])
    run = _stored(session, result)
    assert run.tool_call_count == 2  # the ingest itself went through
    assert "rule_evaluation" not in run.self_evaluation
    assert run.evidence_score is None
    assert run.self_evaluation["verifier_evaluation"] == {"verdict": "PASS"}
    assert any("r-fail" in r.getMessage() and r.exc_info for r in caplog.records)


def test_verifier_evaluation_is_imported_and_its_column_synced(session, make):
    ws = make.workspace()
    run = make.run(ws, "r3", tool_calls=[_call("a")],
                   verifier_evaluation={"verdict": "LOW_CONFID", "groundedness_score": 0.5})
    run = _stored(session, run)
    assert run.self_evaluation["verifier_evaluation"]["verdict"] == "LOW_CONFID"
    assert run.verifier_verdict == "LOW_CONFID"
    assert run.self_evaluation["rule_evaluation"]["evidence_score"] == 30


def test_a_resent_document_with_only_a_new_verifier_result_is_stored(session, make):
    ws = make.workspace()
    doc = {"session_id": "s-v", "query": "q", "status": "SUCCESS", "tool_calls": [_call("a")]}
    make.run(ws, "r-v", **doc)
    run = make.run(ws, "r-v", **doc, verifier_evaluation={"verdict": "REJECT"})
    assert _stored(session, run).verifier_verdict == "REJECT"


def test_legacy_roots_are_wrapped_on_import(session, make):
    ws = make.workspace()
    verifier_root = {"verdict": "PASS", "groundedness_score": 0.9}
    run = _stored(session, make.run(ws, tool_calls=[_call("a")], self_evaluation=verifier_root))
    assert run.self_evaluation["verifier_evaluation"] == verifier_root
    assert "verdict" not in run.self_evaluation
    assert run.verifier_verdict == "PASS"
    rule_root = {"evidence_score": 65, "source": "rule", "factors": []}
    running = _stored(session, make.run(ws, status="RUNNING", self_evaluation=rule_root))
    assert running.self_evaluation["rule_evaluation"] == rule_root
    assert "evidence_score" not in running.self_evaluation
    assert running.evidence_score == 65


def test_imported_rule_evaluation_of_a_finished_run_is_replaced_by_the_apps(session, make):
    ws = make.workspace()
    run = _stored(session, make.run(ws, tool_calls=[_call("a")],
                                    self_evaluation={"evidence_score": 99, "factors": []}))
    assert run.self_evaluation["rule_evaluation"]["evidence_score"] == 30
    assert run.evidence_score == 30


def test_agent_aiops_evaluation_is_kept_until_the_app_computes_its_own(session, make):
    ws = make.workspace()
    agent = {"verdict": "PASS", "checks": [{"name": "agent_check", "passed": True, "detail": ""}]}
    doc = {"session_id": "s-a", "kind": "aiops", "query": "alert", "status": "RUNNING",
           "report": {"content": "Root cause: pool"}, "tool_calls": [_call("a")],
           "aiops_rule_evaluation": agent}
    run = _stored(session, make.run(ws, "r-a", **doc))
    assert run.self_evaluation["aiops_rule_evaluation"] == agent
    run = _stored(session, make.run(ws, "r-a", **{**doc, "status": "SUCCESS"}))
    own = run.self_evaluation["aiops_rule_evaluation"]
    assert own["source"] == "rule" and own["mode"] == "query"
    assert own["verdict"] == "WARN"  # logs only: no knowledge, no metrics call
    # Re-sending the finished document changes nothing: the agent's value is not re-imported.
    again = make.run(ws, "r-a", **{**doc, "status": "SUCCESS"})
    assert _stored(session, again).self_evaluation["aiops_rule_evaluation"] == own


def test_workspace_settings_override_the_evidence_tools(session, make):
    ws = make.workspace(aiops_evidence_tools={"runbooks": ["confluence_search"]})
    run = _stored(session, make.run(
        ws, kind="aiops", report={"content": "done"},
        tool_calls=[_call("a", tool="confluence_search")]))
    checks = run.self_evaluation["aiops_rule_evaluation"]["checks"]
    assert [(c["name"], c["passed"]) for c in checks] == [
        ("final_report_present", True), ("evidence_tool:runbooks", True)]


def test_gatekeeper_result_is_stored_for_runs_with_citations(session, make):
    ws = make.workspace()
    messages = [{"id": "a1", "role": "assistant", "content": "x", "metadata": {"citations": [
        {"id": "c1", "evidence_ref": "kb://one", "excerpt": "one"},
        {"id": "c2", "evidence_ref": "kb://two", "excerpt": "not returned"}]}}]
    calls = [_call("k", retrieval={"match_level": "L0", "hit_count": 1,
                                   "evidence_refs": [{"ref": "kb://one", "excerpt": "one"}]},
                   tool="knowledge_search")]
    run = _stored(session, make.run(ws, messages=messages, tool_calls=calls))
    gate = run.self_evaluation["citation_gatekeeper"]
    message_id = run.messages[0].id
    assert gate == {"source": "gatekeeper", "verified": 1, "unverified": 1, "citations": [
        {"message_id": message_id, "citation_id": "c1", "status": "verified",
         "reason": "evidence_ref kb://one returned by knowledge_search (k)",
         "evidence_ref": "kb://one"},
        {"message_id": message_id, "citation_id": "c2", "status": "unverified",
         "reason": ("no tool returned evidence_ref kb://two and its excerpt occurs in no "
                    "tool result"),
         "evidence_ref": "kb://two"}]}


def test_gatekeeper_without_tool_calls_marks_every_citation_unverified(session, make):
    run = _stored(session, make.run(make.workspace()))  # factory: two citations, no calls
    gate = run.self_evaluation["citation_gatekeeper"]
    assert (gate["verified"], gate["unverified"]) == (0, 2)
    assert {c["reason"] for c in gate["citations"]} == {"no tool call has retrieval evidence"}


# --------------------------------------------------------------------- write_evaluation_key

def test_write_evaluation_key_by_the_workspace_token_keeps_other_keys(session, make):
    ws = make.workspace()
    run = make.run(ws, tool_calls=[_call("a")])
    token = Actor.for_token(1, ws.id)
    evaluations.write_evaluation_key(session, token, run.id, "verifier_evaluation",
                                     {"verdict": "REJECT", "round": 2})
    run = _stored(session, run)
    assert run.self_evaluation["verifier_evaluation"] == {"verdict": "REJECT", "round": 2}
    assert run.self_evaluation["rule_evaluation"]["evidence_score"] == 30
    assert run.verifier_verdict == "REJECT"
    evaluations.write_evaluation_key(session, token, run.id, "verifier_evaluation", None)
    run = _stored(session, run)
    assert "verifier_evaluation" not in run.self_evaluation and run.verifier_verdict is None


def test_write_evaluation_key_foreign_and_missing_runs_are_the_same_forbidden(session, make):
    a, b = make.workspace(), make.workspace()
    run_b = make.run(b)
    errors = []
    for actor, run_pk in ((Actor.for_token(1, a.id), run_b.id), (Actor.for_token(1, a.id), 99_999),
                          (make.actor(make.user(a, "admin")), run_b.id),
                          (make.actor(make.user(b, "reviewer")), run_b.id)):
        with pytest.raises(Forbidden) as exc:
            evaluations.write_evaluation_key(session, actor, run_pk, "verifier_evaluation", {})
        errors.append(exc.value.to_dict())
    assert all(e == errors[0] for e in errors)


@pytest.mark.parametrize(("key", "value", "field"), [
    ("llm_opinion", {}, "key"), ("verifier_evaluation", [1], "value"),
    ("verifier_evaluation", {"x": float("nan")}, "value"),
    ("rule_evaluation", {"evidence_score": 100}, "key"),
    ("citation_gatekeeper", {}, "key"),
])
def test_write_evaluation_key_rejects_bad_keys_values_and_app_owned_keys(
        session, make, key, value, field):
    ws = make.workspace()
    run = make.run(ws)
    with pytest.raises(ValidationFailed) as exc:
        evaluations.write_evaluation_key(session, Actor.for_token(1, ws.id), run.id, key, value)
    assert exc.value.field == field


def _concurrently(app, *jobs):
    barrier = threading.Barrier(len(jobs))
    errors = []

    def run(job):
        try:
            with app.app_context(), write_intent():
                barrier.wait(timeout=10)
                job(db.session)
                db.session.remove()
        except Exception as exc:  # noqa: BLE001 - reported by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []


def test_concurrent_rule_and_verifier_writes_both_survive(app, session, make):
    """SPEC 5: each source writes only its key; 50 races of the app's scoring against a
    verifier write, on this test run's database (SQLite or PostgreSQL)."""
    ws = make.workspace()
    run = make.run(ws, tool_calls=[_call("a"), _call("b", "failed")])
    run_pk, token = run.id, Actor.for_token(1, ws.id)
    table = Run.__table__
    for i in range(50):
        session.execute(update(table).where(table.c.id == run_pk)
                        .values(self_evaluation=None, evidence_score=None, verifier_verdict=None))
        session.commit()
        _concurrently(
            app,
            lambda s: evaluations.score_run(s, SYSTEM, run_pk),
            lambda s, i=i: evaluations.write_evaluation_key(
                s, token, run_pk, "verifier_evaluation", {"verdict": "PASS", "round": i}),
        )
        session.rollback()
        stored = session.get(Run, run_pk)
        assert stored.self_evaluation["rule_evaluation"]["evidence_score"] == 30, i
        assert stored.self_evaluation["verifier_evaluation"] == {"verdict": "PASS", "round": i}
        assert (stored.evidence_score, stored.verifier_verdict) == (30, "PASS")


def test_concurrent_writes_of_two_agent_keys_both_survive(app, session, make):
    ws = make.workspace()
    run = make.run(ws, status="RUNNING")
    run_pk, token = run.id, Actor.for_token(1, ws.id)
    for i in range(50):
        _concurrently(
            app,
            lambda s, i=i: evaluations.write_evaluation_key(
                s, token, run_pk, "aiops_rule_evaluation", {"verdict": "PASS", "n": i}),
            lambda s, i=i: evaluations.write_evaluation_key(
                s, token, run_pk, "verifier_evaluation", {"verdict": "REJECT", "n": i}),
        )
        session.rollback()  # end the read snapshot taken before the threads ran
        stored = session.get(Run, run_pk).self_evaluation
        assert stored["aiops_rule_evaluation"]["n"] == i and stored["verifier_evaluation"]["n"] == i


# --------------------------------------------------------------------- demo and rescore

# Worked out by hand from services/demo.py (tool calls after the lifecycle events).
DEMO_EXPECTED = {
    "demo-chat-checkout-502": (65, ["has_successful_tool_call", "l0_exact_match"], 3),
    "demo-chat-redis-rotate": (50, ["has_successful_tool_call", "l1_semantic_match"], 1),
    "demo-chat-latency-zh": (20, ["has_successful_tool_call", "retrieval_no_hit"], 1),
    # 4 documented calls + a compensated completed query_logs; trace_search never ended.
    "demo-aiops-payment-errors": (65, ["has_successful_tool_call", "l0_exact_match"], 5),
    "demo-aiops-disk-pressure": (0, ["execution_failed"], None),
}


def _load_demo(runner):
    result = runner.invoke(args=["demo", "load"])
    assert result.exit_code == 0, result.output


def test_every_demo_run_has_a_correct_rule_evaluation_after_demo_load(runner, session):
    _load_demo(runner)
    runs = {r.run_id: r for r in session.scalars(select(Run))}
    for run_id, (score, names, successes) in DEMO_EXPECTED.items():
        rule = runs[run_id].self_evaluation["rule_evaluation"]
        assert rule["evidence_score"] == score, run_id
        assert [f["name"] for f in rule["factors"]] == names, run_id
        assert runs[run_id].evidence_score == score
        if successes is not None:
            assert rule["factors"][0]["description"] == f"successful tool calls: {successes}"
    running = runs["demo-chat-running"]
    assert running.evidence_score is None
    assert "rule_evaluation" not in (running.self_evaluation or {})


def test_demo_alert_runs_have_aiops_checks_pass_and_fail(runner, session):
    _load_demo(runner)
    runs = {r.run_id: r for r in session.scalars(select(Run))}
    passing = runs["demo-aiops-payment-errors"].self_evaluation["aiops_rule_evaluation"]
    failing = runs["demo-aiops-disk-pressure"].self_evaluation["aiops_rule_evaluation"]
    assert (passing["verdict"], passing["mode"]) == ("PASS", "payload")
    assert all(c["passed"] for c in passing["checks"])
    assert failing["verdict"] == "FAIL"
    assert {c["name"] for c in failing["checks"] if not c["passed"]} >= {
        "final_report_present", "report_names_input_alert"}
    assert "aiops_rule_evaluation" not in runs["demo-chat-checkout-502"].self_evaluation


def test_demo_checkout_citations_two_verified_one_unverified(runner, session):
    _load_demo(runner)
    run = session.scalars(select(Run).where(Run.run_id == "demo-chat-checkout-502")).one()
    gate = run.self_evaluation["citation_gatekeeper"]
    assert [(c["citation_id"], c["status"]) for c in gate["citations"]] == [
        ("c1", "verified"), ("c2", "verified"), ("c3", "unverified")]


def test_rescore_is_idempotent_and_repairs_tampered_values(runner, session):
    _load_demo(runner)
    first = runner.invoke(args=["runs", "rescore"])
    assert first.exit_code == 0, first.output
    assert "6 scanned, 0 changed" in first.output  # ingest already scored everything
    table = Run.__table__
    session.execute(update(table).where(table.c.run_id == "demo-chat-redis-rotate")
                    .values(self_evaluation={"rule_evaluation": {"evidence_score": 99}},
                            evidence_score=99, verifier_verdict="PASS"))
    session.commit()
    repaired = runner.invoke(args=["runs", "rescore", "--workspace", DEMO_SLUG])
    assert "6 scanned, 1 changed" in repaired.output, repaired.output
    again = runner.invoke(args=["runs", "rescore"])
    assert "6 scanned, 0 changed" in again.output
    session.expire_all()
    run = session.scalars(select(Run).where(Run.run_id == "demo-chat-redis-rotate")).one()
    assert run.evidence_score == 50
    assert run.self_evaluation["rule_evaluation"]["evidence_score"] == 50
    # The verifier key was gone (tampered): its column copy follows the JSON.
    assert run.verifier_verdict is None


def test_rescore_filters_by_workspace_and_since(runner, session, make):
    _load_demo(runner)
    other = make.workspace()
    make.run(other, tool_calls=[_call("x")])
    only_other = runner.invoke(args=["runs", "rescore", "--workspace", other.slug])
    assert "1 scanned" in only_other.output
    future = runner.invoke(args=["runs", "rescore", "--since", "2999-01-01"])
    assert "0 scanned" in future.output
    unknown = runner.invoke(args=["runs", "rescore", "--workspace", "nope"])
    assert unknown.exit_code != 0 and "nope" in unknown.output


def test_rescore_in_small_batches_scores_runs_that_were_never_scored(session, make):
    ws = make.workspace()
    runs = [make.run(ws, tool_calls=[_call(f"{n}-a")]) for n in range(7)]
    table = Run.__table__
    session.execute(update(table).values(self_evaluation=None, evidence_score=None))
    session.commit()
    seen = []
    summary = evaluations.rescore_runs(session, SYSTEM, batch_size=3,
                                       progress=lambda done, total: seen.append((done, total)))
    assert (summary.scanned, summary.changed, summary.failed) == (7, 7, 0)
    assert seen == [(3, 7), (6, 7), (7, 7)]
    session.expire_all()
    assert {session.get(Run, r.id).evidence_score for r in runs} == {30}
    assert evaluations.rescore_runs(session, SYSTEM, batch_size=3).changed == 0


def test_rescore_by_a_workspace_admin_only_touches_their_workspaces(session, make):
    a, b = make.workspace(), make.workspace()
    make.run(a), make.run(b)
    admin = make.actor(make.user(a, "admin"))
    assert evaluations.rescore_runs(session, admin).scanned == 1
    with pytest.raises(Forbidden):
        evaluations.rescore_runs(session, admin, workspace_id=b.id)
    with pytest.raises(Forbidden):
        evaluations.rescore_runs(session, Actor.for_token(1, a.id))
    reviewer = make.actor(make.user(a, "reviewer"))
    assert evaluations.rescore_runs(session, reviewer).scanned == 0


def test_malformed_workspace_tools_fall_back_to_the_configured_tools(
        session, make, app_factory, monkeypatch):
    """Config AIOPS_EVIDENCE_TOOLS is the default; a workspace override that is not a
    {group: [names]} mapping is ignored."""
    monkeypatch.setitem(evaluations._settings, "evidence_tools",
                        evaluations._settings["evidence_tools"])  # restored after the test
    app_factory(AIOPS_EVIDENCE_TOOLS={"logs": ["my_logs"]})  # create_app applies the config
    ws = make.workspace(aiops_evidence_tools="not a mapping")
    run = _stored(session, make.run(ws, kind="aiops", report={"content": "done"},
                                    tool_calls=[_call("a", tool="my_logs")]))
    checks = run.self_evaluation["aiops_rule_evaluation"]["checks"]
    assert [(c["name"], c["passed"]) for c in checks] == [
        ("final_report_present", True), ("evidence_tool:logs", True)]
