"""The race for a queue's next item (issue 16): two processes, each with its own app and
connection, ask for the next item of a one-item queue at the same instant (released by
a multiprocessing barrier), again and again. Exactly one gets it, and the row names that
one as its holder. On PostgreSQL when ``REVIEWAPP_TEST_DB_URL`` is set (the case the
issue asks for), else on the SQLite file of the test."""

from __future__ import annotations

import multiprocessing as mp
from typing import Any

from sqlalchemy import select

from reviewapp.actors import Actor, Role
from reviewapp.models import QueueItem
from reviewapp.services import review_queues as rq

ROUNDS = 8


def _ask(url: str, user_id: int, queue_id: int, barrier: Any, go: Any, results: Any) -> None:
    """A child process: per round, wait at the barrier, ask, report (round, user, item)."""
    from reviewapp import create_app
    from reviewapp.db_setup import write_intent
    from reviewapp.extensions import db

    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": url,
                      "RATELIMIT_ENABLED": False})
    actor = Actor.for_user(user_id, f"u{user_id}")
    with app.app_context(), write_intent():
        for index in range(ROUNDS):
            barrier.wait(timeout=60)
            item = rq.next_item(db.session, actor, queue_id)
            got = None if item is None else item.id
            db.session.remove()  # as a request ends
            results.put((index, user_id, got))
            go.wait(timeout=60)  # the parent checked and freed the item


def test_two_processes_never_get_the_same_reservation(app, session, make, database_url):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann, bob = (make.user(ws, Role.REVIEWER) for _ in range(2))
    make.aiops_run(ws)
    queue, added = rq.create_queue(session, make.actor(lead), ws.id, "One", {"kind": "aiops"})
    assert added == 1
    item_id = session.scalar(select(QueueItem.id).where(QueueItem.queue_id == queue.id))
    queue_id = queue.id
    session.commit()
    ctx = mp.get_context("spawn")
    barrier, go, results = ctx.Barrier(2), ctx.Barrier(3), ctx.Queue()
    children = [ctx.Process(target=_ask, args=(database_url, u.id, queue_id, barrier, go,
                                               results)) for u in (ann, bob)]
    for child in children:
        child.start()
    try:
        for index in range(ROUNDS):
            answers = [results.get(timeout=120) for _ in range(2)]
            assert {a[0] for a in answers} == {index}
            winners = [a for a in answers if a[2] is not None]
            assert len(winners) == 1, answers
            assert winners[0][2] == item_id
            session.rollback()
            holder = session.scalar(select(QueueItem.reserved_by).where(QueueItem.id == item_id))
            assert holder == winners[0][1]
            rq.release(session, make.actor(ann if holder == ann.id else bob), item_id)
            go.wait(timeout=60)
    finally:
        for child in children:
            child.join(timeout=60)
            if child.is_alive():
                child.kill()
    assert [child.exitcode for child in children] == [0, 0]
