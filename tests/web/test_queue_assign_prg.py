"""A refused by-hand assignment (queuewalk): the queue's page came back as the answer to
the POST, so the address bar kept ``/queues/<id>/items/<item>/assign`` and a reload
posted the form again. Now the refusal is answered with a redirect to the queue's page
(POST/redirect/GET, at the item's row) that shows it — the reason beside the item's
selects, the lead's picks kept — once: a reload of that page is a plain GET. An htmx
request still gets the page itself (422), as before."""

from __future__ import annotations

import re

from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import QueueAssignment, QueueItem
from reviewapp.services import review_queues as rq

REASON = "This queue takes 2 reviewers per run (3 chosen)."


def _error_beside(page: str, item_id: int) -> str | None:
    found = re.search(rf'<small id="assign-{item_id}-error" class="error"[^>]*>(.*?)</small>', page, re.S)
    return " ".join(found.group(1).split()) if found else None


def _picked(page: str, item_id: int) -> list[str]:
    form = re.search(rf'<tr id="item-{item_id}">.*?</form>', page, re.S).group(0)
    return re.findall(r'<option value="(\d*)" selected>', form)


def test_a_refused_assignment_redirects_to_the_queue_page_which_shows_it_once(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann, bob, cy = (make.user(ws, Role.REVIEWER) for _ in range(3))
    make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {"kind": "chat"},
                               reviewers_per_run=2, assignment="by_hand")
    item = session.scalar(select(QueueItem.id).where(QueueItem.queue_id == queue.id))
    login(lead)
    picks = [str(ann.id), str(bob.id), str(cy.id)]
    refused = client.post(f"/queues/{queue.id}/items/{item}/assign", data={"assignees": picks})
    assert refused.status_code == 303 and refused.headers["Location"] == f"/queues/{queue.id}#item-{item}"
    page = client.get(f"/queues/{queue.id}").get_data(as_text=True)
    assert _error_beside(page, item) == REASON and _picked(page, item) == picks
    # Reloaded: the queue's page as it is, nothing posted again, nothing assigned.
    again = client.get(f"/queues/{queue.id}").get_data(as_text=True)
    assert _error_beside(again, item) is None and _picked(again, item) == []
    assert session.scalars(select(QueueAssignment).where(QueueAssignment.item_id == item)).all() == []
    # htmx: the page itself, as before.
    swapped = client.post(f"/queues/{queue.id}/items/{item}/assign", data={"assignees": picks},
                          headers={"HX-Request": "true"})
    assert swapped.status_code == 422 and _error_beside(swapped.get_data(as_text=True), item) == REASON
