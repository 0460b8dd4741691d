"""New-user walk of the team review queues (queuewalk): a lead opening an item from the
queue's own page lands on the item in the queue's context (the queue bar), as "My next
item" gives it, when they may work it; else on the plain run page. On the item's page
the queue's name links to the queue and "← Review queue" goes back to that queue: the
queue's page for its lead, the queue's row of "My next item" for a reviewer."""

from __future__ import annotations

import re

from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import QueueItem
from reviewapp.services import review_queues as rq


def _row_links(page: str, item_id: int) -> list[str]:
    row = re.search(rf'<tr id="item-{item_id}">.*?</tr>', page, re.S).group(0)
    run_cell = re.search(r'<td class="wide" data-label="Run">.*?</td>', row, re.S).group(0)
    return re.findall(r'<a href="([^"]*)"', run_cell)


def _items(session, queue):
    return list(session.scalars(select(QueueItem).where(QueueItem.queue_id == queue.id)
                                .order_by(QueueItem.id)))


def test_the_queue_page_opens_items_in_the_queue_when_the_lead_may_work_them(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann = make.user(ws, Role.REVIEWER)
    run = make.run(ws)
    open_q, _ = rq.create_queue(session, make.actor(lead), ws.id, "Open to all", {"kind": "chat"})
    named_q, _ = rq.create_queue(session, make.actor(lead), ws.id, "Ann only", {"kind": "chat"},
                                 reviewers="named", named=[ann.id])
    (open_item,), (named_item,) = _items(session, open_q), _items(session, named_q)
    login(lead)
    page = client.get(f"/queues/{open_q.id}").get_data(as_text=True)
    assert _row_links(page, open_item.id) == [f"/runs/{run.id}?item={open_item.id}&amp;queue_id={open_q.id}"]
    # A queue naming only Ann: the lead may not work its items, the run page it is.
    page = client.get(f"/queues/{named_q.id}").get_data(as_text=True)
    assert _row_links(page, named_item.id) == [f"/runs/{run.id}"]
    # The item's page has the queue bar (as from "My next item"), no runs-list Previous / Next.
    item_page = client.get(f"/runs/{run.id}?item={open_item.id}&queue_id={open_q.id}").get_data(as_text=True)
    assert 'class="card queue-bar"' in item_page
    nav = re.search(r'<nav class="run-nav".*?</nav>', item_page, re.S).group(0)
    assert "Previous" not in nav and "Next ›" not in nav


def test_a_by_hand_queue_opens_in_the_queue_only_the_items_assigned_to_the_lead(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann = make.user(ws, Role.REVIEWER)
    mine_run, anns_run = make.run(ws), make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "By hand", {"kind": "chat"},
                               assignment="by_hand")
    mine, anns = _items(session, queue)
    rq.assign(session, make.actor(lead), mine.id, [lead.id])
    rq.assign(session, make.actor(lead), anns.id, [ann.id])
    login(lead)
    page = client.get(f"/queues/{queue.id}").get_data(as_text=True)
    assert _row_links(page, mine.id) == [f"/runs/{mine_run.id}?item={mine.id}&amp;queue_id={queue.id}"]
    assert _row_links(page, anns.id) == [f"/runs/{anns_run.id}"]


def _bar_and_crumb(page: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    bar = re.search(r'<div class="queue-bar-what">.*?</div>', page, re.S).group(0)
    nav = re.search(r'<nav class="run-nav".*?</nav>', page, re.S).group(0)

    def links(markup):
        return [(href, re.sub(r"<[^>]+>|\s+", " ", label).strip())
                for href, label in re.findall(r'<a [^>]*href="([^"]*)"[^>]*>(.*?)</a>', markup, re.S)]
    return links(bar), links(nav)


def test_the_item_page_links_its_queue_for_the_lead_and_the_reviewer(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann = make.user(ws, Role.REVIEWER)
    run = make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Chat answers", {"kind": "chat"})
    (item,) = _items(session, queue)
    address = f"/runs/{run.id}?item={item.id}&queue_id={queue.id}"
    login(lead)
    bar, nav = _bar_and_crumb(client.get(address).get_data(as_text=True))
    assert bar == [(f"/queues/{queue.id}", "Chat answers")]
    assert nav == [(f"/queues/{queue.id}", "← Review queue")]
    client.post("/logout")
    login(ann)
    bar, nav = _bar_and_crumb(client.get(address).get_data(as_text=True))
    assert bar == [(f"/queue#queue-{queue.id}", "Chat answers")]
    assert nav == [(f"/queue#queue-{queue.id}", "← Review queue")]
    mine = client.get("/queue").get_data(as_text=True)
    assert f'<tr id="queue-{queue.id}">' in mine
