"""A queue with named reviewers counts only their ratings (issue 16, SPEC 6.2 and 8
"Review queues"): an item's N (``ratings_count``, completion), the majority verdict, the
disputes and the lead's decision, the progress figures and the per-queue agreement see
the ratings of the queue's reviewers only; someone else rating the run's answer (an admin
or a lead from the run page) changes none of them. A queue open to every reviewer of the
workspace counts every rater, as before. A reviewer who stops being named (an edit, or
leaving the workspace) keeps counting for the ratings given before; a newly named
reviewer's earlier rating counts from the edit on. Values worked out by hand."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.errors import ValidationFailed
from reviewapp.models import Message, QueueItem
from reviewapp.services import adjudication, admin, agreement, feedback
from reviewapp.services import review_queues as rq


@pytest.fixture
def world(session, make):
    ws = make.workspace()
    boss = make.user(ws, Role.ADMIN, username="boss")
    lead = make.user(ws, Role.LEAD, username="lea")
    people = {n: make.user(ws, Role.REVIEWER, username=n) for n in ("alice", "bob", "cy")}
    people["boss"], people["lea"] = boss, lead
    run = make.run(ws, query="Named question?")
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Named pair", {},
                               reviewers_per_run=2, reviewers="named",
                               named=[people["alice"].id, people["bob"].id])

    def rate(name, rating, on=None):
        target = on or run
        answer = session.scalar(select(Message.id).where(Message.run_pk == target.id,
                                                         Message.role == "assistant"))
        feedback.upsert_feedback(session, make.actor(people[name]), "chat_message", answer,
                                 None, rating)
        session.refresh(target)

    return type("W", (), dict(ws=ws, lead=lead, boss=boss, people=people, run=run,
                              queue=queue, rate=rate))


def _stored(session, queue, run):
    """(ratings_count, complete?) of the run's item in the queue, as stored."""
    session.expire_all()
    count, done = session.execute(select(QueueItem.ratings_count, QueueItem.completed_at)
                                  .where(QueueItem.queue_id == queue.id,
                                         QueueItem.run_pk == run.id)).one()
    return count, done is not None


def _disputes(session, make, world):
    page = adjudication.disputed(session, make.actor(world.lead))
    return [(i.run.id, i.positive, i.negative, [c.reviewer for c in i.columns])
            for i in page.items]


def test_a_rating_by_someone_not_named_counts_for_nothing(session, make, world):
    # The admin rates the run's answer from the run page: not one of the queue's reviewers.
    world.rate("boss", "positive")
    assert _stored(session, world.queue, world.run) == (0, False)
    assert world.run.feedback is None
    # alice: 1 of 2. (Counting the admin, this made 2 of 2 and the verdict useful.)
    world.rate("alice", "positive")
    assert _stored(session, world.queue, world.run) == (1, False)
    assert world.run.feedback is None
    assert _disputes(session, make, world) == []
    # bob disagrees: complete, 1 + 1 of the pair, a tie for the lead (not 2 + 1 = useful).
    world.rate("bob", "negative")
    assert _stored(session, world.queue, world.run) == (2, True)
    assert world.run.feedback is None
    assert _disputes(session, make, world) == [(world.run.id, 1, 1, ["alice", "bob"])]
    # cy, a reviewer of the workspace the queue does not name, breaks no tie either.
    world.rate("cy", "positive")
    assert _stored(session, world.queue, world.run) == (2, True)
    assert world.run.feedback is None
    assert _disputes(session, make, world) == [(world.run.id, 1, 1, ["alice", "bob"])]
    # The lead decides the pair's tie (it is one: decide does not refuse it).
    adjudication.decide(session, make.actor(world.lead), world.run.id, "not_useful")
    session.refresh(world.run)
    assert world.run.feedback == "not_useful"


def test_a_rating_by_someone_not_named_creates_no_tie(session, make, world):
    world.rate("alice", "positive")
    world.rate("boss", "negative")  # counting it: 1 + 1 of 2, a dispute
    assert _stored(session, world.queue, world.run) == (1, False)
    assert _disputes(session, make, world) == [] and world.run.feedback is None
    with pytest.raises(ValidationFailed):  # nothing to decide: the pair has not disagreed
        adjudication.decide(session, make.actor(world.lead), world.run.id, "useful")
    world.rate("bob", "positive")  # the pair agrees: useful, whatever the admin said
    assert _stored(session, world.queue, world.run) == (2, True)
    assert world.run.feedback == "useful" and _disputes(session, make, world) == []


def test_progress_and_agreement_count_the_named_reviewers_only(session, make, world):
    for name, rating in (("boss", "negative"), ("alice", "positive"), ("bob", "positive"),
                         ("cy", "negative")):
        world.rate(name, rating)
    lead = make.actor(world.lead)
    progress = rq.progress(session, lead, world.queue.id)
    assert (progress.items, progress.complete) == (1, 1)
    assert rq.progress(session, make.actor(world.boss), world.queue.id).mine == 0
    assert rq.progress(session, make.actor(world.people["alice"]), world.queue.id).mine == 1
    table = {p.username: p.rated for p in rq.reviewer_progress(session, lead, world.queue.id)}
    assert table == {"alice": 1, "bob": 1}
    assert rq.list_items(session, lead, world.queue.id)[1].rows[0].ratings_count == 2
    assert agreement.answer_ratings(session, [world.ws.id], queue_id=world.queue.id) == {
        world.run.id: {"alice": "positive", "bob": "positive"}}
    # Without the queue filter the workspace's agreement takes every reviewer, as before.
    assert agreement.answer_ratings(session, [world.ws.id]) == {world.run.id: {
        "boss": "negative", "alice": "positive", "bob": "positive", "cy": "negative"}}


def test_a_queue_open_to_all_counts_every_rater(session, make, world):
    everyone, _ = rq.create_queue(session, make.actor(world.lead), world.ws.id, "Open", {},
                                  reviewers_per_run=2)
    world.rate("boss", "positive")
    assert _stored(session, everyone, world.run) == (1, False)
    assert _stored(session, world.queue, world.run) == (0, False)
    world.rate("alice", "negative")
    assert _stored(session, everyone, world.run) == (2, True)
    assert _stored(session, world.queue, world.run) == (1, False)
    # The open queue was made after the named one: the named pair still governs the verdict.
    assert world.run.feedback is None and _disputes(session, make, world) == []
    table = {p.username: p.rated for p in rq.reviewer_progress(
        session, make.actor(world.lead), everyone.id)}
    assert table == {"alice": 1, "bob": 0, "boss": 1, "cy": 0, "lea": 0}


def test_changing_the_named_reviewers_recounts_and_who_leaves_keeps_counting(session, make,
                                                                              world):
    second = make.run(world.ws, query="Second question?")
    assert rq.exists_item(session, world.queue.id, second.id)
    world.rate("cy", "positive")
    world.rate("alice", "positive")
    assert _stored(session, world.queue, world.run) == (1, False)
    lead = make.actor(world.lead)
    alice, bob, cy = (world.people[n].id for n in ("alice", "bob", "cy"))
    # cy is named: the rating cy gave before counts from now on.
    rq.update_queue(session, lead, world.queue.id, named=[alice, bob, cy])
    assert _stored(session, world.queue, world.run) == (2, True)
    # cy is no longer named: the rating given keeps counting, a new one does not.
    rq.update_queue(session, lead, world.queue.id, named=[alice, bob])
    assert _stored(session, world.queue, world.run) == (2, True)
    world.rate("cy", "negative", on=second)
    assert _stored(session, world.queue, second) == (0, False)
    # bob rates, then leaves the workspace: still counted for that rating.
    world.rate("bob", "positive", on=second)
    admin.remove_member(session, make.actor(world.boss), world.ws.id, bob)
    assert _stored(session, world.queue, second) == (1, False)
    assert {p.username: p.rated for p in rq.reviewer_progress(session, lead, world.queue.id)} \
        == {"alice": 1, "bob": 1, "cy": 1}
    # Open to all: every rater of the run counts (the admin too); named again: everyone who
    # counted while it was open keeps counting for what they rated.
    world.rate("boss", "positive", on=second)
    assert _stored(session, world.queue, second) == (1, False)
    rq.update_queue(session, lead, world.queue.id, reviewers="all")
    assert _stored(session, world.queue, second) == (3, True)
    rq.update_queue(session, lead, world.queue.id, reviewers="named", named=[alice, cy])
    assert _stored(session, world.queue, second) == (3, True)
    assert _stored(session, world.queue, world.run) == (2, True)


def test_a_run_added_after_it_was_rated_counts_the_named_only(session, make, world):
    later = make.run(world.ws, query="Before the queue?")
    rq.remove_run(session, make.actor(world.lead), world.queue.id, later.id)
    world.rate("boss", "positive", on=later)
    world.rate("alice", "positive", on=later)
    assert rq.add_runs(session, make.actor(world.lead), world.queue.id, [later.id]) == 1
    assert _stored(session, world.queue, later) == (1, False)


def test_a_lead_whose_rating_does_not_count_is_not_called_a_side_of_the_dispute(session, make, world):
    """New-user finding: the recent decisions said "You rated this run ... You are one
    side of this dispute" to a lead the queue does not name (their rating counted for
    nothing). Only a rating that counts for the decision's queue is the viewer's own."""
    world.rate("lea", "negative")  # the lead, not named
    world.rate("alice", "positive")
    world.rate("bob", "negative")
    adjudication.decide(session, make.actor(world.lead), world.run.id, "useful")
    [decision] = adjudication.decisions(session, [world.ws.id], viewer=world.lead.id)
    assert decision.my_rating is None
    [as_bob] = adjudication.decisions(session, [world.ws.id], viewer=world.people["bob"].id)
    assert as_bob.my_rating == "negative"
