"""Target feedback, its history and the run verdict at the service layer (SPEC 6, 7)."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import event, func, select

from reviewapp.actors import Actor
from reviewapp.db_setup import write_intent
from reviewapp.errors import Forbidden, ValidationFailed
from reviewapp.extensions import db
from reviewapp.models import Case, DiagnosisSession, Feedback, FeedbackEvent, Run, TriageItem
from reviewapp.services import feedback, runs

TARGET_TYPES = ["chat_message", "citation", "diagnostic_step", "diagnostic_report"]
MISSING_ID = 987_654


def answer_message(run: Run):
    return [m for m in run.messages if m.role == "assistant"][-1]


def target_in(make, ws, target_type: str):
    """A run of ``ws`` and (target_id, subject_id) of one target of ``target_type``."""
    if target_type in ("chat_message", "citation"):
        run = make.run(ws)
        return run, answer_message(run).id, "c1" if target_type == "citation" else None
    run = make.aiops_run(ws)
    if target_type == "diagnostic_step":
        return run, run.steps[0].id, None
    return run, run.report.id, None


def count(session, model, *where) -> int:
    return session.scalar(select(func.count()).select_from(model).where(*where))


def fresh(session, obj):
    session.expire_all()
    return session.get(type(obj), obj.id)


@pytest.fixture
def ws(make):
    return make.workspace()


@pytest.fixture
def reviewer(make, ws):
    return make.user(ws)


@pytest.fixture
def actor(make, reviewer):
    return make.actor(reviewer)


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


def _in_threads(app, n: int, work) -> list:
    """Run ``work(i)`` in ``n`` threads started together, each with its own app context,
    session and SQLite write intent. Returns results (exceptions included)."""
    barrier = threading.Barrier(n)
    results: list = [None] * n

    def target(i: int) -> None:
        with app.app_context():
            try:
                barrier.wait(timeout=30)
                with write_intent():
                    results[i] = work(i)
            except Exception as exc:  # noqa: BLE001 - reported by the assertion below
                results[i] = exc
            finally:
                db.session.remove()

    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    return results


def test_twenty_concurrent_first_submits_make_one_row(app, session, make, ws, actor):
    """SPEC 6.1: racing first submits end as one row and no error."""
    run, target_id, _ = target_in(make, ws, "chat_message")
    session.close()

    def submit(i: int) -> int:
        return feedback.upsert_feedback(db.session, actor, "chat_message", target_id, None,
                                        "positive").id

    results = _in_threads(app, 20, submit)
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
    assert item.state == "resolved" and "verdict became useful" in item.note

    feedback.delete_feedback(session, actor, mine_id)
    assert fresh(session, run).feedback is None  # none left
    assert count(session, Case) == 1  # the case is a curated record and stays


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
    results = _in_threads(app, 8, lambda i: feedback.set_run_verdict(
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
