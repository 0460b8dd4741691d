"""A review queue's "my next item" (``review_queues.next_item``) reads the open items'
index (``ix_review_queue_item_todo``: queue, id where not complete) from the oldest open
item on, and "the item I already hold" from the holder's index
(``ix_review_queue_item_holder``) — not a scan over the queue's items (issue 18:
PostgreSQL scanned them for the held item, and walked the primary key for the open
ones). The database's own plans, on a queue of 12,000
items (half of them complete, every 33rd rated by me) with fresh statistics.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, insert, text

from reviewapp.actors import Role
from reviewapp.extensions import db
from reviewapp.models import DiagnosisSession, Feedback, Message, QueueItem, Run
from reviewapp.services import review_queues as rq

from .runs.test_scope_plan import _plan
from .test_unrated_runs_plan import _statements

ITEMS = 12_000
RATED_EVERY = 33


@pytest.fixture
def big_queue(session, make):
    """A queue of 12,000 items in run order; even items complete; every 33rd open one
    rated (answer) by ``me``. Returns (me, the queue, the open items I have not rated,
    oldest first)."""
    ws = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    me = make.user(ws, Role.REVIEWER)
    queue, _ = rq.create_queue(session, lead, ws.id, "Big", reviewers_per_run=2)
    sess = DiagnosisSession(session_id="s", workspace_id=ws.id, kind="chat")
    session.add(sess)
    session.flush()
    start = datetime(2026, 1, 1, tzinfo=UTC)
    base = session.scalar(text("SELECT coalesce(max(id), 0) FROM diagnosis_run")) + 1
    runs, messages, items, ratings, mine_open = [], [], [], [], []
    for i in range(ITEMS):
        pk, at = base + i, start + timedelta(seconds=i)
        runs.append({"id": pk, "run_id": f"r-{i}", "workspace_id": ws.id,
                     "diagnosis_session_id": sess.id, "kind": "chat", "query": "q",
                     "status": "SUCCESS", "rateable": True, "tool_call_count": 0,
                     "failed_tool_call_count": 0, "created_at": at, "updated_at": at})
        messages.append({"id": pk, "run_pk": pk, "ordinal": 0, "role": "assistant",
                         "content": f"answer {i}", "metadata": {}})
        complete = i % 2 == 0
        items.append({"queue_id": queue.id, "run_pk": pk, "source": "rule",
                      "ratings_count": 2 if complete else 0,
                      "completed_at": at if complete else None, "created_at": at,
                      "updated_at": at})
        if not complete and i % RATED_EVERY == 1:
            ratings.append({"author_id": me.id, "workspace_id": ws.id, "run_pk": pk,
                            "target_type": "chat_message", "target_id": pk,
                            "subject_key": "", "rating": "positive"})
        elif not complete:
            mine_open.append(pk)
    session.execute(insert(Run.__table__), runs)
    session.execute(insert(Message.__table__), messages)
    session.execute(insert(QueueItem.__table__), items)
    session.execute(insert(Feedback.__table__), ratings)
    session.commit()
    session.execute(text("ANALYZE"))
    session.commit()
    return make.actor(me), queue, mine_open


def _item_plans(session, statements: list[tuple[str, Any]]) -> list[str]:
    picks = [(s, p) for s, p in statements if s.lstrip().startswith("SELECT review_queue_item.id")]
    assert picks
    return [_plan(session, s, p) for s, p in picks]


def _assert_item_range(plan: str) -> None:
    """The open items come from their index in id order (no scan, no sort), or mine
    from the holder's index (a sort of those few allowed).

    Not asserted on PostgreSQL: how the ratings are probed. At this size it hashes my
    answer ratings joined to their runs once (a scan of diagnosis_run here, where that
    is cheap), and the "rated by its holder" test of an item someone else holds is a
    hashed subplan over every answer rating, built when first needed."""
    holder = "ix_review_queue_item_holder" in plan
    # SQLite may as well read (queue_id, completed_at, id): it takes IS NULL as equality.
    assert holder or "ix_review_queue_item_todo" in plan or (
        db.engine.dialect.name == "sqlite" and "ix_review_queue_item_open" in plan), plan
    if db.engine.dialect.name == "postgresql":
        assert "Seq Scan on review_queue_item " not in plan, plan
        assert "Index Scan using pk_review_queue_item " not in plan, plan
        assert holder or "Sort" not in plan.replace("Sort Key", ""), plan
        return
    for line in plan.splitlines():
        detail = line.split("|", 2)[2]
        assert not (detail.startswith("SCAN ") and "INDEX" not in detail), plan
        assert holder or "TEMP B-TREE" not in detail, plan


def test_next_item_reads_the_open_items_index(session, big_queue):
    me, queue, mine_open = big_queue
    now = datetime(2026, 6, 1, tzinfo=UTC)
    statements, item = _statements(session, lambda: rq.next_item(session, me, queue.id, now=now))
    assert item.run_pk == mine_open[0]  # the oldest open item I have not rated
    for plan in _item_plans(session, statements):
        _assert_item_range(plan)
    # Skipping it: the next one, also from the index (the held item is released first).
    rq.release(session, me, item.id)
    statements, second = _statements(
        session, lambda: rq.next_item(session, me, queue.id, now=now, exclude=item.id))
    assert second.run_pk == mine_open[1]
    for plan in _item_plans(session, statements):
        _assert_item_range(plan)


def test_letting_go_of_my_other_items_reads_the_holder_index(session, big_queue):
    """Claiming an item releases the other open items I hold in the queue (one held item
    per reviewer per queue): an UPDATE over an index range, on PostgreSQL the holder's."""
    me, queue, _ = big_queue
    now = datetime(2026, 6, 1, tzinfo=UTC)
    seen: list[tuple[str, Any]] = []

    def listener(conn, cursor_, statement, parameters, context, executemany):  # noqa: ANN001
        seen.append((statement, parameters))

    event.listen(db.engine, "before_cursor_execute", listener)
    try:
        rq.next_item(session, me, queue.id, now=now)
    finally:
        event.remove(db.engine, "before_cursor_execute", listener)
    let_go = [(s, p) for s, p in seen
              if s.lstrip().startswith("UPDATE review_queue_item") and "id !=" in s]
    assert len(let_go) == 1, seen
    plan = _plan(session, *let_go[0])
    if db.engine.dialect.name == "postgresql":
        assert "ix_review_queue_item_holder" in plan, plan
        assert "Seq Scan on review_queue_item" not in plan, plan
    else:  # SQLite's statistics count the unreserved (NULL) holders as one value, so it
        # may as well read the queue's open items (the held statement may too, above)
        assert "ix_review_queue_item_holder" in plan or "ix_review_queue_item_open" in plan, plan
        assert "SCAN review_queue_item" not in plan, plan
