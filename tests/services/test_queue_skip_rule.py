"""Who may skip a queue item (queuewalk): "Skip" means something only to the reviewer
holding the item (their live reservation) or, in a queue that assigns its items, to one
it is assigned to while it is open for them (not complete, not rated by them). Anyone
else — a lead looking at the item, a reviewer whose reservation lapsed — is refused
(``Conflict`` naming the item), nothing changed; the run page's bar shows Skip only
then (``OpenItem.may_skip``). The one who may skip gets what happened (``Skipped``)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.errors import Conflict
from reviewapp.models import Message, QueueItem
from reviewapp.models.base import utcnow
from reviewapp.services import feedback
from reviewapp.services import review_queues as rq


def _held(session, item_id):
    session.expire_all()
    return session.get(QueueItem, item_id).reserved_by


def test_only_the_holder_may_skip_an_open_queue_s_item(session, make):
    ws = make.workspace()
    lead_user = make.user(ws, Role.LEAD)
    ann_user = make.user(ws, Role.REVIEWER)
    lead, ann = make.actor(lead_user), make.actor(ann_user)
    run = make.run(ws)
    make.run(ws)
    queue, _ = rq.create_queue(session, lead, ws.id, "Open", {"kind": "chat"})
    now = utcnow()
    item = rq.next_item(session, ann, queue.id, now=now)
    assert item.run_pk == run.id
    # The lead neither holds it nor is it theirs: refused, ann keeps it.
    with pytest.raises(Conflict) as refused:
        rq.skip(session, lead, item.id, now=now)
    assert refused.value.message.startswith("item: ") and refused.value.details == {"run_pk": run.id, "queue_id": queue.id}
    assert _held(session, item.id) == ann_user.id
    assert not rq.open_item(session, lead, item.id, run.id, now=now).may_skip
    assert rq.open_item(session, ann, item.id, run.id, now=now).may_skip
    # Ann may: released, and told it is free for the queue's other reviewers.
    skipped = rq.skip(session, ann, item.id, now=now)
    assert (skipped.queue_name, skipped.assignment, skipped.assigned) == ("Open", "open", False)
    assert _held(session, item.id) is None
    # Skipped once, no longer held: skipping again means nothing.
    with pytest.raises(Conflict):
        rq.skip(session, ann, item.id, now=now)


def test_a_lapsed_reservation_may_not_be_skipped(session, make):
    ws = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    ann = make.actor(make.user(ws, Role.REVIEWER))
    make.run(ws)
    queue, _ = rq.create_queue(session, lead, ws.id, "Open", {"kind": "chat"}, reservation_minutes=5)
    then = utcnow() - timedelta(minutes=10)
    item = rq.next_item(session, ann, queue.id, now=then)
    with pytest.raises(Conflict):
        rq.skip(session, ann, item.id)


def test_an_assignee_may_skip_their_open_item_held_or_not(session, make):
    ws = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    ann_user, bob_user = make.user(ws, Role.REVIEWER), make.user(ws, Role.REVIEWER)
    ann, bob = make.actor(ann_user), make.actor(bob_user)
    run = make.run(ws)
    queue, _ = rq.create_queue(session, lead, ws.id, "By hand", {"kind": "chat"}, assignment="by_hand")
    item_id = session.scalar(select(QueueItem.id).where(QueueItem.queue_id == queue.id))
    rq.assign(session, lead, item_id, [ann_user.id])
    now = utcnow()
    skipped = rq.skip(session, ann, item_id, now=now)  # assigned, not held: still hers to pass over
    assert (skipped.assignment, skipped.assigned) == ("by_hand", True)
    with pytest.raises(Conflict):
        rq.skip(session, bob, item_id, now=now)  # not bob's
    with pytest.raises(Conflict):
        rq.skip(session, lead, item_id, now=now)
    # Rated by ann: nothing left for her to skip.
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id, Message.role == "assistant"))
    feedback.upsert_feedback(session, ann, "chat_message", answer, None, "positive")
    with pytest.raises(Conflict):
        rq.skip(session, ann, item_id, now=now)
    assert not rq.open_item(session, ann, item_id, run.id, now=now).may_skip
