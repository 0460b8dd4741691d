"""New-user walk of the team review queues (queuewalk): a disputed item read like any
complete one on the queue's page ("2 / 2 complete"). It now shows the "Disputed" badge
(``disputed_badge``, from ``queue_governing.disputed_mark``) in place of "complete",
with the way to the lead's decision (the disputes of this queue); an agreed item still
reads complete, and once a lead decided the run it reads complete again."""

from __future__ import annotations

import re

from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import Message, QueueItem
from reviewapp.services import adjudication, feedback
from reviewapp.services import review_queues as rq


def _rated_cell(page: str, item_id: int) -> str:
    row = re.search(rf'<tr id="item-{item_id}">.*?</tr>', page, re.S).group(0)
    return re.search(r'<td data-label="Rated">(.*?)</td>', row, re.S).group(1)


def _text(markup: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", markup).split())


def test_a_disputed_item_reads_disputed_on_the_queue_page(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann, bob = make.user(ws, username="ann"), make.user(ws, username="bob")
    split, agreed = make.run(ws), make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {}, reviewers_per_run=2,
                               reviewers="named", named=[ann.id, bob.id])
    for run, ratings in ((split, ("negative", "positive")), (agreed, ("negative", "negative"))):
        answer = session.scalar(select(Message.id).where(Message.run_pk == run.id, Message.role == "assistant"))
        for user, rating in zip((ann, bob), ratings, strict=True):
            feedback.upsert_feedback(session, make.actor(user), "chat_message", answer, None, rating)
    items = {i.run_pk: i.id for i in session.scalars(select(QueueItem).where(QueueItem.queue_id == queue.id))}
    login(lead)
    page = client.get(f"/queues/{queue.id}").get_data(as_text=True)
    disputed = _rated_cell(page, items[split.id])
    assert _text(disputed) == "2 / 2 Disputed Decide"
    assert 'class="badge badge-warn badge-disputed"' in disputed and "badge-ok" not in disputed
    assert f'href="/adjudication/?queue={queue.id}"' in disputed
    assert _text(_rated_cell(page, items[agreed.id])) == "2 / 2 complete"
    # A lead decides: the item reads complete again.
    adjudication.decide(session, make.actor(lead), split.id, "useful")
    page = client.get(f"/queues/{queue.id}").get_data(as_text=True)
    assert _text(_rated_cell(page, items[split.id])) == "2 / 2 complete"


def test_an_item_rated_by_more_people_than_needed_does_not_read_2_of_1(client, login, make, session):
    """New-user walk (2026-12-03): a by-hand queue of one reviewer per run showed
    "2 / 1 complete" for a run two people rated; the count beyond what is needed reads
    "2 ratings (1 needed)", a count up to it stays "n / needed"."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann, bob = make.user(ws, username="ann"), make.user(ws, username="bob")
    twice, once, none = make.run(ws), make.run(ws), make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "By hand", {}, assignment="by_hand")
    for run, raters in ((twice, (ann, bob)), (once, (ann,))):
        answer = session.scalar(select(Message.id).where(Message.run_pk == run.id, Message.role == "assistant"))
        for user in raters:
            feedback.upsert_feedback(session, make.actor(user), "chat_message", answer, None, "positive")
    items = {i.run_pk: i.id for i in session.scalars(select(QueueItem).where(QueueItem.queue_id == queue.id))}
    login(lead)
    page = client.get(f"/queues/{queue.id}").get_data(as_text=True)
    assert [_text(_rated_cell(page, items[run.id])) for run in (twice, once, none)] == [
        "2 ratings (1 needed) complete", "1 / 1 complete", "0 / 1"]
