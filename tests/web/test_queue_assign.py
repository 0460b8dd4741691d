"""A lead's by-hand assignment on a queue's page (issue 16), new-user findings: more
assignees than the queue's reviewers per run are refused naming ``assignees`` and N."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import pytest
from sqlalchemy import select
from werkzeug.test import TestResponse

from reviewapp.actors import Role
from reviewapp.models import Message, QueueAssignment, QueueItem, ReviewQueue, Run, User
from reviewapp.services import review_queues as rq


@pytest.fixture
def pairs(make, session):
    """A by-hand queue "Pairs" of two reviewers per run over two runs, made by the lead
    lee; the reviewers ann, bob and cy: ``(lead, (ann, bob, cy), queue, item ids sorted)``."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lee")
    people = tuple(make.user(ws, Role.REVIEWER, username=u) for u in ("ann", "bob", "cy"))
    for _ in range(2):
        make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {"kind": "chat"},
                               reviewers_per_run=2, assignment="by_hand")
    items = sorted(session.scalars(select(QueueItem.id).where(QueueItem.queue_id == queue.id)))
    return lead, people, queue, items


class Held(NamedTuple):
    lead: User
    run: Run
    queue: ReviewQueue
    item: QueueItem
    opened: TestResponse  # ann's "next item": a redirect to the run page at the item


@pytest.fixture
def ann_holds(client, login, make, session):
    """``ann_holds(name, others=(), **queue_options)`` -> ``Held``: a workspace of the
    lead lee and the reviewers ann and ``others``, one run, and lee's queue ``name`` over
    it; ann, logged in, has asked for her next item of it."""
    def _hold(name: str, others: tuple[str, ...] = (), **options: Any) -> Held:
        ws = make.workspace()
        lead = make.user(ws, Role.LEAD, username="lee")
        ann = make.user(ws, Role.REVIEWER, username="ann")
        for username in others:
            make.user(ws, Role.REVIEWER, username=username)
        run = make.run(ws)
        queue, _ = rq.create_queue(session, make.actor(lead), ws.id, name, {"kind": "chat"},
                                   **options)
        login(ann)
        opened = client.post("/queues/next", data={"queue": str(queue.id)})
        item = session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id))
        return Held(lead, run, queue, item, opened)

    return _hold


def _assign(client, queue, item_id, *people, **data):
    """POST the assign form of item ``item_id`` choosing ``people`` in slot order
    (``None``: "Nobody"), with any other form ``data`` (``cursor``)."""
    assignees = ["" if p is None else str(p.id) for p in people]
    return client.post(f"/queues/{queue.id}/items/{item_id}/assign",
                       data={"assignees": assignees, **data})


def _rate_the_answer(client, session, run) -> None:
    """The logged-in reviewer rates the run's first answer up: saved (303)."""
    answer_id = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                        Message.role == "assistant")
                               .order_by(Message.ordinal).limit(1))
    rated = client.post("/feedback", data={"target_type": "chat_message",
                                           "target_id": answer_id, "rating": "positive"})
    assert rated.status_code == 303


def _shown(client, answer):
    """A refused Assign's answer (queuewalk: POST/redirect/GET): a redirect to the queue's
    page at the item, whose GET shows the refusal; returns that page's response."""
    assert answer.status_code == 303 and "#item-" in answer.headers["Location"], answer.status_code
    return client.get(answer.headers["Location"].split("#")[0])


def _assigned(session, item_id):
    session.expire_all()
    return sorted(session.scalars(select(QueueAssignment.user_id)
                                  .where(QueueAssignment.item_id == item_id)))


def test_assigning_more_than_reviewers_per_run_is_refused_naming_the_field(
        client, login, session, pairs):
    """Finding 1 through the page's route: three assignees for a queue of two reviewers
    per run are refused (a 4xx that names ``assignees`` and how many the queue takes);
    nothing is stored. Two are taken."""
    lead, (ann, bob, cy), queue, items = pairs
    login(lead)
    refused = _shown(client, _assign(client, queue, items[0], ann, bob, cy))
    page = refused.get_data(as_text=True)
    assert refused.status_code == 200
    assert "assignees" in page and "This queue takes 2 reviewers per run (3 chosen)." in page
    assert _assigned(session, items[0]) == []
    taken = _assign(client, queue, items[0], ann, bob)
    assert taken.status_code == 303
    assert _assigned(session, items[0]) == sorted([ann.id, bob.id])


def test_rating_that_completes_an_item_releases_it_on_every_page(client, login, session,
                                                                  ann_holds):
    """Finding 3 through the pages: ann opens her next item and rates its answer (N = 1).
    The item is complete: the lead's queue page no longer shows it reserved nor ann
    holding it, and ann's run page (its renewal poll, and a reload) says the item is
    complete instead of "reserved for you" (or "another reviewer may take it")."""
    lead, run, queue, item, opened = ann_holds("Singles", reservation_minutes=30)
    assert opened.headers["Location"] == f"/runs/{run.id}?item={item.id}&queue_id={queue.id}"
    assert "Reserved for you until" in client.get(opened.headers["Location"]).get_data(as_text=True)
    _rate_the_answer(client, session, run)
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


def _form_of(html, item_id):
    """The assign form of one item on the queue page (its whole ``<form>``)."""
    found = re.search(rf'<form method="post" action="/queues/\d+/items/{item_id}/assign#item-{item_id}".*?</form>',
                      html, re.S)
    assert found, f"no assign form for item {item_id}"
    return found.group(0)


def _picked(form_html):
    """Per select of an assign form, in slot order: the label of its selected option
    (``None``: none selected, the browser shows the first, "Nobody")."""
    out = []
    for select_ in re.findall(r"<select\b.*?</select>", form_html, re.S):
        chosen = re.findall(r'<option value="[^"]*" selected>([^<]*)</option>', select_)
        out.append(" ".join(chosen[0].split()) if chosen else None)
    return out


def test_a_refused_assignment_shows_the_page_again_with_the_error_at_its_form(
        client, login, make, session, pairs):
    """Finding 2: a refused by-hand assignment answered a bare 400 page; the lead lost the
    queue page and what they picked. Now the queue page comes back (since the queuewalk
    through a redirect to it: POST/redirect/GET) with the reason beside that item's reviewer selects,
    the selects still showing the lead's picks (one more select when they picked more
    than the page had), marked invalid and described by the reason, the first one
    focused (autofocus, as the triage page's refused fields); the other items' forms are
    as they were, and nothing is stored."""
    lead, (ann, bob, cy), queue, items = pairs
    rq.assign(session, make.actor(lead), items[0], [cy.id])
    login(lead)
    refused = _shown(client, _assign(client, queue, items[1], ann, bob, cy))
    html = refused.get_data(as_text=True)
    assert refused.status_code == 200
    assert '<h2 id="qi-h">Items' in html  # the queue page, not an error page
    form = _form_of(html, items[1])
    error_id = f"assign-{items[1]}-error"
    error = re.search(rf'<small id="{error_id}" class="error"[^>]*>(.*?)</small>', form, re.S)
    assert error and " ".join(error.group(1).split()) == \
        "This queue takes 2 reviewers per run (3 chosen)."
    assert _picked(form) == ["ann", "bob", "cy"]
    selects = re.findall(r"<select\b[^>]*>", form)
    assert len(selects) == 3
    assert all('aria-invalid="true"' in s and f'aria-describedby="{error_id}"' in s
               for s in selects)
    assert [("autofocus" in s) for s in selects] == [True, False, False]
    assert html.count("autofocus") == 1 and html.count('aria-invalid="true"') == 3
    other = _form_of(html, items[0])
    assert _picked(other) == ["cy", None] and "error" not in other
    assert _assigned(session, items[1]) == [] and _assigned(session, items[0]) == [cy.id]
    # The same reviewer twice, "Nobody" between: each pick stays in its own slot.
    twice = _shown(client, _assign(client, queue, items[1], bob, bob))
    form = _form_of(twice.get_data(as_text=True), items[1])
    assert twice.status_code == 200 and _picked(form) == ["bob", "bob"]
    assert "Choose each reviewer once (twice: bob)." in form
    gap = _shown(client, _assign(client, queue, items[1], None, bob, bob))
    assert _picked(_form_of(gap.get_data(as_text=True), items[1])) == [None, "bob", "bob"]
    # Fixed: taken, back to the page (303) at the item.
    done = _assign(client, queue, items[1], ann, bob)
    assert done.status_code == 303 and done.headers["Location"].endswith(f"#item-{items[1]}")
    assert _assigned(session, items[1]) == sorted([ann.id, bob.id])


def test_a_refusal_for_an_item_not_on_the_page_is_said_at_the_top(app, client, login, pairs):
    """The page comes back at the form's cursor; should the refused item not be on it,
    the reason is said above the items (focused) rather than nowhere."""
    app.config["QUEUE_ITEMS_PAGE_SIZE"] = 1
    lead, (ann, bob, cy), queue, items = pairs
    login(lead)
    first = client.get(f"/queues/{queue.id}").get_data(as_text=True)
    cursor = re.search(r'href="/queues/\d+\?cursor=([^"]+)"[^>]*>Next page', first).group(1)
    refused = _shown(client, _assign(client, queue, items[0], ann, bob, cy, cursor=cursor))
    html = refused.get_data(as_text=True)
    assert refused.status_code == 200 and f"/items/{items[0]}/assign" not in html
    assert ('<p class="flash flash-error" role="alert" tabindex="-1" autofocus>The item was not '
            "assigned. This queue takes 2 reviewers per run (3 chosen).</p>") in html


def test_rating_a_held_items_answer_in_a_pair_queue_says_it_is_free(client, session, ann_holds):
    """New-user walk: in a queue of two reviewers per run, ann rated her held item's answer
    and the run page kept "Reserved for you until ...", though the next reviewer already
    got that item. The held fragment asks again after each saved rating
    (``feedback-saved``); the answer then says she rated it, and polls no more."""
    held = ann_holds("Pairs", others=("bob",), reviewers_per_run=2)
    page = client.get(held.opened.headers["Location"]).get_data(as_text=True)
    assert re.search(r'id="reservation"[^>]*hx-trigger="every 60s, feedback-saved from:body"', page)
    assert "Reserved for you until" in client.post(
        f"/queues/items/{held.item.id}/renew").get_data(as_text=True)
    _rate_the_answer(client, session, held.run)
    polled = client.post(f"/queues/items/{held.item.id}/renew").get_data(as_text=True)
    assert "You have rated this item: your rating is saved" in polled
    assert "hx-post" not in polled and "reservation-lost" not in polled


def test_a_complete_item_shows_no_assign_form_and_is_not_assigned(client, login, make, session):
    """New-user walk: a complete item of a by-hand queue still showed the Assign form, and
    assigning it answered "Item assigned.". Its row names its assignees instead; a post
    anyway is refused (400) naming the item, its assignees kept."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lee")
    ann, bob = make.user(ws, Role.REVIEWER, username="ann"), make.user(ws, Role.REVIEWER, username="bob")
    done_run, open_run = make.run(ws, "done-run"), make.run(ws, "open-run")
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Hand", assignment="by_hand")
    done, open_ = (session.scalar(select(QueueItem.id).where(QueueItem.queue_id == queue.id,
                                                             QueueItem.run_pk == r.id))
                   for r in (done_run, open_run))
    rq.assign(session, make.actor(lead), done, [ann.id])
    make.feedback_row(done_run, ann, rating="positive")  # N = 1: complete
    login(lead)
    page = client.get(f"/queues/{queue.id}").get_data(as_text=True)
    forms = re.findall(r'action="/queues/\d+/items/(\d+)/assign', page)
    assert forms == [str(open_)]
    row = re.search(rf'<tr id="item-{done}".*?</tr>', page, re.S).group(0)
    assert re.search(r'data-label="Assigned to">\s*ann\s*</td>', row)
    refused = _shown(client, client.post(f"/queues/{queue.id}/items/{done}/assign", data={"assignees": str(bob.id)}))
    assert refused.status_code == 200  # the queue page, the reason above the items
    assert ("The item was not assigned. The item of run done-run is complete (its reviewers have rated it): "
            "it takes no assignment.") in refused.get_data(as_text=True)
    assert list(session.scalars(select(QueueAssignment.user_id).where(QueueAssignment.item_id == done))) == [ann.id]
