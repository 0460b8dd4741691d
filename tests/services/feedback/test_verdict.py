"""The run verdict and everything it changes — case, triage item, automatic notes — at
the service layer (SPEC 3, 6.2, 7)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from reviewapp.actors import Actor
from reviewapp.errors import Forbidden, ValidationFailed
from reviewapp.extensions import db
from reviewapp.models import Case, DiagnosisSession, TriageEvent, TriageItem
from reviewapp.services import feedback, runs
from reviewapp.services.feedback import verdict
from reviewapp.services.feedback.verdict import (
    close_item_on_useful,
    get_or_create_auto_case,
    open_item_for_run,
)
from reviewapp.services.runs import finish_run

from ...shared_data import tau_run_answered_in_messages
from .helpers import answer_message, count, fresh, in_threads, target_in


def answer_message_with_text(run):
    return [m for m in run.messages if m.role == "assistant" and m.content.strip()][-1]

# --- answer-level ratings drive the verdict ---------------------------------------------------


def test_status_is_never_touched(session, make, ws, actor):
    run = make.run(ws, status="FAILED")
    message_id = answer_message(run).id
    calls = [
        lambda: feedback.upsert_feedback(session, actor, "chat_message", message_id, None, "positive"),
        lambda: feedback.upsert_feedback(session, actor, "chat_message", message_id, None, "negative"),
        lambda: feedback.upsert_feedback(session, actor, "citation", message_id, "c1", "negative"),
        lambda: feedback.set_run_verdict(session, actor, run.session.session_id, run.run_id, "useful"),
        lambda: feedback.set_run_verdict(session, actor, run.session.session_id, None, "not_useful"),
        lambda: feedback.delete_feedback(
            session, actor, feedback.list_my_feedback(session, actor, run.id)[0].id),
    ]
    for call in calls:
        call()
        assert fresh(session, run).status == "FAILED"


def test_positive_answer_rating_makes_the_run_useful_and_a_case(session, make, ws, actor):
    run = make.run(ws, query="Why is checkout slow?", answer="The cache was cold.")
    feedback.upsert_feedback(session, actor, "chat_message", answer_message(run).id, None, "positive")
    run = fresh(session, run)
    assert run.feedback == "useful"
    case = session.scalars(select(Case)).one()
    assert (case.diagnosis_id, case.run_pk, case.title, case.root_cause, case.solution) == (
        run.run_id, run.id, "Why is checkout slow?", "The cache was cold.", "The cache was cold.")
    assert count(session, TriageItem) == 0


def test_negative_answer_rating_opens_a_triage_item(session, make, ws, actor):
    run = make.aiops_run(ws)
    feedback.upsert_feedback(session, actor, "diagnostic_report", run.report.id, None, "negative",
                             "incomplete")
    assert fresh(session, run).feedback == "not_useful"
    item = session.scalars(select(TriageItem)).one()
    assert (item.run_pk, item.state, item.opened_reason) == (run.id, "new", "not_useful")
    assert count(session, Case) == 0


@pytest.mark.parametrize("target_type", ["citation", "diagnostic_step"])
def test_part_ratings_do_not_set_the_verdict(session, make, ws, actor, target_type):
    run, target_id, subject = target_in(make, ws, target_type)
    feedback.upsert_feedback(session, actor, target_type, target_id, subject, "negative")
    assert fresh(session, run).feedback is None
    assert count(session, TriageItem) == 0


def test_earlier_assistant_message_is_not_the_answer(session, make, ws, actor):
    run = make.run(ws, messages=[
        {"id": "u1", "role": "user", "content": "q"},
        {"id": "a1", "role": "assistant", "content": "let me look"},
        {"id": "t1", "role": "tool", "content": "{}"},
        {"id": "a2", "role": "assistant", "content": "the answer"},
    ])
    first, final = [m for m in run.messages if m.role == "assistant"]
    feedback.upsert_feedback(session, actor, "chat_message", first.id, None, "negative")
    assert fresh(session, run).feedback is None
    feedback.upsert_feedback(session, actor, "chat_message", final.id, None, "negative")
    assert fresh(session, run).feedback == "not_useful"


def test_answer_is_the_last_assistant_message_with_text_not_a_later_tool_call_only_one(
        session, make, ws, actor):
    """tau-bench runs end with an assistant message that only carries tool calls; the
    answer thumbs (the run page's last assistant message with text) must set the verdict."""
    run = make.run(ws, messages=[
        {"id": "u1", "role": "user", "content": "q"},
        {"id": "a1", "role": "assistant", "content": "the answer"},
        {"id": "a2", "role": "assistant", "content": "  ",
         "metadata": {"tool_call_ids": ["call-1"]}},
    ])
    with_text, tool_only = [m for m in run.messages if m.role == "assistant"]
    feedback.upsert_feedback(session, actor, "chat_message", tool_only.id, None, "positive")
    assert fresh(session, run).feedback is None
    feedback.upsert_feedback(session, actor, "chat_message", with_text.id, None, "positive")
    assert fresh(session, run).feedback == "useful"
    detail_answer = runs.get_run_detail(session, actor, run.id).answer_message
    assert detail_answer.id == with_text.id


def test_report_of_a_chat_run_is_not_the_answer(session, make, ws, actor):
    run = make.run(ws, report={"content": "extra"})
    feedback.upsert_feedback(session, actor, "diagnostic_report", run.report.id, None, "negative")
    assert fresh(session, run).feedback is None


def test_verdict_follows_the_latest_answer_rating_and_delete_rederives_it(session, make, ws, actor):
    run = make.run(ws)
    message_id = answer_message(run).id
    colleague = make.actor(make.user(ws))
    mine = feedback.upsert_feedback(session, actor, "chat_message", message_id, None, "positive")
    mine_id = mine.id
    assert fresh(session, run).feedback == "useful"
    theirs = feedback.upsert_feedback(session, colleague, "chat_message", message_id, None, "negative")
    theirs_id = theirs.id
    assert fresh(session, run).feedback == "not_useful"
    item = session.scalars(select(TriageItem)).one()
    assert item.state == "new"
    summary = feedback.feedback_summary(session, actor, run.id)[("chat_message", message_id, "")]
    assert summary.disagree

    feedback.delete_feedback(session, colleague, theirs_id)
    assert fresh(session, run).feedback == "useful"  # my positive is the latest left
    item = fresh(session, item)
    assert item.state == "resolved" and item.note is None  # said in its history instead

    feedback.delete_feedback(session, actor, mine_id)
    assert fresh(session, run).feedback is None  # none left
    # The verdict left useful: the unedited AUTO case is withdrawn, kept as a row (SPEC 7).
    assert count(session, Case) == 1
    assert session.scalars(select(Case)).one().withdrawn_at is not None


def test_changing_my_answer_rating_flips_the_verdict(session, make, ws, actor):
    run = make.run(ws)
    message_id = answer_message(run).id
    feedback.upsert_feedback(session, actor, "chat_message", message_id, None, "negative")
    feedback.upsert_feedback(session, actor, "chat_message", message_id, None, "positive")
    assert fresh(session, run).feedback == "useful"
    item = session.scalars(select(TriageItem)).one()
    assert item.state == "resolved"


def test_negative_part_rating_opens_triage_when_the_workspace_asks(session, make):
    ws = make.workspace(triage_negative_targets=True)
    actor = make.actor(make.user(ws))
    run, step_id, _ = target_in(make, ws, "diagnostic_step")
    feedback.upsert_feedback(session, actor, "diagnostic_step", step_id, None, "negative")
    item = session.scalars(select(TriageItem)).one()
    assert (item.run_pk, item.opened_reason, item.state) == (run.id, "negative_target", "new")
    assert fresh(session, run).feedback is None


# --- the run verdict (POST /api/feedback) ------------------------------------------------------


def test_useful_twice_gives_the_same_case(session, make, ws, actor):
    run = make.run(ws)
    a = feedback.set_run_verdict(session, actor, run.session.session_id, run.run_id, "useful")
    b = feedback.set_run_verdict(session, actor, run.session.session_id, run.run_id, "useful")
    assert a.case_id is not None and a.case_id == b.case_id
    assert (a.success, a.run_id, a.fallback_to_latest_run) == (True, run.run_id, False)
    assert count(session, Case) == 1


def test_concurrent_useful_gives_one_case(app, session, make, ws, actor):
    run = make.run(ws)
    session_id, run_id = run.session.session_id, run.run_id
    session.close()
    results = in_threads(app, 8, lambda i: feedback.set_run_verdict(
        db.session, actor, session_id, run_id, "useful").case_id)
    assert [r for r in results if isinstance(r, Exception)] == []
    assert len(set(results)) == 1 and results[0] is not None
    assert count(session, Case) == 1


def test_not_useful_opens_triage_and_answers_no_case(session, make, ws, actor):
    run = make.run(ws)
    result = feedback.set_run_verdict(session, actor, run.session.session_id, run.run_id, "not_useful")
    assert result.case_id is None
    assert fresh(session, run).feedback == "not_useful"
    assert session.scalars(select(TriageItem.run_pk)).all() == [run.id]


def test_run_of_another_session_is_refused_without_writing(session, make, ws, actor):
    run = make.run(ws, session_id="session-a")
    other = make.run(ws, session_id="session-b")
    with pytest.raises(ValidationFailed) as error:
        feedback.set_run_verdict(session, actor, "session-b", run.run_id, "useful")
    assert error.value.field == "runId"
    assert fresh(session, run).feedback is None and fresh(session, other).feedback is None
    assert count(session, Case) == 0 and count(session, TriageItem) == 0


def test_unknown_or_foreign_run_is_forbidden(session, make, ws, actor):
    foreign = make.run(make.workspace(), session_id="s-foreign")
    with pytest.raises(Forbidden):
        feedback.set_run_verdict(session, actor, "s-foreign", foreign.run_id, "useful")
    with pytest.raises(Forbidden):
        feedback.set_run_verdict(session, actor, "s-foreign", None, "useful")
    with pytest.raises(Forbidden):
        feedback.set_run_verdict(session, actor, "nope", "nope", "useful")
    assert fresh(session, foreign).feedback is None


def test_without_run_id_the_latest_run_is_used(session, make, ws, actor):
    older = make.run(ws, session_id="conversation")
    newer = make.run(ws, session_id="conversation")
    result = feedback.set_run_verdict(session, actor, "conversation", None, "not_useful")
    assert (result.run_id, result.fallback_to_latest_run) == (newer.run_id, True)
    assert fresh(session, newer).feedback == "not_useful"
    assert fresh(session, older).feedback is None


def test_legacy_session_gets_the_verdict_itself(session, make, ws, actor):
    legacy = DiagnosisSession(session_id="legacy-1", workspace_id=ws.id, kind="chat",
                              query="Old question " + "x" * 120, answer="Old answer",
                              status="SUCCESS")
    session.add(legacy)
    session.commit()
    result = feedback.set_run_verdict(session, actor, "legacy-1", None, "useful")
    assert (result.run_id, result.fallback_to_latest_run) == (None, False)
    assert fresh(session, legacy).feedback == "useful"
    case = session.get(Case, result.case_id)
    assert (case.diagnosis_id, case.run_pk, case.title, case.solution) == (
        "legacy-1", None, ("Old question " + "x" * 120)[:100], "Old answer")
    down = feedback.set_run_verdict(session, actor, "legacy-1", None, "not_useful")
    assert down.case_id is None and fresh(session, legacy).feedback == "not_useful"


def test_session_without_runs_that_is_not_legacy_is_refused(session, make, ws, actor):
    session.add(DiagnosisSession(session_id="empty", workspace_id=ws.id, kind="chat"))
    session.commit()
    with pytest.raises(ValidationFailed) as error:
        feedback.set_run_verdict(session, actor, "empty", None, "useful")
    assert error.value.field == "sessionId"


@pytest.mark.parametrize("verdict", ["meh", "", None, "USEFUL", 1])
def test_other_verdicts_are_refused(session, make, ws, actor, verdict):
    run = make.run(ws)
    with pytest.raises(ValidationFailed) as error:
        feedback.set_run_verdict(session, actor, run.session.session_id, run.run_id, verdict)
    assert error.value.field == "feedback"
    assert fresh(session, run).feedback is None


def test_ingest_token_may_set_the_verdict_in_its_workspace_only(session, make, ws):
    run = make.run(ws)
    token = Actor.for_token(1, ws.id)
    assert feedback.set_run_verdict(session, token, run.session.session_id, run.run_id,
                                    "useful").success
    foreign = make.run(make.workspace())
    with pytest.raises(Forbidden):
        feedback.set_run_verdict(session, token, foreign.session.session_id, foreign.run_id, "useful")


# --- the automatic case of a useful run (the feedback services' hook)


def test_auto_case_maps_the_run_fields(session, make):
    ws = make.workspace()
    query = "为什么支付服务超时？" * 15  # 150 characters
    run = make.run(ws, query=query, answer="连接池耗尽 🔥")
    case = get_or_create_auto_case(session, run)
    session.commit()
    assert case.diagnosis_id == run.run_id and case.run_pk == run.id
    assert case.workspace_id == ws.id
    assert case.title == query[:100] and len(case.title) == 100
    assert case.root_cause == case.solution == "连接池耗尽 🔥"
    assert (case.source_type, case.fault_category, case.created_by) == ("AUTO", "GENERAL", "system")
    assert len(case.case_id) == 36 and case.version == 1


def test_auto_case_is_reused_and_edits_survive(session, make):
    run = make.run(make.workspace())
    first = get_or_create_auto_case(session, run)
    first.fault_category = "DATABASE"
    first.source_type = "MANUAL"
    session.commit()
    again = get_or_create_auto_case(session, run)
    session.commit()
    assert again.case_id == first.case_id
    assert (again.fault_category, again.source_type) == ("DATABASE", "MANUAL")
    assert session.scalar(select(func.count()).select_from(Case)) == 1


def test_same_run_id_in_two_workspaces_gets_two_cases(session, make):
    a = make.run(make.workspace(), run_id="shared-id")
    b = make.run(make.workspace(), run_id="shared-id")
    assert get_or_create_auto_case(session, a).case_id != get_or_create_auto_case(session, b).case_id


def test_legacy_session_maps_to_its_session_id(session, make):
    ws = make.workspace()
    legacy = DiagnosisSession(session_id="old-42", workspace_id=ws.id, kind="aiops",
                              query="disk full", answer="rotate logs", status="SUCCESS")
    session.add(legacy)
    session.commit()
    case = get_or_create_auto_case(session, legacy)
    session.commit()
    assert (case.diagnosis_id, case.run_pk, case.title, case.root_cause) == (
        "old-42", None, "disk full", "rotate logs")


def test_run_without_answer_gets_an_empty_case_body(session, make):
    run = make.run(make.workspace(), query="", answer=None, messages=[])
    case = get_or_create_auto_case(session, run)
    assert (case.title, case.root_cause, case.solution) == ("", None, None)


@pytest.mark.parametrize(("status", "answer", "reason"), [
    ("RUNNING", "partial", "the run is still RUNNING"),
    ("SUCCESS", None, "the run has no answer"),
    ("FAILED", "  ", "the run has no answer"),
    ("RUNNING", None, "the run is still RUNNING and has no answer yet"),
])
def test_only_finished_runs_with_an_answer_are_promoted(session, make, status, answer, reason):
    """SPEC 7: a case holds the run's answer, so a run still running or without an answer
    is not promoted (no empty case); once finished with an answer it is. No assistant
    message carries one either (a message's answer counts: the test below)."""
    run = make.run(make.workspace(), status=status, answer=answer,
                   messages=[{"id": "u1", "role": "user", "content": "q"}])
    assert verdict.promotion_blocker(session, run) == reason
    assert verdict.promote_useful(session, run) is None
    assert session.scalar(select(func.count()).select_from(Case)) == 0


def test_useful_run_becomes_a_case_when_it_finishes_with_an_answer(session, make):
    ws = make.workspace()
    run = make.run(ws, "r-live", session_id="S", status="RUNNING", answer=None)
    result = feedback.set_run_verdict(session, Actor.system_actor(), "S", "r-live", "useful")
    assert (result.case_id, session.scalar(select(func.count()).select_from(Case))) == (None, 0)
    finish_run(session, Actor.system_actor(), ws.id, "r-live", {"status": "SUCCESS", "answer": "rotate logs"})
    case = session.scalars(select(Case)).one()
    assert (case.diagnosis_id, case.root_cause, case.source_type) == ("r-live", "rotate logs", "AUTO")
    assert verdict.promotion_blocker(session, run) is None


# --- opening and auto-closing (the feedback services' hooks)


def test_open_is_idempotent(session, make):
    run = make.run(make.workspace(), status="SUCCESS")
    first = open_item_for_run(session, run, "not_useful")
    session.commit()
    second = open_item_for_run(session, run, "not_useful")
    session.commit()
    assert first.id == second.id and second.version == 1
    assert (second.state, second.opened_reason, second.workspace_id) == (
        "new", "not_useful", run.workspace_id)
    assert session.scalar(select(func.count()).select_from(TriageItem)) == 1
    assert run.status == "SUCCESS"


def test_resolved_item_is_reopened_and_wont_fix_is_kept(session, make):
    ws = make.workspace()
    resolved_run, ignored_run = make.run(ws), make.run(ws)
    resolved = open_item_for_run(session, resolved_run)
    ignored = open_item_for_run(session, ignored_run)
    resolved.state, resolved.note = "resolved", "fixed in agent v2"
    ignored.state = "wont_fix"
    session.commit()
    again = open_item_for_run(session, resolved_run)
    kept = open_item_for_run(session, ignored_run)
    session.commit()
    assert (again.state, again.resolved_at, again.note, again.version) == (
        "new", None, "fixed in agent v2", 2)
    assert (kept.state, kept.version) == ("wont_fix", 1)


def test_not_useful_upgrades_an_item_opened_for_a_part(session, make):
    run = make.run(make.workspace())
    item = open_item_for_run(session, run, "negative_target")
    session.commit()
    item = open_item_for_run(session, run, "not_useful")
    assert (item.opened_reason, item.version) == ("not_useful", 2)


@pytest.mark.parametrize("state", ["new", "triaged"])
def test_useful_resolves_an_open_not_useful_item_in_its_history(session, make, state):
    """Issue 17: the automatic resolution is an entry of the item's history with its
    time; the lead's note is left as the lead wrote it."""
    run = make.run(make.workspace())
    item = open_item_for_run(session, run)
    item.state, item.note = state, "looking at it"
    session.commit()
    closed = close_item_on_useful(session, run)
    session.commit()
    assert closed.state == "resolved" and closed.resolved_at is not None
    assert closed.note == "looking at it"
    event = session.scalars(select(TriageEvent)).one()
    assert (event.item_id, event.action, event.actor_id) == (closed.id, "auto_resolved", None)
    assert event.detail == "the run's verdict became useful" and event.created_at is not None


def test_flipping_back_and_forth_keeps_the_note_and_logs_each_flip(session, make):
    run = make.run(make.workspace())
    item = open_item_for_run(session, run)
    item.note = "looking at it"
    session.commit()
    for _ in range(3):
        close_item_on_useful(session, run)
        session.commit()
        open_item_for_run(session, run, "not_useful")
        session.commit()
    closed = close_item_on_useful(session, run)
    session.commit()
    assert closed.state == "resolved"
    assert closed.note == "looking at it"
    actions = session.scalars(select(TriageEvent.action).order_by(TriageEvent.id)).all()
    assert actions == ["auto_resolved", "auto_reopened"] * 3 + ["auto_resolved"]


def test_useful_leaves_part_items_and_lead_decisions_alone(session, make):
    ws = make.workspace()
    part_run, wont_run, bare_run = make.run(ws), make.run(ws), make.run(ws)
    open_item_for_run(session, part_run, "negative_target")
    open_item_for_run(session, wont_run).state = "wont_fix"
    session.commit()
    assert close_item_on_useful(session, part_run).state == "new"
    assert close_item_on_useful(session, wont_run).state == "wont_fix"
    assert close_item_on_useful(session, bare_run) is None


TOOL_ONLY_LAST = [
    {"id": "u1", "role": "user", "content": "q"},
    {"id": "a1", "role": "assistant", "content": "the answer"},
    {"id": "a2", "role": "assistant", "content": " \n\t ", "metadata": {"tool_call_ids": ["call-1"]}},
]


def test_after_a_delete_the_verdict_rests_on_the_answer_with_text(session, make, ws, actor):
    """One definition of the answer (the last assistant message with text): the verdict
    re-derived after a delete looked at the last assistant message (a tool-call-only
    one here), found no rating and cleared a verdict a remaining rating still gives."""
    run = make.run(ws, messages=TOOL_ONLY_LAST)
    answer = next(m for m in run.messages if m.message_id == "a1")
    colleague = make.actor(make.user(ws))
    feedback.upsert_feedback(session, actor, "chat_message", answer.id, None, "positive")
    theirs = feedback.upsert_feedback(session, colleague, "chat_message", answer.id, None,
                                      "negative").id
    assert fresh(session, run).feedback == "not_useful"
    feedback.delete_feedback(session, colleague, theirs)
    assert fresh(session, run).feedback == "useful"  # my positive is the latest left


def test_two_reviewers_decide_on_the_answer_with_text(session, make, ws, actor):
    """N = 2: both rate the answer (a tool-call-only assistant message after it); their
    ratings decide the verdict (they were not counted: the verdict stayed empty)."""
    from reviewapp.actors import Role
    from reviewapp.services import review_queues as rq

    run = make.run(ws, messages=TOOL_ONLY_LAST)
    answer = next(m for m in run.messages if m.message_id == "a1")
    rq.create_queue(session, make.actor(make.user(ws, Role.LEAD)), ws.id, "Pairs", {},
                    reviewers_per_run=2)
    colleague = make.actor(make.user(ws))
    for who in (actor, colleague):
        feedback.upsert_feedback(session, who, "chat_message", answer.id, None, "positive")
    assert fresh(session, run).feedback == "useful"


def test_a_run_answered_only_in_its_messages_becomes_a_case_with_that_answer(session, make, ws, actor):
    """SPEC 7: the case holds the answer the run page shows; a real τ-bench run sent with
    its answer only as the last assistant message (no ``answer`` field) is promoted with
    that text, and the verdict's message names no blocker."""
    doc, answer = tau_run_answered_in_messages()
    run = runs.upsert_run(session, Actor.system_actor(), ws.id, "tau-messages-only", doc).run
    assert run.answer is None
    assert verdict.promotion_blocker(session, run) is None
    result = feedback.set_run_verdict(session, actor, doc["session_id"], run.run_id, "useful")
    assert "no case" not in result.message and result.case_id is not None
    case = session.scalars(select(Case)).one()
    assert (case.case_id, case.root_cause, case.solution) == (result.case_id, answer, answer)


def test_a_blank_answer_field_gives_way_to_the_answer_message(session, make, ws, actor):
    run = make.run(ws, answer="  \n", messages=[
        {"id": "u1", "role": "user", "content": "q"},
        {"id": "a1", "role": "assistant", "content": "restart the pod"},
        {"id": "a2", "role": "assistant", "content": " "}])
    feedback.upsert_feedback(session, actor, "chat_message", answer_message_with_text(run).id, None,
                             "positive")
    assert session.scalars(select(Case.root_cause)).one() == "restart the pod"


@pytest.mark.parametrize("run_id_sent", [True, False])
def test_the_verdict_api_does_not_overrule_a_queue_of_several_reviewers(session, make, ws, actor,
                                                                        run_id_sent):
    """SPEC 6.2: in a review queue that asks for N > 1 reviewers per run, the verdict is
    the N ratings' majority or a lead's decision. ``POST /api/feedback`` on such a run is
    a Conflict naming the queue, nothing written (new-user finding: it set a disputed
    run's verdict to useful and made a case while the run still waited for a lead)."""
    from reviewapp.actors import Role
    from reviewapp.errors import Conflict
    from reviewapp.models import Case
    from reviewapp.services import review_queues as rq

    run = make.run(ws)
    answer = answer_message_with_text(run)
    rq.create_queue(session, make.actor(make.user(ws, Role.LEAD)), ws.id, "Pairs", {},
                    reviewers_per_run=2)
    colleague = make.actor(make.user(ws))
    feedback.upsert_feedback(session, actor, "chat_message", answer.id, None, "positive")
    feedback.upsert_feedback(session, colleague, "chat_message", answer.id, None, "negative")
    assert fresh(session, run).feedback is None  # disputed: waits for a lead
    with pytest.raises(Conflict) as refused:
        feedback.set_run_verdict(session, actor, run.session.session_id,
                                 run.run_id if run_id_sent else None, "useful")
    assert refused.value.message == (
        f"run {run.run_id}'s verdict is decided by the review queue 'Pairs' "
        "(2 reviewers per run, or a lead's decision): rate its answer there")
    assert refused.value.details == {"queue": "Pairs", "reviewersPerRun": 2}
    session.rollback()
    assert fresh(session, run).feedback is None
    assert count(session, Case) == 0
