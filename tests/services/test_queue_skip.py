"""Skipping through a review queue (session 7 new user's finding): "Skip" walks every
waiting item in the queue's order (item id), wrapping around at the end, and never hands
back the item just skipped while others wait. Before: skip released the item and the
next-item search took the first open one — after two skips the first again, so with
~40 waiting items six skips showed A, B, A, B, A, B. Also across my queues ("Open my
next item" without a queue): the walk goes on into the next queue in list order and
wraps around to the first."""

from __future__ import annotations

from sqlalchemy import event, select

from reviewapp.actors import Role
from reviewapp.extensions import db
from reviewapp.models import QueueItem
from reviewapp.models.base import utcnow
from reviewapp.services import review_queues as rq


def _order(session, queue):
    """The queue's items in its order (item id), read here from the table."""
    return list(session.scalars(select(QueueItem.id).where(QueueItem.queue_id == queue.id)
                                .order_by(QueueItem.id)))


def _skip(session, actor, queue_id, item, now):
    """What the view does for "Skip": release, then the next item after it."""
    rq.release(session, actor, item.id)
    return rq.next_for_me(session, actor, queue_id, exclude=item.id, now=now)


def _lead_and_reviewer(make, ws):
    return make.actor(make.user(ws, Role.LEAD)), make.actor(make.user(ws, Role.REVIEWER))


def test_skip_walks_every_waiting_item_in_order_and_wraps(session, make):
    ws = make.workspace()
    lead, me = _lead_and_reviewer(make, ws)
    for _ in range(5):
        make.run(ws)
    queue, added = rq.create_queue(session, lead, ws.id, "Five", {"kind": "chat"})
    order = _order(session, queue)
    assert added == 5 and len(order) == 5
    now = utcnow()
    item = rq.next_item(session, me, queue.id, now=now)
    seen = [item.id]
    for _ in range(4):
        item = _skip(session, me, queue.id, item, now)
        seen.append(item.id)
    assert seen == order  # five distinct items, in the queue's order
    # Skipping the last wraps around to the first, and on.
    item = _skip(session, me, queue.id, item, now)
    assert item.id == order[0]
    assert _skip(session, me, queue.id, item, now).id == order[1]


def test_skip_passes_over_held_and_rated_items_and_never_returns_the_skipped_one(
        session, make):
    ws = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    mine = make.user(ws, Role.REVIEWER)
    me, other = make.actor(mine), make.actor(make.user(ws, Role.REVIEWER))
    runs = [make.run(ws) for _ in range(4)]
    queue, _ = rq.create_queue(session, lead, ws.id, "Four", {"kind": "chat"},
                               reviewers_per_run=2)
    a, b, c, d = _order(session, queue)
    now = utcnow()
    assert rq.next_item(session, other, queue.id, now=now).id == a  # held by someone else
    make.feedback_row(runs[2], mine, rating="positive")  # c: rated by me
    item = rq.next_item(session, me, queue.id, now=now)
    assert item.id == b
    item = _skip(session, me, queue.id, item, now)
    assert item.id == d
    # After d: a is held, b waits (wrapped around), c is mine already.
    item = _skip(session, me, queue.id, item, now)
    assert item.id == b
    # The only item left for me: skipping it says there is nothing else (as before).
    assert _skip(session, me, queue.id, item, now).id == d
    rq.release(session, me, d)
    make.feedback_row(runs[3], mine, rating="positive")
    only = rq.next_item(session, me, queue.id, now=now)
    assert only.id == b
    assert _skip(session, me, queue.id, only, now) is None


def test_skip_across_my_queues_goes_on_to_the_next_queue_and_wraps(session, make):
    """"Open my next item" without a queue (the reported flow): the queues in list order
    (workspace, name), each in its item order; skipping walks on through all of them."""
    ws = make.workspace()
    lead, me = _lead_and_reviewer(make, ws)
    for _ in range(2):
        make.run(ws)
    first, _ = rq.create_queue(session, lead, ws.id, "A first", {"kind": "chat"})
    second, _ = rq.create_queue(session, lead, ws.id, "B second", {"kind": "chat"})
    walk = _order(session, first) + _order(session, second)
    assert len(walk) == 4
    now = utcnow()
    item = rq.next_for_me(session, me, now=now)
    seen = [item.id]
    for _ in range(4):
        item = _skip(session, me, None, item, now)
        seen.append(item.id)
    assert seen == walk + walk[:1]


def test_skip_across_my_queues_looks_up_the_skipped_items_queue_once(session, make):
    """Walking on across my queues reads which queue the skipped item is in once, not
    once more for each queue walked (review finding). One run in three queues: skipping
    the first queue's item walks that queue, then hands out the second queue's item."""
    ws = make.workspace()
    lead, me = _lead_and_reviewer(make, ws)
    make.run(ws)
    queues = [rq.create_queue(session, lead, ws.id, name, {"kind": "chat"})[0]
              for name in ("A first", "B second", "C third")]
    now = utcnow()
    item = rq.next_for_me(session, me, now=now)
    assert item.id == _order(session, queues[0])[0]
    seen: list[str] = []

    def listener(conn, cursor_, statement, parameters, context, executemany):  # noqa: ANN001
        seen.append(" ".join(statement.split()))

    event.listen(db.engine, "before_cursor_execute", listener)
    try:
        following = _skip(session, me, None, item, now)
    finally:
        event.remove(db.engine, "before_cursor_execute", listener)
    assert following.id == _order(session, queues[1])[0]
    lookups = [s for s in seen
               if s.startswith("SELECT review_queue_item.queue_id FROM review_queue_item WHERE")]
    assert len(lookups) == 1, lookups
