"""The audit log and a queue's items page through the one keyset helper
(``services/keyset.py``, issue 12 point 3), with cursors like the runs, triage and case
lists: page 2 starts right after page 1, with no gap and no repeat, when many rows share
the same time; a tampered cursor, or one of another list, is refused naming ``cursor``."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import select, update

from reviewapp.actors import Role
from reviewapp.errors import ValidationFailed
from reviewapp.models import AuditEvent, QueueItem
from reviewapp.services import audit
from reviewapp.services import review_queues as rq

SAME_INSTANT = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def _all_pages(read, limit):
    """Every page read with ``read(cursor, limit)`` -> (rows, next cursor), in order."""
    pages, cursor = [], None
    while True:
        rows, cursor = read(cursor, limit)
        pages.append(rows)
        if cursor is None:
            return pages
        assert len(pages) < 50, "the cursor never ends"


@pytest.fixture
def logged(session, make):
    """A workspace with 7 events after its creation, every one at the same instant."""
    ws = make.workspace()
    boss = make.user(ws, Role.ADMIN)
    actor = make.actor(boss)
    for n in range(7):
        audit.record_event(session, actor, workspace_id=ws.id,
                           action="token.create" if n % 2 else "member.add",
                           target_type="token", target_id=n, target_label=f"t{n}")
    session.commit()
    session.execute(update(AuditEvent).where(AuditEvent.workspace_id == ws.id)
                    .values(created_at=SAME_INSTANT))
    session.commit()
    ids = list(session.scalars(select(AuditEvent.id).where(AuditEvent.workspace_id == ws.id)
                               .order_by(AuditEvent.id.desc())))
    return ws, actor, ids


def test_audit_pages_follow_each_other_newest_first(session, logged):
    ws, actor, ids = logged
    assert len(ids) == 8  # the workspace's creation and the 7 events

    def read(cursor, limit):
        rows, after = audit.list_events(session, actor, ws.id, cursor=cursor, limit=limit)
        return [row.id for row in rows], after

    pages = _all_pages(read, 3)
    assert [len(p) for p in pages[:-1]] == [3] * (len(pages) - 1) and 1 <= len(pages[-1]) <= 3
    assert [i for page in pages for i in page] == ids  # no gap, no repeat, newest first


def test_audit_pages_keep_the_action_filter(session, logged):
    ws, actor, ids = logged
    filters = audit.AuditFilters.from_params({"action": " token.create "})
    assert filters == audit.AuditFilters("token.create")
    assert filters.as_params() == {"action": "token.create"}
    assert audit.AuditFilters.from_params(filters.as_params()) == filters
    assert audit.AuditFilters().as_params() == {}
    expected = list(session.scalars(select(AuditEvent.id).where(
        AuditEvent.workspace_id == ws.id, AuditEvent.action == "token.create")
        .order_by(AuditEvent.id.desc())))
    assert len(expected) == 3

    def read(cursor, limit):
        rows, after = audit.list_events(session, actor, ws.id, filters, cursor=cursor,
                                        limit=limit)
        return [row.id for row in rows], after

    assert _all_pages(read, 2) == [expected[:2], expected[2:]]


def test_audit_refuses_an_unknown_action_and_a_bad_cursor(session, logged, make):
    ws, actor, _ = logged
    with pytest.raises(ValidationFailed) as unknown:
        audit.AuditFilters.from_params({"action": "user.delete"})
    assert unknown.value.field == "action"
    with pytest.raises(ValidationFailed) as bad:
        audit.list_events(session, actor, ws.id, cursor="not-a-cursor!")
    assert bad.value.field == "cursor"
    # A queue's cursor is another order's: refused, not read as an audit position.
    lead, queue = _queue_with_items(session, make, ws, 3)
    _, first = rq.list_items(session, lead, queue.id, limit=1)
    assert first.next_cursor is not None
    with pytest.raises(ValidationFailed) as other:
        audit.list_events(session, actor, ws.id, cursor=first.next_cursor)
    assert other.value.field == "cursor"


def _queue_with_items(session, make, ws, count):
    lead = make.user(ws, Role.LEAD)
    for n in range(count):
        make.run(ws, query=f"Queued question {n}?")
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, f"Q{count}", {"kind": "chat"})
    session.execute(update(QueueItem).where(QueueItem.queue_id == queue.id)
                    .values(created_at=SAME_INSTANT))
    session.commit()
    return make.actor(lead), queue


def test_queue_item_pages_follow_each_other_in_the_order_items_entered(session, make):
    ws = make.workspace()
    actor, queue = _queue_with_items(session, make, ws, 7)
    ids = list(session.scalars(select(QueueItem.id).where(QueueItem.queue_id == queue.id)
                               .order_by(QueueItem.id)))
    assert len(ids) == 7
    seen, cursor, pages = [], None, []
    while True:
        _, page = rq.list_items(session, actor, queue.id, cursor, limit=3)
        pages.append(page)
        assert page.total == 7 and page.offset == len(seen)
        seen += [row.item_id for row in page.rows]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == ids and [len(p.rows) for p in pages] == [3, 3, 1]
    # Back: page 3's "previous" opens page 2, page 2's the first page (no cursor).
    assert [(p.has_previous, p.previous_cursor) for p in pages] == [
        (False, None), (True, None), (True, pages[0].next_cursor)]
    _, back = rq.list_items(session, actor, queue.id, pages[2].previous_cursor, limit=3)
    assert [row.item_id for row in back.rows] == ids[3:6]


def test_queue_items_refuse_a_bad_cursor(session, make):
    ws = make.workspace()
    actor, queue = _queue_with_items(session, make, ws, 1)
    with pytest.raises(ValidationFailed) as bad:
        rq.list_items(session, actor, queue.id, "bm90IGEgY3Vyc29y")
    assert bad.value.field == "cursor"
