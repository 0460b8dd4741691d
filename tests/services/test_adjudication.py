"""The verdict from several reviewers and adjudication (issue 16): with N > 1 the run's
verdict waits for N answer-level ratings and follows their majority; a tie (or any split,
when the queue says so) goes to the lead, whose decision sets the verdict, makes the case
or opens the triage item like any verdict, and stands against later ratings."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.errors import Forbidden, ValidationFailed
from reviewapp.models import Case, Message, ReviewQueue, TriageItem, VerdictDecision
from reviewapp.services import adjudication, feedback
from reviewapp.services import review_queues as rq


def _answer(session, run):
    return session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                   Message.role == "assistant"))


@pytest.fixture
def world(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lea")
    people = {n: make.user(ws, Role.REVIEWER, username=n) for n in ("ann", "bob", "cy")}
    run = make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {},
                               reviewers_per_run=2, blind=True)
    other = make.workspace()
    foreign_lead = make.user(other, Role.LEAD)

    def rate(name, rating, **texts):
        feedback.upsert_feedback(session, make.actor(people[name]), "chat_message",
                                 _answer(session, run), None, rating, **texts)
        session.refresh(run)

    return type("W", (), dict(ws=ws, lead=lead, people=people, run=run, queue=queue,
                              rate=rate, foreign_lead=foreign_lead))


def _case(session, run):
    return session.scalars(select(Case).where(Case.diagnosis_id == run.run_id)).one_or_none()


def _item(session, run):
    return session.scalars(select(TriageItem).where(TriageItem.run_pk == run.id)).one_or_none()


def test_one_rating_of_two_sets_no_verdict(session, world):
    world.rate("ann", "positive")
    assert world.run.feedback is None and _case(session, world.run) is None


def test_two_agreeing_ratings_set_the_verdict_and_make_the_case(session, world):
    world.rate("ann", "positive")
    world.rate("bob", "positive")
    assert world.run.feedback == "useful" and _case(session, world.run) is not None


def test_a_tie_goes_to_the_lead_who_decides(session, make, world):
    world.rate("ann", "positive", comment="Cites the runbook")
    world.rate("bob", "negative", reason="incorrect", correction="Restart the pod")
    assert world.run.feedback is None and _item(session, world.run) is None

    page = adjudication.disputed(session, make.actor(world.lead))
    assert page.total == 1
    item = page.items[0]
    assert (item.run.id, item.queue_name, item.needed, item.positive, item.negative) == (
        world.run.id, "Pairs", 2, 1, 1)
    assert [(c.reviewer, c.answer.rating, c.answer.reason, c.answer.comment,
             c.answer.correction) for c in item.columns] == [
        ("ann", "positive", None, "Cites the runbook", None),
        ("bob", "negative", "incorrect", None, "Restart the pod")]

    result = adjudication.decide(session, make.actor(world.lead), world.run.id, "not_useful",
                                 "Bob is right: the runbook is outdated")
    session.refresh(world.run)
    assert world.run.feedback == "not_useful" and result.case_id is None
    assert _item(session, world.run).state == "new"  # triage follows like any verdict
    stored = session.get(VerdictDecision, result.decision_id)
    assert (stored.verdict, stored.decided_by, stored.queue_id, stored.note) == (
        "not_useful", world.lead.id, world.queue.id, "Bob is right: the runbook is outdated")
    assert adjudication.disputed(session, make.actor(world.lead)).total == 0

    # The decision stands: a third reviewer's rating does not move the verdict.
    world.rate("cy", "positive")
    assert world.run.feedback == "not_useful"
    # A new decision replaces it and makes the case.
    useful = adjudication.decide(session, make.actor(world.lead), world.run.id, "useful",
                                 expected_decision=result.decision_id)
    session.refresh(world.run)
    assert world.run.feedback == "useful" and useful.case_id == _case(session, world.run).case_id
    assert _item(session, world.run).state == "resolved"
    assert [d.verdict for d in adjudication.decisions(session, [world.ws.id])] == [
        "useful", "not_useful"]


def test_a_rating_taken_back_below_n_keeps_the_verdict(session, make, world):
    world.queue.reviewers_per_run = 3
    session.commit()
    world.rate("ann", "positive")
    world.rate("bob", "positive")
    assert world.run.feedback is None  # 2 of 3
    world.rate("cy", "negative")
    assert world.run.feedback == "useful"  # 2-1
    case = _case(session, world.run)
    assert case is not None and case.withdrawn_at is None
    # Bob takes his rating back: 1-1 with 2 of 3 is pending again, the verdict stays.
    mine = feedback.list_my_feedback(session, make.actor(world.people["bob"]), world.run.id)
    feedback.delete_feedback(session, make.actor(world.people["bob"]), mine[0].id)
    session.refresh(world.run)
    assert world.run.feedback == "useful"


def test_any_split_needs_a_decision(session, make, world):
    world.queue.reviewers_per_run = 3
    world.queue.dispute_rule = "any_split"
    session.commit()
    for name, rating in (("ann", "positive"), ("bob", "positive"), ("cy", "negative")):
        world.rate(name, rating)
    assert world.run.feedback is None
    page = adjudication.disputed(session, make.actor(world.lead))
    assert [(i.positive, i.negative, i.rule_label) for i in page.items] == [
        (2, 1, "Any disagreement needs a decision")]


def test_a_switched_rating_that_splits_a_pair_withdraws_the_verdict(session, world):
    world.rate("ann", "positive")
    world.rate("bob", "positive")
    assert world.run.feedback == "useful"
    world.rate("bob", "negative")
    assert world.run.feedback is None
    assert _case(session, world.run).withdrawn_at is not None  # AUTO, never edited


def test_n_equals_one_queue_keeps_the_latest_rating_rule(session, make, world):
    world.queue.reviewers_per_run = 1
    session.commit()
    world.rate("ann", "positive")
    assert world.run.feedback == "useful"
    world.rate("bob", "negative")
    assert world.run.feedback == "not_useful"


def test_who_may_decide(session, make, world):
    world.rate("ann", "positive")
    world.rate("bob", "negative")
    for actor in (make.actor(world.people["ann"]), make.actor(world.foreign_lead)):
        with pytest.raises(Forbidden):
            adjudication.decide(session, actor, world.run.id, "useful")
    with pytest.raises(Forbidden):
        adjudication.decide(session, make.actor(world.lead), 987654321, "useful")
    with pytest.raises(Forbidden):
        adjudication.disputed(session, make.actor(world.people["ann"]))
    # The foreign lead's list holds nothing of this workspace; naming it is refused.
    assert adjudication.disputed(session, make.actor(world.foreign_lead)).total == 0
    with pytest.raises(Forbidden):
        adjudication.disputed(session, make.actor(world.foreign_lead),
                              adjudication.AdjudicationFilters(workspace_id=world.ws.id))
    with pytest.raises(Forbidden):
        adjudication.disputed(session, make.actor(world.foreign_lead),
                              adjudication.AdjudicationFilters(queue_id=world.queue.id))
    assert session.scalars(select(VerdictDecision)).all() == []


@pytest.mark.parametrize(("verdict", "note", "field"), [
    ("maybe", None, "verdict"), (None, None, "verdict"), ("useful", "x" * 2001, "note"),
])
def test_bad_decisions_name_the_field(session, make, world, verdict, note, field):
    with pytest.raises(ValidationFailed) as refused:
        adjudication.decide(session, make.actor(world.lead), world.run.id, verdict, note)
    assert refused.value.field == field


def test_a_run_outside_multi_reviewer_queues_cannot_be_decided(session, make, world):
    lone = make.run(world.ws)
    session.execute(ReviewQueue.__table__.update().values(rule={"q": "nothing-matches"}))
    rq.remove_run(session, make.actor(world.lead), world.queue.id, lone.id)
    with pytest.raises(ValidationFailed) as refused:
        adjudication.decide(session, make.actor(world.lead), lone.id, "useful")
    assert refused.value.field == "run"


def test_the_governing_queue_is_the_same_for_verdict_run_page_and_disputes(session, make):
    """A run in three queues: N = 2 (oldest), N = 3 "any split", N = 3 "tie" (newest).
    The one rule (most reviewers, the oldest on a tie) picks the "any split" queue for
    the verdict, the run page's N and the disputes list alike."""
    from reviewapp.services import runs

    ws = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    run = make.run(ws)
    people = [make.actor(make.user(ws)) for _ in range(3)]  # a 3-reviewer queue needs them
    rq.create_queue(session, lead, ws.id, "Pairs", {}, reviewers_per_run=2)
    split, _ = rq.create_queue(session, lead, ws.id, "Any split", {}, reviewers_per_run=3,
                               dispute_rule="any_split")
    rq.create_queue(session, lead, ws.id, "Ties", {}, reviewers_per_run=3)
    for who, rating in zip(people[:2], ("positive", "positive")):
        feedback.upsert_feedback(session, who, "chat_message", _answer(session, run), None, rating)
    session.refresh(run)
    assert run.feedback is None  # N = 3, not the pair queue's 2
    assert runs.get_run_detail(session, people[0], run.id).verdict_reviewers == 3
    feedback.upsert_feedback(session, people[2], "chat_message", _answer(session, run), None,
                             "negative")
    session.refresh(run)
    assert run.feedback is None  # 2-1 is a dispute under "any split" (the tie rule decides)
    page = adjudication.disputed(session, lead)
    assert [(i.run.id, i.queue_id, i.needed) for i in page.items] == [(run.id, split.id, 3)]


def test_the_disputes_list_pages_by_cursor_and_refuses_a_bad_one(session, make, world):
    """The list pages through keyset cursors (oldest queue item first) like every other
    list; a tampered cursor, or one made for another list, is ``ValidationFailed``
    naming ``cursor`` (the walk-through's ``?cursor=zzz`` answered the first page)."""
    from types import SimpleNamespace

    from reviewapp.services.queue_pages import ITEM_ORDER

    runs = [world.run] + [make.run(world.ws) for _ in range(2)]
    for run in runs:
        for name, rating in (("ann", "positive"), ("bob", "negative")):
            feedback.upsert_feedback(session, make.actor(world.people[name]), "chat_message",
                                     _answer(session, run), None, rating)
    lead = make.actor(world.lead)
    first = adjudication.disputed(session, lead, limit=2)
    assert [i.run.id for i in first.items] == [runs[0].id, runs[1].id]
    assert (first.total, first.offset, first.has_previous) == (3, 0, False)
    second = adjudication.disputed(session, lead, cursor=first.next_cursor, limit=2)
    assert [i.run.id for i in second.items] == [runs[2].id]
    assert (second.total, second.offset, second.next_cursor) == (3, 2, None)
    assert second.has_previous and second.previous_cursor is None  # back to the first page
    # Deciding the first run moves nothing on the page after it.
    adjudication.decide(session, lead, runs[0].id, "useful")
    again = adjudication.disputed(session, lead, cursor=first.next_cursor, limit=2)
    assert [i.run.id for i in again.items] == [runs[2].id] and again.total == 2
    foreign = ITEM_ORDER.encode(SimpleNamespace(id=1))  # a queue page's cursor, same shape
    for bad in ("zzz", foreign, first.next_cursor[:-2]):
        with pytest.raises(ValidationFailed) as refused:
            adjudication.disputed(session, lead, cursor=bad)
        assert refused.value.field == "cursor"


def test_a_lead_who_rated_the_run_is_warned_and_the_decision_audited(session, make, world):
    """SPEC 6 sends a tie to "a lead's adjudication" without saying which lead, so a lead
    who is one side of the dispute may still decide it (the walk-through: nothing said
    so). The list tells them their own rating, and their decision is written to the
    workspace's audit log as one on a dispute they rated; another lead's is not."""
    from reviewapp.models import AuditEvent

    lea = make.actor(world.lead)
    world.rate("ann", "positive")
    feedback.upsert_feedback(session, lea, "chat_message", _answer(session, world.run), None,
                             "negative")
    neutral = make.run(world.ws)
    for name, rating in (("ann", "positive"), ("bob", "negative")):
        feedback.upsert_feedback(session, make.actor(world.people[name]), "chat_message",
                                 _answer(session, neutral), None, rating)
    page = adjudication.disputed(session, lea)
    assert [(i.run.id, i.my_rating) for i in page.items] == [
        (world.run.id, "negative"), (neutral.id, None)]
    assert adjudication.decide(session, lea, world.run.id, "not_useful").own_rating == "negative"
    assert adjudication.decide(session, lea, neutral.id, "useful").own_rating is None
    session.expire_all()
    events = session.scalars(select(AuditEvent).where(
        AuditEvent.workspace_id == world.ws.id, AuditEvent.action.like("decision.%"))).all()
    assert [(e.action, e.actor_label, e.target_type, e.target_id, e.after) for e in events] == [
        ("decision.own_rating", "lea", "run", world.run.run_id,
         {"verdict": "not_useful", "own_rating": "negative"})]
    # "Decide again" on the recent decisions names the same own rating (the first form's data).
    decided = {d.run_pk: d.my_rating for d in adjudication.disputed(session, lea).decided}
    assert decided == {world.run.id: "negative", neutral.id: None}
    other = make.actor(make.user(world.ws, Role.LEAD))
    assert {d.my_rating for d in adjudication.disputed(session, other).decided} == {None}


def test_the_disputes_count_is_counted_in_sql_and_capped(session, make, world, monkeypatch):
    """The list counts disputes in the database up to a cap ("10,000+" as the runs list),
    and reads only its page's rows: candidates that agreed (no dispute) are never read
    into Python. Here the cap is 2 and 3 runs are disputed, 4 settled."""
    disputed_runs = [world.run] + [make.run(world.ws) for _ in range(2)]
    settled = [make.run(world.ws) for _ in range(4)]
    for run in disputed_runs + settled:
        second = "negative" if run in disputed_runs else "positive"
        for name, rating in (("ann", "positive"), ("bob", second)):
            feedback.upsert_feedback(session, make.actor(world.people[name]), "chat_message",
                                     _answer(session, run), None, rating)
    lead = make.actor(world.lead)
    monkeypatch.setattr(adjudication, "COUNT_CAP", 2)
    page = adjudication.disputed(session, lead, limit=1)
    assert (page.total, page.total_capped) == (2, True)
    assert [i.run.id for i in page.items] == [disputed_runs[0].id]
    monkeypatch.setattr(adjudication, "COUNT_CAP", 10_000)
    asked = []
    reads = adjudication._answer_ratings
    monkeypatch.setattr(adjudication, "_answer_ratings",
                        lambda session, pks: asked.append(sorted(pks)) or reads(session, pks))
    page = adjudication.disputed(session, lead, limit=1)
    assert (page.total, page.total_capped, len(page.items)) == (3, False, 1)
    assert asked == [[disputed_runs[0].id]]  # the page's run only, not all 7 candidates
