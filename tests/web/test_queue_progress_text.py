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
