"""Review queues (issue 16), new-user findings on by-hand assignment and reservations:
a lead cannot give an item more assignees than the queue's reviewers per run (N); an
item that completes lets go of the reservation holding it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.errors import Conflict, ValidationFailed
from reviewapp.models import Feedback, Message, QueueAssignment, QueueItem
from reviewapp.models.base import utcnow
from reviewapp.services import feedback
from reviewapp.services import review_queues as rq


@pytest.fixture
def team(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lee")
    people = [make.user(ws, Role.REVIEWER, username=n) for n in ("ann", "bob", "cy", "dan")]
    runs_ = [make.run(ws) for _ in range(2)]
    return type("T", (), dict(ws=ws, lead=lead, people=people, runs=runs_))


def _item(session, queue, run):
    return session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id,
                                                  QueueItem.run_pk == run.id))


def _assigned(session, item_id):
    return sorted(session.scalars(select(QueueAssignment.user_id)
                                  .where(QueueAssignment.item_id == item_id)))


def _refusal(session, lead, item_id, ids):
    with pytest.raises(ValidationFailed) as caught:
        rq.assign(session, lead, item_id, ids)
    session.rollback()
    return caught.value


def test_assign_refuses_more_assignees_than_reviewers_per_run(session, make, team):
    """Finding 1: a by-hand item took three assignees in a queue of two reviewers per run.
    The service refuses (HTTP 400, field ``assignees``, the queue's N in the message) and
    keeps what was stored; N or fewer are taken."""
    ann, bob, cy, _ = team.people
    lead = make.actor(team.lead)
    queue, _ = rq.create_queue(session, lead, team.ws.id, "Pairs", {"kind": "chat"},
                               reviewers_per_run=2, assignment="by_hand")
    item = _item(session, queue, team.runs[0])
    assert rq.assign(session, lead, item.id, [ann.id]) == [ann.id]
    refused = _refusal(session, lead, item.id, [ann.id, bob.id, cy.id])
    assert (refused.status, refused.field, refused.reason) == (
        400, "assignees", "This queue takes 2 reviewers per run (3 chosen).")
    assert _assigned(session, item.id) == [ann.id]
    assert rq.assign(session, lead, item.id, [bob.id, cy.id]) == [bob.id, cy.id]
    assert _assigned(session, item.id) == sorted([bob.id, cy.id])
    # One reviewer per run: the singular, and two are refused.
    single, _ = rq.create_queue(session, lead, team.ws.id, "Single", {"kind": "chat"},
                                assignment="by_hand")
    one = _item(session, single, team.runs[1])
    refused = _refusal(session, lead, one.id, [ann.id, bob.id])
    assert refused.reason == "This queue takes 1 reviewer per run (2 chosen)."
    assert _assigned(session, one.id) == []


def test_lowering_reviewers_per_run_keeps_assignments_and_refuses_only_new_excess(
        session, make, team):
    """Our decision (SPEC 8 names only "N reviewers per run, assignment"): N lowered after
    an item was assigned keeps its assignees (nothing is taken away behind the lead's
    back); saving the item again with them, or with fewer of them, is accepted, but
    nobody new joins while the item would have more than N."""
    ann, bob, cy, dan = team.people
    lead = make.actor(team.lead)
    queue, _ = rq.create_queue(session, lead, team.ws.id, "Triples", {"kind": "chat"},
                               reviewers_per_run=3, assignment="by_hand")
    item = _item(session, queue, team.runs[0])
    rq.assign(session, lead, item.id, [ann.id, bob.id, cy.id])
    rq.update_queue(session, lead, queue.id, reviewers_per_run=2)
    assert _assigned(session, item.id) == sorted([ann.id, bob.id, cy.id])  # kept
    # The same three (as the page stands, any order): accepted, unchanged.
    assert rq.assign(session, lead, item.id, [cy.id, ann.id, bob.id]) == [cy.id, ann.id, bob.id]
    # Someone new while above N: refused, unchanged.
    refused = _refusal(session, lead, item.id, [ann.id, bob.id, dan.id])
    assert (refused.field, refused.reason) == ("assignees",
                                               "This queue takes 2 reviewers per run (3 chosen).")
    assert _assigned(session, item.id) == sorted([ann.id, bob.id, cy.id])
    # Down to N: accepted; the one let go is new again, so three are refused now.
    assert rq.assign(session, lead, item.id, [ann.id, bob.id]) == [ann.id, bob.id]
    assert _refusal(session, lead, item.id, [ann.id, bob.id, cy.id]).field == "assignees"
    assert _assigned(session, item.id) == sorted([ann.id, bob.id])


def _rate_answer(session, make, run, user):
    """``user`` rates the run's answer through the feedback service (what the run page
    does), so the queue's completion follows as in production."""
    message = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                      Message.role == "assistant")
                             .order_by(Message.ordinal).limit(1))
    feedback.upsert_feedback(session, make.actor(user), "chat_message", message, None, "positive")


def _hold(session, item_id):
    row = session.execute(select(QueueItem.reserved_by, QueueItem.reserved_until,
                                 QueueItem.completed_at).where(QueueItem.id == item_id)).one()
    return row.reserved_by, row.reserved_until, row.completed_at is not None


def test_an_item_that_completes_lets_go_of_its_reservation(session, make, team):
    """Finding 3: a completed item kept the reservation of whoever held it, so the queue
    page showed it "reserved" and the holder "holding" it until the reservation ran out.
    The rating that completes the item releases it, whoever holds it: here ann holds it
    and bob and cy complete it from the run page. A rating that leaves it open keeps the
    hold."""
    ann, bob, cy, _ = team.people
    lead = make.actor(team.lead)
    queue, _ = rq.create_queue(session, lead, team.ws.id, "Pairs", {"kind": "chat"},
                               reviewers_per_run=2, reservation_minutes=30)
    first = rq.next_item(session, make.actor(ann), queue.id)
    assert first.run_pk == team.runs[0].id
    _rate_answer(session, make, team.runs[0], bob)  # 1 of 2: still open, still ann's
    held_by, until, complete = _hold(session, first.id)
    assert (held_by, complete) == (ann.id, False) and until > utcnow()
    assert rq.progress(session, lead, queue.id).reserved == 1
    _rate_answer(session, make, team.runs[0], cy)  # 2 of 2: complete
    assert _hold(session, first.id) == (None, None, True)
    assert rq.progress(session, lead, queue.id).reserved == 0
    row = next(r for r in rq.list_items(session, lead, queue.id)[1].rows if r.item_id == first.id)
    assert (row.reserved_by, row.reserved_until) == (None, None)
    assert {p.username: p.holding for p in rq.reviewer_progress(session, lead, queue.id)}["ann"] == 0
    # ann's page renews no more: the item is complete (the page says so, not "taken").
    with pytest.raises(Conflict) as caught:
        rq.renew(session, make.actor(ann), first.id)
    assert caught.value.details == {"complete": True}


def test_the_holder_completing_an_item_lets_go_and_gets_the_next(session, make, team):
    """The usual path: the holder's own rating completes the item (N = 1); the hold goes
    with it, and their next item is the queue's next one."""
    ann = team.people[0]
    lead = make.actor(team.lead)
    queue, _ = rq.create_queue(session, lead, team.ws.id, "Singles", {"kind": "chat"})
    first = rq.next_item(session, make.actor(ann), queue.id)
    _rate_answer(session, make, team.runs[0], ann)
    assert _hold(session, first.id) == (None, None, True)
    second = rq.next_item(session, make.actor(ann), queue.id)
    assert second.run_pk == team.runs[1].id and second.reserved_by == ann.id


def test_lowering_n_completes_held_items_and_lets_go_of_them(session, make, team):
    """Lowering the queue's N completes the items that have enough ratings now
    (``queue_completion.recount_queue``): those let go of their hold too."""
    ann, bob, _, _ = team.people
    lead = make.actor(team.lead)
    queue, _ = rq.create_queue(session, lead, team.ws.id, "Pairs", {"kind": "chat"},
                               reviewers_per_run=2)
    first = rq.next_item(session, make.actor(ann), queue.id)
    _rate_answer(session, make, team.runs[0], bob)
    assert _hold(session, first.id)[0] == ann.id
    rq.update_queue(session, lead, queue.id, reviewers_per_run=1)
    assert _hold(session, first.id) == (None, None, True)


def test_a_reopened_item_can_be_reserved_again(session, make, team):
    """A deleted rating takes a complete item below N: it is open again, held by nobody,
    and the next reviewer who asks reserves it."""
    ann, bob, _, _ = team.people
    lead = make.actor(team.lead)
    queue, _ = rq.create_queue(session, lead, team.ws.id, "Singles", {"kind": "chat"})
    first = rq.next_item(session, make.actor(ann), queue.id)
    _rate_answer(session, make, team.runs[0], ann)
    row = session.scalar(select(Feedback.id).where(Feedback.author_id == ann.id))
    feedback.delete_feedback(session, make.actor(ann), row)
    assert _hold(session, first.id) == (None, None, False)
    now = utcnow()
    again = rq.next_item(session, make.actor(bob), queue.id, now=now)
    assert again.id == first.id and again.reserved_by == bob.id
    assert again.reserved_until == now + timedelta(minutes=queue.reservation_minutes)


def test_renewing_after_rating_the_answer_lets_go_and_says_so(session, make, team):
    """New-user walk: after rating a held item's answer in a queue of two reviewers per
    run, the run page kept "Reserved for you until ..." (and its poll renewed it), though
    the item was already free for the next reviewer. Renewing then lets go of it and
    answers Conflict with ``details`` ``{"rated": True}``; before the rating it renews."""
    ann, bob, _, _ = team.people
    lead = make.actor(team.lead)
    queue, _ = rq.create_queue(session, lead, team.ws.id, "Pairs", {"kind": "chat"},
                               reviewers_per_run=2)
    first = rq.next_item(session, make.actor(ann), queue.id)
    assert rq.renew(session, make.actor(ann), first.id) > utcnow()
    _rate_answer(session, make, team.runs[0], ann)
    with pytest.raises(Conflict) as lost:
        rq.renew(session, make.actor(ann), first.id)
    assert lost.value.details == {"rated": True}
    assert _hold(session, first.id) == (None, None, False)
    assert rq.next_item(session, make.actor(bob), queue.id).id == first.id


def test_rating_a_held_items_answer_lets_go_of_the_hold_in_the_same_write(session, make, team):
    """Review pass: the holder's answer rating lets go of their hold in the UPDATE that
    stores the item's count (``queue_completion._store``), not only when the page renews:
    before any renew the item is held by nobody and still open (two of three ratings).
    Another reviewer's rating of the same run keeps the holder's hold."""
    ann, bob, cy, _ = team.people
    lead = make.actor(team.lead)
    queue, _ = rq.create_queue(session, lead, team.ws.id, "Triples", {"kind": "chat"},
                               reviewers_per_run=3)
    first = rq.next_item(session, make.actor(ann), queue.id)
    _rate_answer(session, make, team.runs[0], bob)
    assert _hold(session, first.id)[0] == ann.id
    _rate_answer(session, make, team.runs[0], ann)
    assert _hold(session, first.id) == (None, None, False)
    second = rq.next_item(session, make.actor(cy), queue.id)
    assert second.id == first.id and second.reserved_by == cy.id


def test_a_complete_item_takes_no_assignment(session, make, team):
    """New-user walk: a complete item of a by-hand queue still took an assignment ("Item
    assigned."). The service refuses any change of a complete item's assignees (HTTP 400,
    field ``item``, naming the item by its run's id) and keeps what was stored."""
    ann, bob, *_ = team.people
    lead = make.actor(team.lead)
    queue, _ = rq.create_queue(session, lead, team.ws.id, "Hand", assignment="by_hand")
    done, open_ = _item(session, queue, team.runs[0]), _item(session, queue, team.runs[1])
    rq.assign(session, lead, done.id, [ann.id])
    make.feedback_row(team.runs[0], ann, rating="positive")  # N = 1: complete
    session.refresh(done)
    assert done.completed_at is not None
    for ids in ([bob.id], [], [ann.id]):
        refused = _refusal(session, lead, done.id, ids)
        assert refused.field == "item" and refused.status == 400
        assert refused.reason == (f"The item of run {team.runs[0].run_id} is complete (its "
                                  "reviewers have rated it): it takes no assignment.")
    assert _assigned(session, done.id) == [ann.id]
    assert rq.assign(session, lead, open_.id, [bob.id]) == [bob.id]  # an open one still does
