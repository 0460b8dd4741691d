"""A lead adds a run to a queue by hand while a reviewer's rating of that run is being
written (issue 16): the item's stored count must include the rating. The rating writer
holds the run's row lock (``FOR NO KEY UPDATE``, PostgreSQL; SQLite's writers are
serialised anyway) from before it writes the rating until it commits, and its own
completion refresh finds no item yet; adding the run without that lock inserted the item
and counted the raters the rating's uncommitted transaction hid — 0 for good."""

from __future__ import annotations

import threading
import time

from sqlalchemy import select

from reviewapp.actors import Actor, Role
from reviewapp.db_setup import write_intent
from reviewapp.extensions import db
from reviewapp.models import Feedback, Message, QueueItem, Run
from reviewapp.services import review_queues as rq
from reviewapp.services.queue_completion import refresh_run


def test_a_run_added_by_hand_during_a_rating_counts_it(app, session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    reviewer = make.user(ws)
    run = make.run(ws)  # a chat run: the queue's rule (AIOps runs) leaves it out
    queue, added = rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {"kind": "aiops"},
                                   reviewers_per_run=2)
    assert added == 0
    ids = (run.id, ws.id, queue.id, lead.id, lead.username, reviewer.id)
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                     Message.role == "assistant")
                            .order_by(Message.ordinal.desc()).limit(1))
    session.commit()
    written, done = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def rate() -> None:
        """What upsert_feedback does, paused between its write and its commit."""
        with app.app_context():
            try:
                with write_intent():
                    s = db.session
                    s.execute(select(Run.id).where(Run.id == ids[0]).with_for_update(key_share=True))
                    s.add(Feedback(author_id=ids[5], workspace_id=ids[1], run_pk=ids[0],
                                   target_type="chat_message", target_id=answer, subject_key="",
                                   rating="positive"))
                    s.flush()
                    refresh_run(s, ids[0])  # no item of the run yet
                    written.set()
                    time.sleep(1.5)  # the lead's add runs meanwhile
                    s.commit()
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
            finally:
                db.session.remove()

    def add() -> None:
        with app.app_context():
            try:
                written.wait(timeout=30)
                with write_intent():
                    rq.add_runs(db.session, Actor.for_user(ids[3], ids[4]), ids[2], [ids[0]])
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
            finally:
                db.session.remove()
                done.set()

    threads = [threading.Thread(target=rate), threading.Thread(target=add)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors and done.is_set()
    session.rollback()
    count = session.scalar(select(QueueItem.ratings_count).where(QueueItem.queue_id == ids[2],
                                                                 QueueItem.run_pk == ids[0]))
    assert count == 1
