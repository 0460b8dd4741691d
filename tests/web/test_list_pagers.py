"""The audit log's "Older events" and a queue's "Next page" / "Previous page" links carry
a keyset cursor (``?cursor=``, like the runs, triage and case lists), keep the filter,
and a bad cursor is a 400 naming it; an item's buttons bring the lead back to the page
they were on."""

from __future__ import annotations

import html
import re

from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import AuditEvent, QueueItem
from reviewapp.services import audit
from reviewapp.services import review_queues as rq


def _link(page: str, label: str) -> str:
    """The href of the link whose text starts with ``label``."""
    found = re.search(r'<a[^>]*href="([^"]*)"[^>]*>\s*' + re.escape(label), page)
    assert found, label
    return html.unescape(found.group(1))


def test_audit_log_pages_through_cursors_keeping_the_action(app_factory, login, make, session):
    other = app_factory(AUDIT_PAGE_SIZE=2)
    client = other.test_client()
    ws = make.workspace()
    boss = make.user(ws, Role.ADMIN)
    for n in range(5):
        audit.record_event(session, make.actor(boss), workspace_id=ws.id, action="token.create",
                           target_type="token", target_id=n, target_label=f"token-{n}")
    session.commit()
    login(boss, c=client)
    shown = []
    url = f"/admin/{ws.id}/audit?action=token.create"
    while url:
        page = client.get(url)
        assert page.status_code == 200
        text = page.get_data(as_text=True)
        shown += [int(i) for i in re.findall(r'<tr id="audit-(\d+)"', text)]
        url = _link(text, "Older") if "Older" in text else None
        assert url is None or ("cursor=" in url and "action=token.create" in url)
    expected = list(session.scalars(select(AuditEvent.id).where(
        AuditEvent.workspace_id == ws.id, AuditEvent.action == "token.create")
        .order_by(AuditEvent.id.desc())))
    assert shown == expected and len(shown) == 5
    bad = client.get(f"/admin/{ws.id}/audit?cursor=garbage")
    assert bad.status_code == 400 and "Page link: it is not a link to a page of this log" in bad.get_data(as_text=True)


def test_queue_items_page_through_cursors_and_buttons_come_back(app_factory, login, make, session):
    other = app_factory(QUEUE_ITEMS_PAGE_SIZE=2)
    client = other.test_client()
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    runs = [make.run(ws, query=f"Paged question {n}?") for n in range(5)]
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Paged", {"kind": "chat"})
    login(lead, c=client)
    first = client.get(f"/queues/{queue.id}").get_data(as_text=True)
    assert "1–2 of 5" in first and "Previous page" not in first
    second_url = _link(first, "Next page")
    second = client.get(second_url).get_data(as_text=True)
    assert "3–4 of 5" in second
    assert _link(second, "‹ Previous page") == f"/queues/{queue.id}"
    third = client.get(_link(second, "Next page")).get_data(as_text=True)
    assert "5–5 of 5" in third and "Next page" not in third
    assert _link(third, "‹ Previous page") == second_url
    items = list(session.scalars(select(QueueItem).where(QueueItem.queue_id == queue.id)
                                 .order_by(QueueItem.id)))
    shown = [int(i) for page in (first, second, third)
             for i in re.findall(r'<tr id="item-(\d+)"', page)]
    assert shown == [item.id for item in items]
    # Remove from page 2: back to page 2 (its cursor), not the first page.
    cursor = second_url.split("cursor=")[1]
    assert f'name="cursor" value="{cursor}"' in second
    gone = items[2].run_pk
    removed = client.post(f"/queues/{queue.id}/items/{gone}/remove",
                          data={"cursor": cursor, "confirm": "1"})
    assert removed.status_code == 303
    assert removed.headers["Location"] == f"/queues/{queue.id}?cursor={cursor}"
    session.rollback()  # the other app wrote it: read afresh
    assert not rq.exists_item(session, queue.id, gone) and gone in [run.id for run in runs]
    bad = client.get(f"/queues/{queue.id}?cursor=garbage")
    assert bad.status_code == 400 and "cursor" in bad.get_data(as_text=True)


def test_audit_log_pages_link_back_to_newer_events_and_say_where_they_are(
        app_factory, login, make, session):
    """New-user finding 2026-12-02: page 2 of the log had no way back and no position,
    unlike a queue's items page."""
    other = app_factory(AUDIT_PAGE_SIZE=2)
    client = other.test_client()
    ws = make.workspace()
    boss = make.user(ws, Role.ADMIN)
    for n in range(4):  # and the workspace's own creation event: 5 events in all
        audit.record_event(session, make.actor(boss), workspace_id=ws.id, action="token.create",
                           target_type="token", target_id=n, target_label=f"token-{n}")
    session.commit()
    login(boss, c=client)
    base = f"/admin/{ws.id}/audit?action=token.create"
    first = client.get(base).get_data(as_text=True)
    assert "1–2 of 4" in first and "Newer" not in first
    second_url = _link(first, "Older")
    second = client.get(second_url).get_data(as_text=True)
    assert "3–4 of 4" in second and "Older" not in second
    back = _link(second, "‹ Newer")
    assert back == base  # the first page has no cursor
    ids = re.compile(r'<tr id="audit-(\d+)"')
    assert ids.findall(client.get(back).get_data(as_text=True)) == ids.findall(first)
    every = client.get(f"/admin/{ws.id}/audit").get_data(as_text=True)
    total = session.query(AuditEvent).filter(AuditEvent.workspace_id == ws.id).count()
    assert total == 5 and "1–2 of 5" in every  # the creation event too, without the filter
    third = client.get(_link(client.get(_link(every, "Older")).get_data(as_text=True),
                             "Older")).get_data(as_text=True)
    assert "5–5 of 5" in third
    middle = _link(third, "‹ Newer")
    assert "cursor=" in middle and "3–4 of 5" in client.get(middle).get_data(as_text=True)
