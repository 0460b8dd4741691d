"""Ratings of what the agent did (issue 19, SPEC 6.1): a tool call of the audit and a
conversation turn (an assistant message that is not the answer) — validation, the owner
check, the upsert race, history, delete, list, and what a negative rating opens."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.errors import Forbidden, ValidationFailed
from reviewapp.extensions import db
from reviewapp.models import Feedback, FeedbackEvent, Run, TriageItem
from reviewapp.services import exports, feedback
from reviewapp.services.exports import FeedbackFilters

from .helpers import (
    CALL_ID,
    MISSING_ID,
    answer_message,
    chat_run_with_turns,
    count,
    fresh,
    in_threads,
    turn_of,
)


@pytest.fixture
def run(make, ws):
    return chat_run_with_turns(make, ws)


# --- validation ---------------------------------------------------------------------------


def test_a_tool_call_rating_needs_the_call_id(session, actor, run):
    for subject in (None, "  "):
        with pytest.raises(ValidationFailed) as error:
            feedback.upsert_feedback(session, actor, "tool_call", run.id, subject, "negative")
        assert error.value.field == "subject_id"
    with pytest.raises(ValidationFailed) as error:
        feedback.upsert_feedback(session, actor, "tool_call", run.id, "c" * 161, "negative")
    assert error.value.field == "subject_id"
    with pytest.raises(ValidationFailed) as error:
        feedback.upsert_feedback(session, actor, "tool_call", str(run.id), CALL_ID, "negative")
    assert error.value.field == "target_id"
    assert count(session, Feedback) == 0


def test_a_turn_has_no_subject(session, actor, run):
    with pytest.raises(ValidationFailed) as error:
        feedback.upsert_feedback(session, actor, "conversation_turn", turn_of(run).id, "c1",
                                 "positive")
    assert error.value.field == "subject_id"


def test_validation_comes_before_the_owner_check(session, make, actor):
    other = chat_run_with_turns(make, make.workspace())
    with pytest.raises(ValidationFailed):
        feedback.upsert_feedback(session, actor, "tool_call", other.id, CALL_ID, "meh")
    with pytest.raises(ValidationFailed):
        feedback.upsert_feedback(session, actor, "conversation_turn", MISSING_ID, None,
                                 "negative", comment="x" * 2001)


# --- owner check ---------------------------------------------------------------------------


def test_a_call_of_another_run_or_an_unknown_call_is_forbidden_like_a_missing_one(
        session, make, ws, actor, run):
    other_run = make.run(ws, tool_calls=[
        {"id": "call-elsewhere", "tool_name": "search", "status": "completed"}])
    answers = []
    for target_id, subject in [(MISSING_ID, CALL_ID), (run.id, "call-elsewhere"),
                               (other_run.id, CALL_ID), (run.id, "no-such-call")]:
        with pytest.raises(Forbidden) as error:
            feedback.upsert_feedback(session, actor, "tool_call", target_id, subject, "negative")
        answers.append(error.value.to_dict())
    assert answers == [Forbidden().to_dict()] * 4
    assert count(session, Feedback) == 0


def test_the_same_call_id_in_a_foreign_workspace_is_not_reachable(session, make, actor, run):
    """Call ids are unique per workspace only: a foreign run holding the same call id is
    403, and so is the foreign run's id with the call id of one's own run."""
    foreign = chat_run_with_turns(make, make.workspace())
    with pytest.raises(Forbidden) as error:
        feedback.upsert_feedback(session, actor, "tool_call", foreign.id, CALL_ID, "negative")
    assert error.value.to_dict() == Forbidden().to_dict()
    assert count(session, Feedback) == 0
    own = feedback.upsert_feedback(session, actor, "tool_call", run.id, CALL_ID, "negative")
    assert (own.run_pk, own.target_id, own.subject_key) == (run.id, run.id, CALL_ID)


def test_the_answer_and_other_messages_are_not_turns(session, actor, run):
    user_message = next(m for m in run.messages if m.role == "user")
    tool_message = next(m for m in run.messages if m.role == "tool")
    for message in (answer_message(run), user_message, tool_message):
        with pytest.raises(Forbidden) as error:
            feedback.upsert_feedback(session, actor, "conversation_turn", message.id, None,
                                     "negative")
        assert error.value.to_dict() == Forbidden().to_dict()
    assert count(session, Feedback) == 0


# --- upsert, race, history, delete, list ----------------------------------------------------


@pytest.mark.parametrize("target_type", ["tool_call", "conversation_turn"])
def test_upsert_keeps_id_and_history_records_each_change(session, actor, reviewer, run,
                                                         target_type):
    target_id, subject = (run.id, CALL_ID) if target_type == "tool_call" else (turn_of(run).id, None)
    first = feedback.upsert_feedback(session, actor, target_type, target_id, subject, "negative",
                                     "incorrect", "said updated, the call failed", "say it failed")
    first_id, created_at = first.id, first.created_at
    second = feedback.upsert_feedback(session, actor, target_type, target_id, subject, "positive")
    assert (second.id, second.created_at, second.rating, second.reason) == (
        first_id, created_at, "positive", None)
    feedback.delete_feedback(session, actor, first_id)
    assert feedback.list_my_feedback(session, actor, run.id) == []
    history = feedback.feedback_history(session, actor, run.id)
    assert [(e.action, e.target_type, e.target_id, e.subject_key) for e in history] == [
        (action, target_type, target_id, subject or "") for action in ("create", "update", "delete")]
    assert history[0].after == {"rating": "negative", "reason": "incorrect",
                                "comment": "said updated, the call failed",
                                "correction": "say it failed"}
    assert {e.actor_id for e in history} == {reviewer.id}


@pytest.mark.parametrize("target_type", ["tool_call", "conversation_turn"])
def test_racing_first_submits_make_one_row(app, session, make, ws, actor, target_type):
    run = chat_run_with_turns(make, ws)
    target_id, subject = (run.id, CALL_ID) if target_type == "tool_call" else (turn_of(run).id, None)
    run_pk = run.id
    session.close()

    def submit(i: int) -> int:
        return feedback.upsert_feedback(db.session, actor, target_type, target_id, subject,
                                        "negative").id

    results = in_threads(app, 8, submit)
    assert [r for r in results if isinstance(r, Exception)] == []
    assert len(set(results)) == 1
    assert count(session, Feedback) == 1
    assert [e.action for e in session.scalars(select(FeedbackEvent))] == ["create"]
    # A part rating never sets the verdict.
    assert session.get(Run, run_pk).feedback is None


def test_each_call_is_its_own_target_and_lists_by_run(session, make, ws, actor, run):
    feedback.upsert_feedback(session, actor, "tool_call", run.id, CALL_ID, "negative")
    feedback.upsert_feedback(session, actor, "tool_call", run.id, "call-2", "positive")
    feedback.upsert_feedback(session, actor, "chat_message", answer_message(run).id, None,
                             "positive")
    every_call = feedback.list_my_feedback_for_target(session, actor, "tool_call", run.id)
    assert [(f.subject_key, f.rating) for f in every_call] == [
        ("call-2", "positive"), (CALL_ID, "negative")]
    one = feedback.list_my_feedback_for_target(session, actor, "tool_call", run.id, CALL_ID)
    assert [f.subject_key for f in one] == [CALL_ID]
    foreign = chat_run_with_turns(make, make.workspace())
    with pytest.raises(Forbidden):
        feedback.list_my_feedback_for_target(session, actor, "tool_call", foreign.id)
    with pytest.raises(Forbidden):
        feedback.list_my_feedback_for_target(session, actor, "tool_call", MISSING_ID)


def test_a_negative_call_rating_opens_a_triage_item_only_when_the_workspace_says_so(
        session, make):
    quiet = make.workspace()
    opening = make.workspace(triage_negative_targets=True)
    runs = {}
    for name, workspace in (("quiet", quiet), ("opening", opening)):
        rater = make.user(workspace)
        run = chat_run_with_turns(make, workspace)
        feedback.upsert_feedback(session, make.actor(rater), "tool_call", run.id, CALL_ID,
                                 "negative")
        runs[name] = run
    items = {i.run_pk: i.opened_reason for i in session.scalars(select(TriageItem))}
    assert runs["quiet"].id not in items
    assert runs["opening"].id in items and items[runs["opening"].id] != "not_useful"
    assert fresh(session, runs["opening"]).feedback is None


def test_a_rated_turn_survives_a_resend_that_drops_it(session, make, ws, actor, run):
    """SPEC 10: a child that carries feedback is never deleted."""
    turn_id = turn_of(run).id
    feedback.upsert_feedback(session, actor, "conversation_turn", turn_id, None, "negative")
    make.run(ws, run.run_id, messages=[
        {"id": "u1", "role": "user", "content": "Change my flight to HAT170."},
        {"id": "a2", "role": "assistant", "content": "Your flight was updated."},
    ])
    session.expire_all()
    assert turn_id in {m.id for m in fresh(session, run).messages}


# --- exports and the eval set ----------------------------------------------------------------


def test_feedback_export_and_eval_set_carry_call_and_turn_ratings(session, make, ws, actor,
                                                                  reviewer, run):
    admin = make.actor(make.user(ws, Role.ADMIN))
    turn_id = turn_of(run).id
    feedback.upsert_feedback(session, actor, "tool_call", run.id, CALL_ID, "negative",
                             "incorrect", "flight was not available", "say the change failed")
    feedback.upsert_feedback(session, actor, "conversation_turn", turn_id, None, "positive")
    rows = sorted(exports.export_feedback(session, admin).rows, key=lambda r: r["target_type"])
    assert [(r["target_type"], r["target_id"], r["subject"], r["rating"], r["reason"],
             r["comment"], r["correction"], r["run_id"], r["reviewer"]) for r in rows] == [
        ("conversation_turn", turn_id, "", "positive", None, None, None, run.run_id,
         reviewer.username),
        ("tool_call", run.id, CALL_ID, "negative", "incorrect", "flight was not available",
         "say the change failed", run.run_id, reviewer.username),
    ]
    only_calls = exports.export_feedback(session, admin, FeedbackFilters(target_type="tool_call"))
    assert [r["subject"] for r in only_calls.rows] == [CALL_ID]
    lines = list(exports.export_evalset(session, admin).rows)
    assert [(line["run_id"], line["corrections"]) for line in lines] == [(run.run_id, [{
        "reviewer": reviewer.username, "target_type": "tool_call", "subject": CALL_ID,
        "rating": "negative", "reason": "incorrect", "correction": "say the change failed"}])]
