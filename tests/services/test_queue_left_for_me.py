"""What is left in a queue when a reviewer's next item is none (new-user walk): an empty
queue has no items at all (it was said "every item is complete"); in a by-hand queue,
after Skip on the reviewer's only item, that item is still theirs to take again and the
items nobody was assigned wait for a lead (it was said that all of them "wait for other
reviewers")."""

from __future__ import annotations

from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import QueueItem
from reviewapp.services import review_queues as rq


def _items(session, queue):
    return list(session.scalars(select(QueueItem.id).where(QueueItem.queue_id == queue.id)
                                .order_by(QueueItem.id)))


def test_an_empty_queue_has_no_items_and_none_left(session, make):
    ws = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    me = make.actor(make.user(ws, Role.REVIEWER))
    queue, added = rq.create_queue(session, lead, ws.id, "Empty", {"kind": "aiops"})
    assert added == 0
    left = rq.left_for_me(session, me, queue.id)
    assert (left.items, left.left, left.skipped, left.for_lead, left.for_others) == (0, 0, False, 0, 0)


def test_after_skipping_my_only_by_hand_item_it_is_mine_again_and_the_unassigned_wait_for_a_lead(
        session, make):
    ws = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    ann_user, bob_user = make.user(ws, Role.REVIEWER), make.user(ws, Role.REVIEWER)
    ann = make.actor(ann_user)
    runs = [make.run(ws) for _ in range(5)]
    queue, _ = rq.create_queue(session, lead, ws.id, "By hand", assignment="by_hand")
    mine, bobs, done, free1, free2 = _items(session, queue)
    rq.assign(session, lead, mine, [ann_user.id])
    rq.assign(session, lead, bobs, [bob_user.id])
    rq.assign(session, lead, done, [bob_user.id])
    make.feedback_row(runs[2], bob_user, rating="positive")  # complete (N = 1)

    item = rq.next_for_me(session, ann, queue.id)
    assert item.id == mine
    rq.release(session, ann, mine)
    assert rq.next_for_me(session, ann, queue.id, exclude=mine) is None
    left = rq.left_for_me(session, ann, queue.id, skipped=mine)
    # 5 items, 1 complete; mine skipped (open to me again); 2 unassigned; bob's waits for bob
    assert (left.items, left.left, left.skipped, left.for_lead, left.for_others) == (5, 4, True, 2, 1)
    # Across my queues the same (this is my only queue).
    across = rq.left_for_me(session, ann, None, skipped=mine)
    assert (across.items, across.left, across.skipped, across.for_lead, across.for_others) == \
        (5, 4, True, 2, 1)
    # Asking again (no skip) hands the skipped item back, as the message will say.
    assert rq.next_for_me(session, ann, queue.id).id == mine

    # Once I have rated it, it is no longer mine to take: it is complete (N = 1).
    make.feedback_row(runs[0], ann_user, rating="positive")
    left = rq.left_for_me(session, ann, queue.id, skipped=mine)
    assert (left.items, left.left, left.skipped, left.for_lead, left.for_others) == (5, 3, False, 2, 1)


def test_an_open_queue_has_nobody_waiting_for_a_lead(session, make):
    """In an open queue nothing waits for an assignment: what I cannot take (rated by me,
    N = 2) waits for other reviewers."""
    ws = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    ann_user = make.user(ws, Role.REVIEWER)
    make.user(ws, Role.REVIEWER)
    runs = [make.run(ws) for _ in range(2)]
    queue, _ = rq.create_queue(session, lead, ws.id, "Pairs", reviewers_per_run=2)
    for run in runs:
        make.feedback_row(run, ann_user, rating="positive")
    left = rq.left_for_me(session, make.actor(ann_user), queue.id)
    assert (left.items, left.left, left.skipped, left.for_lead, left.for_others) == (2, 2, False, 0, 2)
