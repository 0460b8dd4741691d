"""Run documents: validation with field paths, upsert by the agent's ids, children with
feedback kept (SPEC 10), tenancy of run ids, finishing a run."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select

from reviewapp.actors import Actor
from reviewapp.errors import Conflict, Forbidden, ValidationFailed
from reviewapp.models import DiagnosticStep, Feedback, Message, Run, ToolCall
from reviewapp.services.runs import finish_run, upsert_run

SYSTEM = Actor.system_actor()


def doc(**overrides):
    body = {
        "session_id": "s-1", "kind": "aiops", "query": "Why 502?", "answer": "OOM", "status": "SUCCESS",
        "started_at": "2026-05-01T12:00:00", "finished_at": "2026-05-01T12:01:00Z",
        "messages": [{"id": "m1", "role": "user", "content": "Why 502?"},
                     {"id": "m2", "role": "assistant", "content": "OOM",
                      "metadata": {"citations": [{"id": "c1", "title": "Runbook", "source": "kb://r", "excerpt": "x"}],
                                   "tool_call_ids": ["t1"]}}],
        "steps": [{"id": "s1", "name": "Collect"}, {"id": "s2", "name": "Analyse"}],
        "report": {"content": "# Report"},
        "tool_calls": [{"id": "t1", "tool_name": "query_logs", "status": "completed", "output": "oom",
                        "started_at": "2026-05-01T12:00:10Z", "completed_at": "2026-05-01T12:00:11.5Z",
                        "step_id": "s1"},
                       {"id": "t2", "tool_name": "kb_search", "status": "failed", "error": "timeout",
                        "retrieval": {"match_level": None, "hit_count": 0}}],
        "verifier_evaluation": {"verdict": "PASS", "groundedness_score": 0.9},
    }
    body.update(overrides)
    return body


def count(session, model) -> int:
    return session.scalar(select(func.count()).select_from(model))


def test_upsert_creates_then_reingest_is_unchanged(session, ws):
    first = upsert_run(session, SYSTEM, ws.id, "r1", doc())
    assert (first.result, first.tool_calls, first.failed_tool_calls) == ("created", 2, 1)
    run = first.run
    assert run.started_at == datetime(2026, 5, 1, 12, 0, tzinfo=UTC)  # naive = UTC
    assert run.self_evaluation["verifier_evaluation"]["verdict"] == "PASS" and run.verifier_verdict == "PASS"
    t1 = session.get(ToolCall, (ws.id, "t1"))
    assert (t1.duration_ms, t1.step_pk is not None, t1.diagnostic_task_id, t1.chat_session_id) == (
        1500, True, run.diagnosis_session_id, None)
    counts = [count(session, m) for m in (Run, Message, DiagnosticStep, ToolCall)]
    again = upsert_run(session, SYSTEM, ws.id, "r1", doc())
    assert again.result == "unchanged"
    assert [count(session, m) for m in (Run, Message, DiagnosticStep, ToolCall)] == counts


def test_reingest_updates_fields_and_adds_children(session, ws):
    upsert_run(session, SYSTEM, ws.id, "r1", doc())
    body = doc(answer="OOM after deploy")
    body["messages"].append({"id": "m3", "role": "user", "content": "thanks"})
    assert upsert_run(session, SYSTEM, ws.id, "r1", body).result == "updated"
    session.expire_all()
    run = session.scalars(select(Run)).one()
    assert run.answer == "OOM after deploy"
    assert [(m.message_id, m.ordinal) for m in run.messages] == [("m1", 1), ("m2", 2), ("m3", 3)]


def test_a_new_verifier_evaluation_alone_is_an_update(session, ws):
    upsert_run(session, SYSTEM, ws.id, "r1", doc())
    result = upsert_run(session, SYSTEM, ws.id, "r1", doc(verifier_evaluation={"verdict": "REJECT"}))
    assert result.result == "updated" and result.run.verifier_verdict == "REJECT"


def test_children_with_feedback_are_never_deleted_or_rekeyed(session, ws, make):
    run = upsert_run(session, SYSTEM, ws.id, "r1", doc()).run
    reviewer = make.user(ws)
    m2 = session.scalars(select(Message).where(Message.message_id == "m2")).one()
    s1 = session.scalars(select(DiagnosticStep).where(DiagnosticStep.step_id == "s1")).one()
    for target_type, target_id, subject in (("chat_message", m2.id, ""), ("citation", m2.id, "c1"),
                                            ("diagnostic_step", s1.id, "")):
        session.add(Feedback(author_id=reviewer.id, workspace_id=ws.id, run_pk=run.id, target_type=target_type,
                             target_id=target_id, subject_key=subject, rating="negative"))
    session.commit()
    body = doc(messages=[{"id": "m9", "role": "user", "content": "new"},
                         {"id": "m2", "role": "assistant", "content": "OOM", "metadata": {"citations": []}}],
               steps=[{"id": "s2", "name": "Analyse"}])
    body["messages"].pop()  # m2 (rated) is absent now; m1 (unrated) too
    upsert_run(session, SYSTEM, ws.id, "r1", body)
    session.expire_all()
    messages = list(session.scalars(select(Message).order_by(Message.ordinal)))
    assert [(m.message_id, m.ordinal) for m in messages] == [("m9", 1), ("m2", 2)]
    assert messages[1].id == m2.id and [c["id"] for c in messages[1].citations] == ["c1"]
    steps = list(session.scalars(select(DiagnosticStep).order_by(DiagnosticStep.ordinal)))
    assert [(s.step_id, s.id == s1.id) for s in steps] == [("s2", False), ("s1", True)]


def test_rated_citation_is_kept_when_its_message_is_resent_without_it(session, ws, make):
    run = upsert_run(session, SYSTEM, ws.id, "r1", doc()).run
    reviewer = make.user(ws)
    m2 = session.scalars(select(Message).where(Message.message_id == "m2")).one()
    session.add(Feedback(author_id=reviewer.id, workspace_id=ws.id, run_pk=run.id, target_type="citation",
                         target_id=m2.id, subject_key="c1", rating="positive"))
    session.commit()
    body = doc()
    body["messages"][1]["metadata"]["citations"] = [{"id": "c2", "title": "Other"}]
    upsert_run(session, SYSTEM, ws.id, "r1", body)
    session.expire_all()
    assert [c["id"] for c in session.get(Message, m2.id).citations] == ["c2", "c1"]


def test_reordering_children_keeps_their_rows(session, ws):
    upsert_run(session, SYSTEM, ws.id, "r1", doc())
    ids = {s.step_id: s.id for s in session.scalars(select(DiagnosticStep))}
    upsert_run(session, SYSTEM, ws.id, "r1", doc(steps=[{"id": "s2", "name": "Analyse"}, {"id": "s1", "name": "Collect"}]))
    session.expire_all()
    assert [(s.step_id, s.id, s.ordinal) for s in session.scalars(select(DiagnosticStep).order_by(DiagnosticStep.ordinal))] == [
        ("s2", ids["s2"], 1), ("s1", ids["s1"], 2)]


def test_same_run_id_in_another_workspace_is_a_different_run(session, make):
    ws_a, ws_b = make.workspace(), make.workspace()
    upsert_run(session, SYSTEM, ws_a.id, "r1", doc(query="A"))
    token_b = Actor.for_token(7, ws_b.id)
    result = upsert_run(session, token_b, ws_b.id, "r1", doc(query="B"))
    assert result.result == "created"
    queries = {r.workspace_id: r.query for r in session.scalars(select(Run))}
    assert queries == {ws_a.id: "A", ws_b.id: "B"}
    assert count(session, ToolCall) == 4  # call ids are per workspace too
    with pytest.raises(Forbidden):
        upsert_run(session, token_b, ws_a.id, "r1", doc())


@pytest.mark.parametrize(("body", "field"), [
    (doc(kind="batch"), "kind"),
    (doc(statsu="SUCCESS"), "statsu"),
    (doc(messages=[{"role": "user", "content": "x", "metadata": {"citatons": []}}]), "messages[0].metadata.citatons"),
    (doc(messages=[{"role": "robot"}]), "messages[0].role"),
    (doc(steps=[{"name": "x", "started_at": "soon"}]), "steps[0].started_at"),
    (doc(tool_calls=[{"id": "a", "tool_name": "t", "status": "done"}]), "tool_calls[0].status"),
    (doc(tool_calls=[{"id": "a", "tool_name": "t"}, {"id": "a", "tool_name": "t"}]), "tool_calls[1].id"),
    (doc(tool_calls=[{"id": "a", "tool_name": "t", "completed_at": "2026-13-01"}]), "tool_calls[0].completed_at"),
    (doc(tool_calls=[{"id": "a", "tool_name": "t", "retrieval": {"hit_count": -1}}]), "tool_calls[0].retrieval.hit_count"),
    (doc(messages=[{"id": "m", "role": "user"}, {"id": "m", "role": "user"}]), "messages[1].id"),
    (doc(query="bad \ud800 text"), "query"),
    (doc(answer="nul \x00 byte"), "answer"),
    (doc(external_outcome="x" * 33), "external_outcome"),
    (doc(run_id="other"), "run_id"),
    (doc(started_at=True), "started_at"),
])
def test_invalid_documents_name_the_field_path(session, ws, body, field):
    with pytest.raises(ValidationFailed) as err:
        upsert_run(session, SYSTEM, ws.id, "r1", body)
    assert err.value.field == field
    assert count(session, Run) == 0


def test_tool_call_id_of_another_run_is_refused(session, ws):
    upsert_run(session, SYSTEM, ws.id, "r1", doc())
    with pytest.raises(ValidationFailed) as err:
        upsert_run(session, SYSTEM, ws.id, "r2", doc(session_id="s-2"))
    assert err.value.field == "tool_calls[0].id"


def test_changing_kind_moves_tool_calls_to_the_right_parent(session, ws):
    upsert_run(session, SYSTEM, ws.id, "r1", doc(kind="aiops"))
    run = upsert_run(session, SYSTEM, ws.id, "r1", doc(kind="chat")).run
    session.expire_all()
    parents = {(t.chat_session_id, t.diagnostic_task_id) for t in session.scalars(select(ToolCall))}
    assert parents == {(run.diagnosis_session_id, None)}


def test_finish_sets_status_answer_and_time(session, ws):
    upsert_run(session, SYSTEM, ws.id, "r1", doc(status="RUNNING", finished_at=None))
    result = finish_run(session, SYSTEM, ws.id, "r1",
                        {"status": "FAILED", "answer": "gave up", "finished_at": "2026-05-01T13:00:00"})
    assert (result.result, result.run.status, result.run.answer, result.run.finished_at) == (
        "updated", "FAILED", "gave up", datetime(2026, 5, 1, 13, tzinfo=UTC))
    again = finish_run(session, SYSTEM, ws.id, "r1", {"status": "FAILED"})
    assert again.result == "unchanged"
    with pytest.raises(Conflict) as err:
        finish_run(session, SYSTEM, ws.id, "r1", {"status": "SUCCESS"})
    assert err.value.details["status"] == "FAILED"


def test_finish_defaults_to_now_and_refuses_bad_bodies(session, ws):
    upsert_run(session, SYSTEM, ws.id, "r1", doc(status="RUNNING", finished_at=None))
    before = datetime.now(UTC)
    run = finish_run(session, SYSTEM, ws.id, "r1", {"status": "SUCCESS"}).run
    assert run.finished_at >= before.replace(microsecond=0)
    for body, field in (({"status": "DONE"}, "status"), ({"status": "SUCCESS", "answr": "x"}, "answr"),
                        ({}, "status"), ({"status": "SUCCESS", "finished_at": "later"}, "finished_at")):
        with pytest.raises(ValidationFailed) as err:
            finish_run(session, SYSTEM, ws.id, "r1", body)
        assert err.value.field == field


def test_finish_of_missing_or_foreign_run_is_forbidden(session, make):
    ws_a, ws_b = make.workspace(), make.workspace()
    upsert_run(session, SYSTEM, ws_a.id, "r1", doc(status="RUNNING"))
    with pytest.raises(Forbidden):
        finish_run(session, Actor.for_token(1, ws_b.id), ws_b.id, "r1", {"status": "SUCCESS"})
    with pytest.raises(Forbidden):
        finish_run(session, Actor.for_token(1, ws_b.id), ws_b.id, "nope", {"status": "SUCCESS"})
    assert session.scalars(select(Run)).one().status == "RUNNING"


# --- times and numbers that cannot be right (SPEC 4, 5, 10) -----------------------------

@pytest.mark.parametrize(("body", "field"), [
    ({"started_at": "2026-05-01T12:00:00Z", "finished_at": "2026-05-01T11:59:59Z"}, "finished_at"),
    ({"steps": [{"id": "s1", "name": "a", "started_at": "2026-05-01T12:00:05Z",
                 "finished_at": "2026-05-01T12:00:04Z"}]}, "steps[0].finished_at"),
    ({"tool_calls": [{"id": "t1", "tool_name": "x", "started_at": "2026-05-01T12:00:05Z",
                      "completed_at": "2026-05-01T12:00:04Z"}]}, "tool_calls[0].completed_at"),
    ({"started_at": "1999-12-31T23:59:59Z"}, "started_at"),
    ({"finished_at": "2101-01-01T00:00:00Z"}, "finished_at"),
    ({"started_at": 1}, "started_at"),
    ({"steps": [{"name": "a", "started_at": "0001-01-01T00:00:00"}]}, "steps[0].started_at"),
    ({"tool_calls": [{"id": "t1", "tool_name": "x", "completed_at": "9999-12-31T00:00:00Z"}]},
     "tool_calls[0].completed_at"),
    ({"verifier_evaluation": {"verdict": "PASS", "groundedness_score": 1e308}},
     "verifier_evaluation.groundedness_score"),
    ({"verifier_evaluation": {"verdict": "PASS", "groundedness_score": -0.5}},
     "verifier_evaluation.groundedness_score"),
    ({"self_evaluation": {"verdict": "PASS", "groundedness_score": 101}}, "self_evaluation.groundedness_score"),
    ({"self_evaluation": {"verifier_evaluation": {"groundedness_score": 1e308}}},
     "self_evaluation.verifier_evaluation.groundedness_score"),
    ({"self_evaluation": {"evidence_score": 1e300}}, "self_evaluation.evidence_score"),
    ({"orchestration_trace": {"cost": float("inf")}}, "orchestration_trace.cost"),
])
def test_impossible_times_and_scores_are_400_naming_the_field(session, ws, body, field):
    with pytest.raises(ValidationFailed) as err:
        upsert_run(session, SYSTEM, ws.id, "r1", {"query": "q", **body})
    assert err.value.field == field
    assert count(session, Run) == 0


def test_scores_on_either_published_scale_are_kept(session, ws):
    """SPEC 5: groundedness is 0-1 or 0-100; both ends of both scales are accepted."""
    for run_id, score in (("r0", 0), ("r1", 1), ("r2", 0.93), ("r3", 100)):
        out = upsert_run(session, SYSTEM, ws.id, run_id,
                         {"query": "q", "verifier_evaluation": {"verdict": "PASS", "groundedness_score": score}})
        assert out.run.self_evaluation["verifier_evaluation"]["groundedness_score"] == score


def test_finish_before_the_start_is_400_naming_finished_at(session, ws):
    upsert_run(session, SYSTEM, ws.id, "r1", {"query": "q", "started_at": "2026-05-01T12:00:00Z"})
    with pytest.raises(ValidationFailed) as err:
        finish_run(session, SYSTEM, ws.id, "r1", {"status": "SUCCESS", "finished_at": "2026-05-01T11:00:00Z"})
    assert err.value.field == "finished_at"
    assert session.scalars(select(Run)).one().status == "RUNNING"
    with pytest.raises(ValidationFailed) as err:
        finish_run(session, SYSTEM, ws.id, "r1", {"status": "SUCCESS", "finished_at": 4133980800})  # 2101-01-01
    assert err.value.field == "finished_at"
    done = finish_run(session, SYSTEM, ws.id, "r1", {"status": "SUCCESS", "finished_at": "2026-05-01T12:00:00Z"})
    assert done.run.finished_at == datetime(2026, 5, 1, 12, 0, tzinfo=UTC)  # zero length is fine


@pytest.mark.parametrize("partial", [{"query": "Why 502?"}, {"query": "Why 502?", "status": "RUNNING"}])
def test_put_cannot_move_a_finished_run_back_to_running(session, ws, partial):
    """PUT is a whole-document replace (status defaults to RUNNING), but a finished run
    never becomes RUNNING again: 409 naming ``status``, nothing changed."""
    upsert_run(session, SYSTEM, ws.id, "r1", doc())
    with pytest.raises(Conflict) as err:
        upsert_run(session, SYSTEM, ws.id, "r1", partial)
    assert err.value.message.startswith("status: ")
    assert err.value.details == {"run_id": "r1", "status": "SUCCESS",
                                 "finished_at": "2026-05-01T12:01:00+00:00"}
    session.expire_all()
    run = session.scalars(select(Run)).one()
    assert (run.status, run.answer, count(session, Message)) == ("SUCCESS", "OOM", 2)


def test_put_may_resend_or_correct_a_finished_run(session, ws):
    upsert_run(session, SYSTEM, ws.id, "r1", doc())
    assert upsert_run(session, SYSTEM, ws.id, "r1", doc()).result == "unchanged"
    assert upsert_run(session, SYSTEM, ws.id, "r1", doc(status="FAILED")).run.status == "FAILED"


@pytest.mark.parametrize("run_id", ["a/b", "run-é", "-lead", "x" * 161, "", " ", "a\x00b", "ok\n"])
def test_run_id_must_match_the_published_pattern(session, ws, run_id):
    """run_id: ASCII letters, digits and ``._:@-``, 1-160 characters, starting with a
    letter or digit (no ``/``: run ids are one URL path segment)."""
    with pytest.raises(ValidationFailed) as err:
        upsert_run(session, SYSTEM, ws.id, run_id, {"query": "q"})
    assert err.value.field == "run_id"
    with pytest.raises(ValidationFailed) as err:
        finish_run(session, SYSTEM, ws.id, run_id, {"status": "SUCCESS"})
    assert err.value.field == "run_id"
    assert count(session, Run) == 0


@pytest.mark.parametrize("kind", ["chat", "aiops"])
def test_an_answer_sent_only_with_finish_becomes_a_rateable_answer_message(session, make, ws, kind):
    """The README's flow (PUT a RUNNING run without assistant text, then finish with the
    answer) must give a run whose answer can be rated and sets the verdict."""
    from reviewapp.services import feedback

    running = doc(kind=kind, status="RUNNING", answer=None, finished_at=None, report=None, steps=[],
                  tool_calls=[], verifier_evaluation=None,
                  messages=[{"id": "u1", "role": "user", "content": "Why 502?"}])
    upsert_run(session, SYSTEM, ws.id, "late", running)
    assert count(session, Message) == 1  # nothing is made up while the run is going
    finish_run(session, SYSTEM, ws.id, "late", {"status": "SUCCESS", "answer": "Pods were **OOM**-killed.",
                                               "finished_at": "2026-05-01T12:01:00Z"})
    messages = session.scalars(select(Message).order_by(Message.ordinal)).all()
    assert [(m.role, m.content, m.message_id) for m in messages] == [
        ("user", "Why 502?", "u1"), ("assistant", "Pods were **OOM**-killed.", "run-answer")]
    reviewer = make.actor(make.user(ws))
    feedback.upsert_feedback(session, reviewer, "chat_message", messages[1].id, None, "positive")
    assert session.scalar(select(Run.feedback).where(Run.run_id == "late")) == "useful"
    # Re-sending the agent's document (without that message) changes nothing.
    resent = upsert_run(session, SYSTEM, ws.id, "late", {
        **running, "status": "SUCCESS", "answer": "Pods were **OOM**-killed.",
        "finished_at": "2026-05-01T12:01:00Z"})
    assert resent.result == "unchanged" and count(session, Message) == 2


def test_no_answer_message_is_made_when_the_agent_sent_one(session, ws):
    upsert_run(session, SYSTEM, ws.id, "r1", doc())
    assert [m.message_id for m in session.scalars(select(Message).order_by(Message.ordinal))] == ["m1", "m2"]
