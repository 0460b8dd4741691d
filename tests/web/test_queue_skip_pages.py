"""Skip on a queue item's page (queuewalk): it said nothing (the next item just opened)
and a lead not holding the item saw it too. Now Skip is shown only to whom it means
something (``OpenItem.may_skip``: the holder, or an assignee while the item is open for
them); after it a sentence says what happened (the item skipped, who may take it, what
comes next); a Skip posted by anyone else is refused on the item's page, nothing
changed."""

from __future__ import annotations

import html as htmllib
import re

from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import QueueItem
from reviewapp.services import review_queues as rq


def _flashes(page: str) -> list[tuple[str, str]]:
    return [(kind, " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", text)).split()))
            for kind, text in re.findall(r'<div class="flash flash-(\w+)">(.*?)</div>', page, re.S)]


def _items(session, queue):
    return list(session.scalars(select(QueueItem).where(QueueItem.queue_id == queue.id)
                                .order_by(QueueItem.id)))


def test_skip_is_the_holder_s_and_says_what_happened(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann = make.user(ws, Role.REVIEWER)
    first, second = make.run(ws), make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Chat answers", {"kind": "chat"})
    a, b = _items(session, queue)
    login(ann)
    opened = client.post("/queues/next", data={"queue": str(queue.id)})
    assert opened.headers["Location"] == f"/runs/{first.id}?item={a.id}&queue_id={queue.id}"
    page = client.get(opened.headers["Location"]).get_data(as_text=True)
    assert f'name="skip" value="{a.id}"' in page
    client.post("/logout")
    # The lead looking at ann's item: no Skip; a Skip posted anyway is refused, ann keeps it.
    login(lead)
    item_page = f"/runs/{first.id}?item={a.id}&queue_id={queue.id}"
    page = client.get(item_page).get_data(as_text=True)
    assert 'name="skip"' not in page and "Next item" in page
    refused = client.post("/queues/next", data={"queue": str(queue.id), "skip": str(a.id)})
    assert refused.status_code == 303 and refused.headers["Location"] == item_page
    assert _flashes(client.get(item_page).get_data(as_text=True)) == [(
        "error", "Nothing to skip: you do not hold this item and it is not waiting for you. "
                 "Use “Next item” for your next one.")]
    session.expire_all()
    assert session.get(QueueItem, a.id).reserved_by == ann.id
    client.post("/logout")
    # Ann skips: the next item opens, saying what became of the skipped one.
    login(ann)
    skipped = client.post("/queues/next", data={"queue": str(queue.id), "skip": str(a.id)})
    assert skipped.headers["Location"] == f"/runs/{second.id}?item={b.id}&queue_id={queue.id}"
    assert _flashes(client.get(skipped.headers["Location"]).get_data(as_text=True)) == [(
        "info", "Item skipped: it is free again for the other reviewers of “Chat answers”, and comes "
                "back to you after your other items. Here is your next one.")]


def test_skipping_an_assigned_item_says_it_stays_yours(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann = make.user(ws, Role.REVIEWER)
    make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "By hand", {"kind": "chat"},
                               assignment="by_hand")
    (item,) = _items(session, queue)
    rq.assign(session, make.actor(lead), item.id, [ann.id])
    login(ann)
    client.post("/queues/next", data={"queue": str(queue.id)})
    skipped = client.post("/queues/next", data={"queue": str(queue.id), "skip": str(item.id)})
    assert skipped.headers["Location"] == "/queue?mine=1"
    assert _flashes(client.get("/queue?mine=1").get_data(as_text=True)) == [
        ("info", "Item skipped: it stays assigned to you and comes back after your other items in “By hand”."),
        ("info", "Nothing else for you to review in this queue: you skipped the one item left for you, "
                 "and “Review this queue” hands it back.")]
