"""A lead's by-hand assignment on a queue's page (issue 16), new-user findings: more
assignees than the queue's reviewers per run are refused naming ``assignees`` and N."""

from __future__ import annotations

from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import QueueAssignment, QueueItem
from reviewapp.services import review_queues as rq


def _setup(make, session, n=2):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lee")
    people = [make.user(ws, Role.REVIEWER, username=u) for u in ("ann", "bob", "cy")]
    for _ in range(2):
        make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {"kind": "chat"},
                               reviewers_per_run=n, assignment="by_hand")
    items = sorted(session.scalars(select(QueueItem.id).where(QueueItem.queue_id == queue.id)))
    return lead, people, queue, items


def _assigned(session, item_id):
    session.expire_all()
    return sorted(session.scalars(select(QueueAssignment.user_id)
                                  .where(QueueAssignment.item_id == item_id)))


def test_assigning_more_than_reviewers_per_run_is_refused_naming_the_field(
        client, login, make, session):
    """Finding 1 through the page's route: three assignees for a queue of two reviewers
    per run are refused (a 4xx that names ``assignees`` and how many the queue takes);
    nothing is stored. Two are taken."""
    lead, (ann, bob, cy), queue, items = _setup(make, session)
    login(lead)
    url = f"/queues/{queue.id}/items/{items[0]}/assign"
    refused = client.post(url, data={"assignees": [str(ann.id), str(bob.id), str(cy.id)]})
    page = refused.get_data(as_text=True)
    assert 400 <= refused.status_code < 500
    assert "assignees" in page and "this queue takes 2 reviewers per run (3 chosen)" in page
    assert _assigned(session, items[0]) == []
    taken = client.post(url, data={"assignees": [str(ann.id), str(bob.id)]})
    assert taken.status_code == 303
    assert _assigned(session, items[0]) == sorted([ann.id, bob.id])


def _answer_id(session, run_pk):
    from reviewapp.models import Message

    return session.scalar(select(Message.id).where(Message.run_pk == run_pk,
                                                   Message.role == "assistant")
                          .order_by(Message.ordinal).limit(1))


def test_rating_that_completes_an_item_releases_it_on_every_page(client, login, make, session):
    """Finding 3 through the pages: ann opens her next item and rates its answer (N = 1).
    The item is complete: the lead's queue page no longer shows it reserved nor ann
    holding it, and ann's run page (its renewal poll, and a reload) says the item is
    complete instead of "reserved for you" (or "another reviewer may take it")."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lee")
    ann = make.user(ws, Role.REVIEWER, username="ann")
    run = make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Singles", {"kind": "chat"},
                               reservation_minutes=30)
    login(ann)
    opened = client.post("/queues/next", data={"queue": str(queue.id)})
    item = session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id))
    assert opened.headers["Location"] == f"/runs/{run.id}?item={item.id}&queue_id={queue.id}"
    assert "Reserved for you until" in client.get(opened.headers["Location"]).get_data(as_text=True)
    rated = client.post("/feedback", data={"target_type": "chat_message",
                                           "target_id": _answer_id(session, run.id),
                                           "rating": "positive"})
    assert rated.status_code == 303
    polled = client.post(f"/queues/items/{item.id}/renew").get_data(as_text=True)
    assert "This item is complete" in polled and "hx-post" not in polled
    assert "Not reserved for you" not in polled
    page = client.get(opened.headers["Location"]).get_data(as_text=True)
    assert "This item is complete" in page and "Reserved for you until" not in page
    client.post("/logout")
    login(lead)
    html = client.get(f"/queues/{queue.id}").get_data(as_text=True)
    assert "0 reserved now" in html and "ann until" not in html
    assert '<td data-label="Holding now">0</td>' in html.replace("\n", "").replace(" </td>", "</td>")
