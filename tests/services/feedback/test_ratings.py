"""Ratings of a run's parts and their history at the service layer (SPEC 6.1)."""

from __future__ import annotations

import pytest
from sqlalchemy import event, select

from reviewapp.actors import Actor
from reviewapp.errors import Forbidden, ValidationFailed
from reviewapp.extensions import db
from reviewapp.models import Case, Feedback, FeedbackEvent
from reviewapp.services import feedback

from .helpers import MISSING_ID, TARGET_TYPES, answer_message, count, fresh, in_threads, target_in

# --- owner check -------------------------------------------------------------------------


@pytest.mark.parametrize("target_type", TARGET_TYPES)
def test_own_target_is_rated(session, make, ws, actor, reviewer, target_type):
    run, target_id, subject = target_in(make, ws, target_type)
    row = feedback.upsert_feedback(session, actor, target_type, target_id, subject, "positive")
    assert (row.author_id, row.target_type, row.target_id, row.subject_key, row.rating) == (
        reviewer.id, target_type, target_id, subject or "", "positive")
    assert (row.run_pk, row.workspace_id) == (run.id, ws.id)


@pytest.mark.parametrize("target_type", TARGET_TYPES)
@pytest.mark.parametrize("where", ["other_workspace", "nonexistent"])
def test_foreign_or_missing_target_is_forbidden(session, make, actor, target_type, where):
    other = make.workspace()
    _, target_id, subject = target_in(make, other, target_type)
    if where == "nonexistent":
        target_id = MISSING_ID
    with pytest.raises(Forbidden) as error:
        feedback.upsert_feedback(session, actor, target_type, target_id, subject, "negative",
                                 "incorrect", "comment")
    assert error.value.to_dict() == Forbidden().to_dict()
    assert count(session, Feedback) == 0
    assert count(session, FeedbackEvent) == 0


def test_user_message_cannot_be_rated(session, make, ws, actor):
    run = make.run(ws)
    user_message = next(m for m in run.messages if m.role == "user")
    with pytest.raises(Forbidden):
        feedback.upsert_feedback(session, actor, "chat_message", user_message.id, None, "positive")
    with pytest.raises(Forbidden):
        feedback.upsert_feedback(session, actor, "citation", user_message.id, "c1", "positive")


def test_citation_id_must_be_in_the_message_metadata(session, make, ws, actor):
    run = make.run(ws)
    with pytest.raises(Forbidden):
        feedback.upsert_feedback(session, actor, "citation", answer_message(run).id, "c9", "positive")
    assert count(session, Feedback) == 0


def test_membership_of_another_workspace_does_not_help(session, make, ws):
    other = make.workspace()
    run, target_id, _ = target_in(make, other, "chat_message")
    outsider = make.actor(make.user(ws, "admin"))
    with pytest.raises(Forbidden):
        feedback.upsert_feedback(session, outsider, "chat_message", target_id, None, "positive")


@pytest.mark.parametrize("who", [Actor.for_token(1, 1), Actor.system_actor(), Actor()])
def test_only_people_rate(session, make, ws, who):
    run, target_id, _ = target_in(make, ws, "chat_message")
    with pytest.raises(Forbidden):
        feedback.upsert_feedback(session, who, "chat_message", target_id, None, "positive")


# --- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize("field, kwargs", [
    ("target_type", {"target_type": "run"}),
    ("rating", {"rating": "meh"}),
    ("rating", {"rating": None}),
    ("target_id", {"target_id": "12"}),
    ("target_id", {"target_id": True}),
    ("reason", {"reason": 5}),
    ("subject_id", {"subject_id": "c1"}),  # a chat_message has no subject
])
def test_bad_input_names_the_field(session, make, ws, actor, field, kwargs):
    run, target_id, _ = target_in(make, ws, "chat_message")
    args = {"target_type": "chat_message", "target_id": target_id, "subject_id": None,
            "rating": "positive"} | kwargs
    with pytest.raises(ValidationFailed) as error:
        feedback.upsert_feedback(session, actor, **args)
    assert error.value.field == field


def test_validation_comes_before_the_owner_check(session, make, actor):
    """An invalid rating of a foreign target is a 400, not a 403: nothing was looked up."""
    _, target_id, _ = target_in(make, make.workspace(), "chat_message")
    with pytest.raises(ValidationFailed):
        feedback.upsert_feedback(session, actor, "chat_message", target_id, None, "meh")
    with pytest.raises(ValidationFailed):
        feedback.upsert_feedback(session, actor, "chat_message", MISSING_ID, None, "positive",
                                 comment="x" * 2001)


def test_citation_needs_its_subject(session, make, ws, actor):
    run = make.run(ws)
    with pytest.raises(ValidationFailed) as error:
        feedback.upsert_feedback(session, actor, "citation", answer_message(run).id, "  ", "positive")
    assert error.value.field == "subject_id"


LONG_CID_CJK = "引" * 160
LONG_CID_EMOJI = "📎" * 160


@pytest.fixture
def long_run(make):
    """A workspace whose reason codes and citation ids sit exactly at the limits."""
    ws = make.workspace(feedback_reasons=["其" * 80, "🙈" * 80, "other"])
    run = make.run(ws, messages=[
        {"id": "u1", "role": "user", "content": "问题?"},
        {"id": "a1", "role": "assistant", "content": "答案。", "metadata": {"citations": [
            {"id": LONG_CID_CJK, "title": "t"}, {"id": LONG_CID_EMOJI, "title": "t"}]}},
    ])
    return ws, run


@pytest.mark.parametrize("text", ["界", "😀"])
def test_lengths_at_the_limit_pass_and_one_over_fails(session, make, long_run, text):
    ws, run = long_run
    actor = make.actor(make.user(ws))
    message_id = answer_message(run).id
    reason = "其" * 80 if text == "界" else "🙈" * 80
    subject = LONG_CID_CJK if text == "界" else LONG_CID_EMOJI
    row = feedback.upsert_feedback(session, actor, "citation", message_id, subject, "negative",
                                   reason, text * 2000, text * 4000)
    row = fresh(session, row)
    assert (len(row.subject_key), len(row.reason), len(row.comment), len(row.correction)) == (
        160, 80, 2000, 4000)
    assert row.comment == text * 2000 and row.correction == text * 4000
    over = {"subject_id": subject + text, "reason": reason + text, "comment": text * 2001,
            "correction": text * 4001}
    for field, value in over.items():
        args = {"target_type": "citation", "target_id": message_id, "subject_id": subject,
                "rating": "negative", "reason": reason, "comment": None, "correction": None}
        args[field] = value
        with pytest.raises(ValidationFailed) as error:
            feedback.upsert_feedback(session, actor, **args)
        assert error.value.field == field
    assert fresh(session, row).comment == text * 2000  # failed submits changed nothing


def test_whitespace_only_texts_become_null(session, make, ws, actor):
    run, target_id, _ = target_in(make, ws, "chat_message")
    row = feedback.upsert_feedback(session, actor, "chat_message", target_id, " \t", "negative",
                                   "   ", "\n\n", "\u3000 ")
    row = fresh(session, row)
    assert (row.subject_key, row.reason, row.comment, row.correction) == ("", None, None, None)


def test_unknown_reason_is_refused(session, make, ws, actor):
    run, target_id, _ = target_in(make, ws, "chat_message")
    with pytest.raises(ValidationFailed) as error:
        feedback.upsert_feedback(session, actor, "chat_message", target_id, None, "negative", "boring")
    assert error.value.field == "reason"
    assert count(session, Feedback) == 0


@pytest.mark.parametrize("reason", ["incorrect", "incomplete", "citation", "unsafe"])
def test_a_negative_only_reason_is_refused_with_a_positive_rating(session, make, ws, actor, reason):
    """SPEC 6.1 reasons say what is wrong: the default ones go with a negative rating only
    (domain/reasons.py polarity); ``other`` goes with either."""
    _, target_id, _ = target_in(make, ws, "chat_message")
    with pytest.raises(ValidationFailed) as error:
        feedback.upsert_feedback(session, actor, "chat_message", target_id, None, "positive", reason)
    assert error.value.field == "reason" and "positive" in error.value.reason
    assert count(session, Feedback) == 0
    row = feedback.upsert_feedback(session, actor, "chat_message", target_id, None, "positive", "other")
    assert (row.rating, row.reason) == ("positive", "other")


def test_workspace_reason_list_replaces_the_default(session, make):
    ws = make.workspace(feedback_reasons=["hallucination", "stale"])
    actor = make.actor(make.user(ws))
    run, target_id, _ = target_in(make, ws, "chat_message")
    assert feedback.feedback_reasons(session, actor, run.id) == ("hallucination", "stale")
    feedback.upsert_feedback(session, actor, "chat_message", target_id, None, "negative", "stale")
    with pytest.raises(ValidationFailed):
        feedback.upsert_feedback(session, actor, "chat_message", target_id, None, "negative",
                                 "incorrect")


# --- upsert ---------------------------------------------------------------------------------


def test_each_submit_replaces_the_rating_as_a_whole(session, make, ws, actor):
    run, target_id, _ = target_in(make, ws, "diagnostic_step")
    first = feedback.upsert_feedback(session, actor, "diagnostic_step", target_id, None, "negative",
                                     "incorrect", "wrong host", "check db-2")
    first_id, created_at = first.id, first.created_at
    second = feedback.upsert_feedback(session, actor, "diagnostic_step", target_id, None, "positive")
    second = fresh(session, second)
    assert second.id == first_id and second.created_at == created_at
    assert (second.rating, second.reason, second.comment, second.correction) == (
        "positive", None, None, None)
    assert second.updated_at >= created_at
    assert count(session, Feedback) == 1


def test_answer_and_three_citation_ratings_coexist(session, make, ws, actor):
    run = make.run(ws, messages=[
        {"id": "u1", "role": "user", "content": "q"},
        {"id": "a1", "role": "assistant", "content": "a", "metadata": {"citations": [
            {"id": "c1"}, {"id": "c2"}, {"id": "c3"}]}},
    ])
    message_id = answer_message(run).id
    feedback.upsert_feedback(session, actor, "chat_message", message_id, None, "positive")
    for cid, rating in (("c1", "positive"), ("c2", "negative"), ("c3", "positive")):
        feedback.upsert_feedback(session, actor, "citation", message_id, cid, rating)
    rows = feedback.list_my_feedback(session, actor, run.id)
    assert [(r.target_type, r.subject_key, r.rating) for r in rows] == [
        ("chat_message", "", "positive"), ("citation", "c1", "positive"),
        ("citation", "c2", "negative"), ("citation", "c3", "positive")]
    mine = feedback.list_my_feedback_for_target(session, actor, "citation", message_id)
    assert [r.subject_key for r in mine] == ["c1", "c2", "c3"]
    one = feedback.list_my_feedback_for_target(session, actor, "citation", message_id, "c2")
    assert [(r.subject_key, r.rating) for r in one] == [("c2", "negative")]
    answer = feedback.list_my_feedback_for_target(session, actor, "chat_message", message_id)
    assert [(r.target_type, r.rating) for r in answer] == [("chat_message", "positive")]


def test_lists_show_only_my_rows_and_only_visible_runs(session, make, ws, actor):
    run, target_id, _ = target_in(make, ws, "chat_message")
    colleague = make.actor(make.user(ws))
    feedback.upsert_feedback(session, colleague, "chat_message", target_id, None, "negative")
    assert feedback.list_my_feedback(session, actor, run.id) == []
    foreign_run, foreign_target, _ = target_in(make, make.workspace(), "chat_message")
    for call in (
        lambda: feedback.list_my_feedback(session, actor, foreign_run.id),
        lambda: feedback.list_my_feedback(session, actor, MISSING_ID),
        lambda: feedback.list_my_feedback_for_target(session, actor, "chat_message", foreign_target),
        lambda: feedback.feedback_summary(session, actor, foreign_run.id),
        lambda: feedback.feedback_history(session, actor, foreign_run.id),
    ):
        with pytest.raises(Forbidden):
            call()


def test_twenty_concurrent_first_submits_make_one_row(app, session, make, ws, actor):
    """SPEC 6.1: racing first submits end as one row and no error."""
    run, target_id, _ = target_in(make, ws, "chat_message")
    session.close()

    def submit(i: int) -> int:
        return feedback.upsert_feedback(db.session, actor, "chat_message", target_id, None,
                                        "positive").id

    results = in_threads(app, 20, submit)
    assert [r for r in results if isinstance(r, Exception)] == []
    assert len(set(results)) == 1
    assert count(session, Feedback) == 1
    events = session.scalars(select(FeedbackEvent)).all()
    assert [e.action for e in events] == ["create"]  # identical re-submits add no event
    assert count(session, Case) == 1
    assert fresh(session, run).feedback == "useful"


def test_identical_resubmit_adds_no_history(session, make, ws, actor):
    run, target_id, _ = target_in(make, ws, "diagnostic_step")
    for _ in range(3):
        feedback.upsert_feedback(session, actor, "diagnostic_step", target_id, None, "negative",
                                 "other", "same")
    assert [e.action for e in feedback.feedback_history(session, actor, run.id)] == ["create"]


# --- delete and history -------------------------------------------------------------------


def test_delete_someone_elses_rating_is_forbidden(session, make, ws, actor):
    run, target_id, _ = target_in(make, ws, "chat_message")
    colleague = make.actor(make.user(ws))
    theirs = feedback.upsert_feedback(session, colleague, "chat_message", target_id, None, "negative")
    with pytest.raises(Forbidden) as foreign:
        feedback.delete_feedback(session, actor, theirs.id)
    with pytest.raises(Forbidden) as missing:
        feedback.delete_feedback(session, actor, MISSING_ID)
    assert foreign.value.to_dict() == missing.value.to_dict()
    assert count(session, Feedback) == 1


def test_delete_then_rate_again(session, make, ws, actor):
    run, target_id, _ = target_in(make, ws, "diagnostic_report")
    first = feedback.upsert_feedback(session, actor, "diagnostic_report", target_id, None, "negative")
    first_id = first.id
    feedback.delete_feedback(session, actor, first_id)
    assert feedback.list_my_feedback(session, actor, run.id) == []
    again = feedback.upsert_feedback(session, actor, "diagnostic_report", target_id, None, "positive")
    assert again.id != first_id and again.rating == "positive"
    assert [r.id for r in feedback.list_my_feedback(session, actor, run.id)] == [again.id]


def test_an_event_is_timed_at_its_write(session, make, ws, actor):
    """A create / update event carries the time the rating was written (its updated_at,
    UTC), not a later clock reading of its own."""
    _, step_id, _ = target_in(make, ws, "diagnostic_step")
    written = [feedback.upsert_feedback(session, actor, "diagnostic_step", step_id, None, rating)
               for rating in ("positive", "negative")]
    events = session.scalars(select(FeedbackEvent).order_by(FeedbackEvent.id)).all()
    assert [(e.action, e.created_at, e.updated_at) for e in events] == [
        ("create", written[0].updated_at, written[0].updated_at),
        ("update", written[1].updated_at, written[1].updated_at)]
    assert written[0].updated_at < written[1].updated_at


def test_history_holds_every_change_in_order(session, make, ws, actor, reviewer):
    run, message_id, _ = target_in(make, ws, "citation")
    steps = [
        ("negative", "citation", "dead link", None),
        ("negative", "citation", "dead link", "use kb://three"),
        ("positive", None, None, None),
    ]
    for rating, reason, comment, correction in steps:
        row = feedback.upsert_feedback(session, actor, "citation", message_id, "c1", rating,
                                       reason, comment, correction)
    row_id = row.id
    feedback.delete_feedback(session, actor, row_id)
    again = feedback.upsert_feedback(session, actor, "citation", message_id, "c1", "negative")
    history = feedback.feedback_history(session, actor, run.id)

    def state(rating, reason, comment, correction):
        return {"rating": rating, "reason": reason, "comment": comment, "correction": correction}

    assert [(e.action, e.before, e.after) for e in history] == [
        ("create", None, state(*steps[0])),
        ("update", state(*steps[0]), state(*steps[1])),
        ("update", state(*steps[1]), state(*steps[2])),
        ("delete", state(*steps[2]), None),
        ("create", None, state("negative", None, None, None)),
    ]
    assert [e.feedback_id for e in history] == [row_id] * 4 + [again.id]
    assert {(e.actor_id, e.actor.username, e.subject_key, e.run_pk) for e in history} == {
        (reviewer.id, reviewer.username, "c1", run.id)}
    assert [e.id for e in history] == sorted(e.id for e in history)


# --- summary --------------------------------------------------------------------------------


def test_summary_counts_names_and_disagreement_without_n_plus_one(session, make, ws):
    ada, bob = make.user(ws, username="ada.lovelace"), make.user(ws, username="bob")
    run = make.run(ws, messages=[
        {"id": "u1", "role": "user", "content": "q"},
        {"id": "a1", "role": "assistant", "content": "a", "metadata": {"citations": [
            {"id": f"c{i}"} for i in range(10)]}},
    ])
    message_id = answer_message(run).id
    for i in range(10):
        feedback.upsert_feedback(session, make.actor(ada), "citation", message_id, f"c{i}", "positive")
    feedback.upsert_feedback(session, make.actor(bob), "citation", message_id, "c0", "negative")
    feedback.upsert_feedback(session, make.actor(bob), "citation", message_id, "c1", "positive")
    ada_actor, run_pk = make.actor(ada), run.id
    session.expire_all()

    statements: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    event.listen(db.engine, "before_cursor_execute", record)
    try:
        summary = feedback.feedback_summary(session, ada_actor, run_pk)
    finally:
        event.remove(db.engine, "before_cursor_execute", record)
    assert len([s for s in statements if not s.startswith("BEGIN")]) <= 2
    assert len(summary) == 10
    c0 = summary[("citation", message_id, "c0")]
    assert (c0.positive, c0.negative, c0.positive_initials, c0.negative_initials, c0.disagree) == (
        1, 1, ("AL",), ("BO",), True)
    assert c0.negative_reviewers == ("bob",)
    c1 = summary[("citation", message_id, "c1")]
    assert (c1.positive, c1.negative, c1.positive_reviewers, c1.disagree) == (
        2, 0, ("ada.lovelace", "bob"), False)


def test_two_reviewers_whose_initials_clash_are_shown_by_name(session, make, ws):
    """First new-user walk: 'reviewer' (thumbs up) and 'reviewer2' (thumbs down) both read
    "RE" on the one line that shows a target's ratings."""
    one, two = make.user(ws, username="reviewer"), make.user(ws, username="reviewer2")
    run = make.run(ws, messages=[{"id": "u1", "role": "user", "content": "q"},
                                 {"id": "a1", "role": "assistant", "content": "a"}])
    message_id = answer_message(run).id
    feedback.upsert_feedback(session, make.actor(one), "chat_message", message_id, None, "positive")
    feedback.upsert_feedback(session, make.actor(two), "chat_message", message_id, None, "negative")
    answer = feedback.feedback_summary(session, make.actor(one), run.id)[("chat_message", message_id, "")]
    assert (answer.positive_initials, answer.negative_initials) == (("reviewer",), ("reviewer2",))


def test_reviewers_whose_initials_clash_on_different_parts_are_shown_by_name(session, make, ws):
    """Second new-user walk: 'reviewer' rated one citation and 'reviewer2' another, one
    rater each: both read "RE" (the names were told apart only on one target's line)."""
    one, two = make.user(ws, username="reviewer"), make.user(ws, username="reviewer2")
    ada = make.user(ws, username="ada.lovelace")
    run = make.run(ws, messages=[
        {"id": "u1", "role": "user", "content": "q"},
        {"id": "a1", "role": "assistant", "content": "a", "metadata": {"citations": [
            {"id": "c1"}, {"id": "c2"}]}}])
    message_id = answer_message(run).id
    feedback.upsert_feedback(session, make.actor(one), "citation", message_id, "c1", "negative")
    feedback.upsert_feedback(session, make.actor(two), "citation", message_id, "c2", "negative")
    feedback.upsert_feedback(session, make.actor(ada), "citation", message_id, "c2", "positive")
    summary = feedback.feedback_summary(session, make.actor(one), run.id)
    assert summary[("citation", message_id, "c1")].negative_initials == ("reviewer",)
    c2 = summary[("citation", message_id, "c2")]
    assert (c2.positive_initials, c2.negative_initials) == (("AL",), ("reviewer2",))


def test_a_save_based_on_an_older_rating_is_a_conflict(session, make, ws, actor):
    from reviewapp.errors import Conflict
    from reviewapp.services.feedback import rating_version

    run = make.run(ws)
    answer = answer_message(run)
    first = feedback.upsert_feedback(session, actor, "chat_message", answer.id, None, "negative",
                                     "incorrect", "old")
    seen = rating_version(first)
    second = feedback.upsert_feedback(session, actor, "chat_message", answer.id, None, "positive",
                                      switch=True, based_on=seen)
    with pytest.raises(Conflict) as stale:
        feedback.upsert_feedback(session, actor, "chat_message", answer.id, None, "negative",
                                 "incorrect", "new", based_on=seen)
    assert stale.value.details["rating"] == "positive"
    assert stale.value.details["based_on"] == rating_version(second)
    session.rollback()
    assert fresh(session, second).rating == "positive"
    # No version (the JSON API): the last writer wins.
    feedback.upsert_feedback(session, actor, "chat_message", answer.id, None, "negative", "incorrect")
    assert fresh(session, second).rating == "negative"


def test_a_first_save_based_on_no_rating_conflicts_with_one_made_meanwhile(session, make, ws, actor):
    from reviewapp.errors import Conflict

    answer = answer_message(make.run(ws))
    feedback.upsert_feedback(session, actor, "chat_message", answer.id, None, "positive")
    with pytest.raises(Conflict):
        feedback.upsert_feedback(session, actor, "chat_message", answer.id, None, "negative",
                                 based_on="none")


def test_a_retired_reason_stays_on_a_rating_saved_unchanged_and_new_ones_are_refused_by_label(
        session, make):
    ws = make.workspace(feedback_reasons=["incomplete", "stale"])
    actor = make.actor(make.user(ws))
    run, target_id, _ = target_in(make, ws, "chat_message")
    feedback.upsert_feedback(session, actor, "chat_message", target_id, None, "negative", "incomplete")
    ws.settings = {**(ws.settings or {}), "feedback_reasons": ["stale", {"code": "xss_r",
                                                                         "label": "Script in answer"}]}
    session.commit()
    # Only the comment changes: the retired reason is kept, not a 422.
    row = feedback.upsert_feedback(session, actor, "chat_message", target_id, None, "negative",
                                   "incomplete", "only the comment changed")
    assert (row.reason, row.comment) == ("incomplete", "only the comment changed")
    other, other_id, _ = target_in(make, ws, "chat_message")
    with pytest.raises(ValidationFailed) as refused:  # a retired reason is not chosen anew
        feedback.upsert_feedback(session, actor, "chat_message", other_id, None, "negative",
                                 "incomplete")
    assert refused.value.reason == "must be one of Stale (stale), Script in answer (xss_r)"
