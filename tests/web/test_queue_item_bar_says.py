"""New-user walk (item bar): the queue item bar said "Not reserved for you: another
reviewer may take this item" to anyone not holding the item — a lead looking at the item
reviewer2 holds, a lead opening a free item from the queue's page, a lead whose by-hand
item is assigned to them, and anyone after their rating or once the item was complete.
Now the bar says who holds the item and until when, that a free item may be rated here,
that an assigned one is assigned to them, that their rating is saved, or that the item
is complete or disputed (``queue_bar.bar_state``: the rule; the template shows it). The
renewal poll (``/queues/items/<id>/renew``) says the same as the page."""

from __future__ import annotations

import html as htmllib
import re
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import Message, QueueItem
from reviewapp.services import feedback
from reviewapp.services import review_queues as rq

NEXT = "Use “Next item” for your next one."


def _bar(page: str) -> str:
    found = re.search(r'<span id="reservation"[^>]*>(.*?)</span>', page, re.S)
    assert found, "no reservation sentence in the queue bar"
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", "", found.group(1))).split())


def _item(session, queue) -> QueueItem:
    return session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id))


def _says(client, run, item, queue) -> str:
    """The bar's sentence on the item's page, checked against the renewal poll's."""
    page = _bar(client.get(f"/runs/{run.id}?item={item.id}&queue_id={queue.id}").get_data(as_text=True))
    assert _bar(client.post(f"/queues/items/{item.id}/renew").get_data(as_text=True)) == page
    return page


def _rate(session, make, user, run, rating="positive") -> None:
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id, Message.role == "assistant")
                            .order_by(Message.ordinal).limit(1))
    feedback.upsert_feedback(session, make.actor(user), "chat_message", answer, None, rating)


def test_the_bar_names_who_holds_the_item_and_until_when(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lena")
    reviewer2 = make.user(ws, Role.REVIEWER, username="reviewer2")
    ann = make.user(ws, Role.REVIEWER, username="ann")
    run = make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Chat answers", {"kind": "chat"})
    item = _item(session, queue)
    until = (datetime.now(UTC) + timedelta(minutes=20)).replace(second=0, microsecond=0)
    item.reserved_by, item.reserved_until = reviewer2.id, until
    session.commit()
    # the page's usual time (``time`` macro), as app.js writes it: date, time, "UTC"
    expected = f"reviewer2 is reviewing this item (reserved until {until:%Y-%m-%d %H:%M} UTC)."
    for viewer in (lead, ann):
        login(viewer)
        assert _says(client, run, item, queue) == expected, viewer.username
        client.post("/logout")
    # The holder's renewal was not touched by the others' polls.
    session.expire_all()
    assert _item(session, queue).reserved_by == reviewer2.id


def test_a_free_item_may_be_rated_here_and_an_assigned_one_is_the_leads(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lena")
    run = make.run(ws)
    open_q, _ = rq.create_queue(session, make.actor(lead), ws.id, "Open to all", {"kind": "chat"})
    by_hand, _ = rq.create_queue(session, make.actor(lead), ws.id, "By hand", {"kind": "chat"},
                                 assignment="by_hand")
    rq.assign(session, make.actor(lead), _item(session, by_hand).id, [lead.id])
    login(lead)
    assert _says(client, run, _item(session, open_q), open_q) == (
        "You can rate this item here. It is not reserved for you, so another reviewer may take it "
        "meanwhile; “Next item” reserves one for you.")
    assert _says(client, run, _item(session, by_hand), by_hand) == (
        f"Assigned to you: you can rate it here; only the reviewers a lead assigned it to can take it. {NEXT}")


def test_after_a_rating_the_bar_says_it_is_saved_complete_or_disputed(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lena")
    ann, bob = make.user(ws, username="ann"), make.user(ws, username="bob")
    rated_run, complete_run, split_run = make.run(ws), make.run(ws), make.run(ws)
    pairs, _ = rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {"kind": "chat"}, reviewers_per_run=2)
    items = {i.run_pk: i for i in session.scalars(select(QueueItem).where(QueueItem.queue_id == pairs.id))}
    _rate(session, make, lead, rated_run)  # 1 of 2: the lead's rating is saved, not complete
    for run, ratings in ((complete_run, ("positive", "positive")), (split_run, ("negative", "positive"))):
        for user, rating in zip((ann, bob), ratings, strict=True):
            _rate(session, make, user, run, rating)
    login(lead)
    assert _says(client, rated_run, items[rated_run.id], pairs) == f"You have rated this item: your rating is saved. {NEXT}"
    assert _says(client, complete_run, items[complete_run.id], pairs) == (
        f"This item is complete: it needs no more ratings, so nobody holds it. {NEXT}")
    assert _says(client, split_run, items[split_run.id], pairs) == (
        f"This item is disputed: its reviewers disagree, so it waits for a lead to decide the run's verdict. {NEXT}")
    client.post("/logout")
    login(ann)  # a reviewer who rated the complete item is told it is complete
    assert _says(client, complete_run, items[complete_run.id], pairs) == (
        f"This item is complete: it needs no more ratings, so nobody holds it. {NEXT}")
