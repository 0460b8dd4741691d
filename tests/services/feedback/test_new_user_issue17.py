"""Issue 17, items 1-4: what a verdict and a rating leave behind (SPEC 6.1, 7, 10).

1. switching the thumb keeps comment and correction, drops a reason of the other polarity;
2. a verdict leaving useful withdraws an unedited AUTO case (kept, restored when useful
   again) and flags an edited one;
3. automatic triage notes are history entries with their time, and withdrawing the only
   negative rating resolves the item;
4. a re-send that changes a rated part's text keeps the earlier text and marks the
   rating "given on an earlier version" (page state and export).
"""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.errors import ValidationFailed
from reviewapp.models import Case, Feedback, FeedbackEvent, TargetRevision, TriageEvent, TriageItem
from reviewapp.services import cases, exports, feedback, review, runs, triage
from reviewapp.services.cases import CaseFilters

from .helpers import answer_message, fresh

# --- 1. switching the thumb ---------------------------------------------------------------


def test_switching_the_thumb_keeps_comment_and_correction(session, make, ws, actor):
    run = make.run(ws)
    mid = answer_message(run).id
    feedback.upsert_feedback(session, actor, "chat_message", mid, None, "negative",
                             reason="incorrect", comment="wrong pod", correction="It was the DB.")
    # Helpful, from the thumbs buttons (no texts sent)
    up = feedback.upsert_feedback(session, actor, "chat_message", mid, None, "positive", switch=True)
    # 'incorrect' is a negative-only reason: dropped; the texts stay
    assert (up.rating, up.reason, up.comment, up.correction) == (
        "positive", None, "wrong pod", "It was the DB.")
    # Not helpful again: the texts are still there (the reason was dropped for good)
    down = feedback.upsert_feedback(session, actor, "chat_message", mid, None, "negative", switch=True)
    assert (down.rating, down.reason, down.comment, down.correction) == (
        "negative", None, "wrong pod", "It was the DB.")
    row = session.scalars(select(Feedback)).one()
    assert (row.comment, row.correction) == ("wrong pod", "It was the DB.")
    # The history records what each switch changed
    events = session.scalars(select(FeedbackEvent).order_by(FeedbackEvent.id)).all()
    assert [(e.before or {}).get("reason") for e in events] == [None, "incorrect", None]
    assert [e.after["rating"] for e in events] == ["negative", "positive", "negative"]
    assert all(e.after["comment"] == "wrong pod" for e in events)


def test_switch_keeps_a_reason_that_fits_both_ratings(session, make, ws, actor):
    run = make.run(ws)
    mid = answer_message(run).id
    feedback.upsert_feedback(session, actor, "chat_message", mid, None, "negative",
                             reason="other", comment="hm")
    up = feedback.upsert_feedback(session, actor, "chat_message", mid, None, "positive", switch=True)
    assert (up.reason, up.comment) == ("other", "hm")


def test_a_full_submit_with_a_wrong_polarity_reason_is_still_refused(session, make, ws, actor):
    run = make.run(ws)
    with pytest.raises(ValidationFailed) as caught:
        feedback.upsert_feedback(session, actor, "chat_message", answer_message(run).id, None,
                                 "positive", reason="incorrect")
    assert caught.value.field == "reason"


def test_a_first_switch_is_a_plain_rating(session, make, ws, actor):
    run = make.run(ws)
    row = feedback.upsert_feedback(session, actor, "chat_message", answer_message(run).id, None,
                                   "negative", reason="incorrect", switch=True)
    assert (row.rating, row.reason, row.comment) == ("negative", None, None)


# --- 2. cases that outlive their verdict ---------------------------------------------------


def _case(session, run):
    session.expire_all()
    return session.scalars(select(Case).where(Case.run_pk == run.id)).one()


def _library_ids(session, actor):
    return [r.case.case_id for r in cases.list_cases(session, actor).rows]


def test_unedited_auto_case_is_withdrawn_and_restored(session, make, ws, actor):
    admin = make.actor(make.user(ws, Role.ADMIN))
    run = make.run(ws)
    mid = answer_message(run).id
    feedback.upsert_feedback(session, actor, "chat_message", mid, None, "positive")
    case_id = _case(session, run).case_id
    assert _library_ids(session, actor) == [case_id]

    feedback.upsert_feedback(session, actor, "chat_message", mid, None, "negative", switch=True)
    case = _case(session, run)
    assert case.withdrawn_at is not None and case.run_not_useful_at is None  # kept as a row
    assert _library_ids(session, actor) == []
    exported = list(exports.export_cases(session, admin, CaseFilters()).rows)
    assert exported == []
    detail = triage.get_item(session, admin, session.scalars(select(TriageItem.id)).one())
    assert detail.case is None  # no "Case of this run" link to a withdrawn case
    assert runs.get_run_detail(session, actor, run.id).case_id is None

    feedback.upsert_feedback(session, actor, "chat_message", mid, None, "positive", switch=True)
    case = _case(session, run)
    assert (case.case_id, case.withdrawn_at) == (case_id, None)
    assert _library_ids(session, actor) == [case_id]


def test_edited_case_stays_and_is_flagged(session, make, ws, actor):
    lead = make.actor(make.user(ws, Role.LEAD))
    run = make.run(ws)
    mid = answer_message(run).id
    feedback.upsert_feedback(session, actor, "chat_message", mid, None, "positive")
    case = _case(session, run)
    cases.edit_case(session, lead, case.case_id, case.version, {
        "title": "Curated", "fault_category": "", "root_cause": "x", "solution": "y",
        "error_code": "", "service": ""})

    feedback.upsert_feedback(session, actor, "chat_message", mid, None, "negative", switch=True)
    case = _case(session, run)
    assert case.withdrawn_at is None and case.run_not_useful_at is not None
    assert _library_ids(session, actor) == [case.case_id]

    feedback.upsert_feedback(session, actor, "chat_message", mid, None, "positive", switch=True)
    assert _case(session, run).run_not_useful_at is None


def test_verdict_api_flip_withdraws_too(session, make, ws, actor):
    run = make.run(ws)
    sid = run.session.session_id
    feedback.set_run_verdict(session, actor, sid, run.run_id, "useful")
    feedback.set_run_verdict(session, actor, sid, run.run_id, "not_useful")
    assert _case(session, run).withdrawn_at is not None


# --- 3. automatic notes, and the item left behind by a deleted rating ------------------------


def test_reopened_item_keeps_no_stale_automatic_note(session, make, ws, actor):
    lead = make.actor(make.user(ws, Role.LEAD))
    run = make.run(ws)
    mid = answer_message(run).id
    feedback.upsert_feedback(session, actor, "chat_message", mid, None, "negative")
    feedback.upsert_feedback(session, actor, "chat_message", mid, None, "positive", switch=True)
    feedback.upsert_feedback(session, actor, "chat_message", mid, None, "negative", switch=True)
    item = session.scalars(select(TriageItem)).one()
    assert (item.state, item.note) == ("new", None)
    events = triage.get_item(session, lead, item.id).item_events
    assert [(e.action, e.automatic, e.detail) for e in events] == [
        ("auto_resolved", True, "the run's verdict became useful"),
        ("auto_reopened", True, "the run was judged not useful again"),
    ]
    assert events[0].at <= events[1].at


def test_deleting_the_only_negative_rating_resolves_the_item(session, make, ws, actor):
    run = make.run(ws)
    row = feedback.upsert_feedback(session, actor, "chat_message", answer_message(run).id, None,
                                   "negative")
    feedback.delete_feedback(session, actor, row.id)
    assert fresh(session, run).feedback is None
    item = session.scalars(select(TriageItem)).one()
    assert item.state == "resolved" and item.resolved_at is not None and item.note is None
    event = session.scalars(select(TriageEvent)).one()
    assert event.action == "auto_resolved" and "withdrawn" in event.detail


def test_deleting_one_negative_of_two_leaves_the_item_open(session, make, ws, actor):
    colleague = make.actor(make.user(ws))
    run = make.run(ws)
    mid = answer_message(run).id
    mine = feedback.upsert_feedback(session, actor, "chat_message", mid, None, "negative")
    feedback.upsert_feedback(session, colleague, "chat_message", mid, None, "negative")
    feedback.delete_feedback(session, actor, mine.id)
    assert session.scalars(select(TriageItem)).one().state == "new"


def test_lead_actions_are_in_the_item_history(session, make, ws):
    lead_user = make.user(ws, Role.LEAD, username="lena")
    lead = make.actor(lead_user)
    item = make.triage_item(make.run(ws))
    row = triage.move(session, lead, item.id, item.version, "triaged")
    triage.assign(session, lead, item.id, row.version, lead_user.id)
    events = triage.get_item(session, lead, item.id).item_events
    assert [(e.actor, e.label, e.detail) for e in events] == [
        ("lena", "State changed", "New → Triaged"),
        ("lena", "Assignee changed", "assigned to lena"),
    ]


# --- 4. re-sending a rated message with other text ------------------------------------------------


def _doc(answer: str) -> dict:
    return {"session_id": "s-17", "kind": "chat", "query": "Why?", "answer": answer,
            "status": "SUCCESS", "messages": [
                {"id": "u1", "role": "user", "content": "Why?"},
                {"id": "a1", "role": "assistant", "content": answer}]}


def test_resend_keeps_earlier_text_and_marks_the_rating(session, make, ws, actor):
    admin = make.actor(make.user(ws, Role.ADMIN))
    run = runs.upsert_run(session, make.system, ws.id, "r17", _doc("The disk is full.")).run
    mid = answer_message(run).id
    feedback.upsert_feedback(session, actor, "chat_message", mid, None, "negative",
                             reason="incorrect")
    state = review.target_state(session, actor, "chat_message", mid, None)
    assert not state.earlier_version

    runs.upsert_run(session, make.system, ws.id, "r17", _doc("The network is down."))
    revisions = session.scalars(select(TargetRevision).order_by(TargetRevision.target_type)).all()
    assert [(r.target_type, r.target_id, r.content) for r in revisions] == [
        ("chat_message", mid, "The disk is full."), ("conversation_turn", mid, "The disk is full.")]
    assert review.target_state(session, actor, "chat_message", mid, None).earlier_version
    detail = runs.get_run_detail(session, actor, run.id)
    assert detail.target("chat_message", mid).earlier_version
    [row] = list(exports.export_feedback(session, admin).rows)  # read to the end (server cursor)
    assert row["earlier_version"] is True and row["query"] == "Why?"
    item_id = session.scalars(select(TriageItem.id)).one()
    assert [r.earlier_version for r in triage.get_item(session, admin, item_id).ratings] == [True]

    # Rating it again (on the text shown now) clears the mark
    feedback.upsert_feedback(session, actor, "chat_message", mid, None, "negative", reason="incomplete")
    assert not review.target_state(session, actor, "chat_message", mid, None).earlier_version


def test_resend_with_the_same_text_keeps_no_revision(session, make, ws, actor):
    run = runs.upsert_run(session, make.system, ws.id, "r18", _doc("Same.")).run
    feedback.upsert_feedback(session, actor, "chat_message", answer_message(run).id, None, "positive")
    runs.upsert_run(session, make.system, ws.id, "r18", _doc("Same."))
    assert session.scalars(select(TargetRevision)).all() == []


def test_resend_of_a_rated_report_and_step(session, make, ws, actor):
    run = make.aiops_run(ws, run_id="a17")
    step, report = run.steps[0], run.report
    feedback.upsert_feedback(session, actor, "diagnostic_step", step.id, None, "positive")
    feedback.upsert_feedback(session, actor, "diagnostic_report", report.id, None, "positive")
    make.aiops_run(ws, run_id="a17", steps=[
        {"id": "s1", "name": "Check disk usage", "status": "done", "summary": "40 %"},
        {"id": "s2", "name": "Check log rotation", "status": "done", "summary": "stopped"},
    ], report={"content": "# Report\nNew text."})
    got = {(r.target_type, r.target_id) for r in session.scalars(select(TargetRevision))}
    assert got == {("diagnostic_step", step.id), ("diagnostic_report", report.id)}
