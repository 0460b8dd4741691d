"""Queue progress reads as one phrase (second new-user walk: "1 of / 4" on "My next item"
and "0 of 4 / complete" on a queue's page, the count broken across lines at 1280 px)."""

from __future__ import annotations

import re

from reviewapp.actors import Role
from reviewapp.services import review_queues as rq


def test_progress_counts_never_break_inside_the_phrase(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lee")
    make.user(ws, Role.REVIEWER, username="ann")
    runs = [make.run(ws) for _ in range(3)]
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Trio", {"kind": "chat"})
    login(lead)
    mine = client.get("/queue").get_data(as_text=True)
    assert re.search(r'<span class="nowrap">0 of 3</span>', mine), mine
    detail = client.get(f"/queues/{queue.id}").get_data(as_text=True)
    assert f'<span class="nowrap">0 of {len(runs)} complete</span>' in detail
    assert '<span class="nowrap">0 reserved now</span>' in detail


def _current_nav(html: str) -> list[str]:
    """The labels of the main navigation's links marked as the current page."""
    nav = re.search(r'<nav class="nav" aria-label="Main">(.*?)</nav>', html, re.S).group(1)
    return re.findall(r'<a href="[^"]*" aria-current="page">([^<]*)</a>', nav)


def test_a_queue_item_is_marked_as_the_review_queue_not_the_runs(client, login, make, session):
    """Second walk: working a queue item, the navigation marked "Runs" as the current page."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lee")
    ann = make.user(ws, Role.REVIEWER, username="ann")
    run = make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Solo", {"kind": "chat"})
    login(ann)
    opened = client.post("/queues/next", data={"queue": str(queue.id)})
    assert opened.status_code == 303 and f"/runs/{run.id}" in opened.headers["Location"]
    assert _current_nav(client.get(opened.headers["Location"]).get_data(as_text=True)) == ["Review queue"]
    assert _current_nav(client.get(f"/runs/{run.id}").get_data(as_text=True)) == ["Runs"]
