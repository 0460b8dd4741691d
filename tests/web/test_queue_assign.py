"""A lead's by-hand assignment on a queue's page (issue 16), new-user findings: more
assignees than the queue's reviewers per run are refused naming ``assignees`` and N."""

from __future__ import annotations

import re

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
        client, login, make, session):
    """Finding 2: a refused by-hand assignment answered a bare 400 page; the lead lost the
    queue page and what they picked. Now the queue page comes back (422, as the queue
    form answers a refused submit) with the reason beside that item's reviewer selects,
    the selects still showing the lead's picks (one more select when they picked more
    than the page had), marked invalid and described by the reason, the first one
    focused (autofocus, as the triage page's refused fields); the other items' forms are
    as they were, and nothing is stored."""
    lead, (ann, bob, cy), queue, items = _setup(make, session)
    rq.assign(session, make.actor(lead), items[0], [cy.id])
    login(lead)
    refused = client.post(f"/queues/{queue.id}/items/{items[1]}/assign",
                          data={"assignees": [str(ann.id), str(bob.id), str(cy.id)]})
    html = refused.get_data(as_text=True)
    assert refused.status_code == 422
    assert '<h2 id="qi-h">Items' in html  # the queue page, not an error page
    form = _form_of(html, items[1])
    error_id = f"assign-{items[1]}-error"
    error = re.search(rf'<small id="{error_id}" class="error"[^>]*>(.*?)</small>', form, re.S)
    assert error and " ".join(error.group(1).split()) == \
        "this queue takes 2 reviewers per run (3 chosen)"
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
    twice = client.post(f"/queues/{queue.id}/items/{items[1]}/assign",
                        data={"assignees": [str(bob.id), str(bob.id)]})
    form = _form_of(twice.get_data(as_text=True), items[1])
    assert twice.status_code == 422 and _picked(form) == ["bob", "bob"]
    assert "choose each reviewer once (twice: bob)" in form
    gap = client.post(f"/queues/{queue.id}/items/{items[1]}/assign",
                      data={"assignees": ["", str(bob.id), str(bob.id)]})
    assert _picked(_form_of(gap.get_data(as_text=True), items[1])) == [None, "bob", "bob"]
    # Fixed: taken, back to the page (303) at the item.
    done = client.post(f"/queues/{queue.id}/items/{items[1]}/assign",
                       data={"assignees": [str(ann.id), str(bob.id)]})
    assert done.status_code == 303 and done.headers["Location"].endswith(f"#item-{items[1]}")
    assert _assigned(session, items[1]) == sorted([ann.id, bob.id])


def test_a_refusal_for_an_item_not_on_the_page_is_said_at_the_top(app, client, login, make,
                                                                  session):
    """The page comes back at the form's cursor; should the refused item not be on it,
    the reason is said above the items (focused) rather than nowhere."""
    app.config["QUEUE_ITEMS_PAGE_SIZE"] = 1
    lead, (ann, bob, cy), queue, items = _setup(make, session)
    login(lead)
    first = client.get(f"/queues/{queue.id}").get_data(as_text=True)
    cursor = re.search(r'href="/queues/\d+\?cursor=([^"]+)"[^>]*>Next page', first).group(1)
    refused = client.post(f"/queues/{queue.id}/items/{items[0]}/assign",
                          data={"assignees": [str(ann.id), str(bob.id), str(cy.id)],
                                "cursor": cursor})
    html = refused.get_data(as_text=True)
    assert refused.status_code == 422 and f"/items/{items[0]}/assign" not in html
    assert ('<p class="flash flash-error" role="alert" tabindex="-1" autofocus>The item was not '
            "assigned: this queue takes 2 reviewers per run (3 chosen)</p>") in html


def test_rating_a_held_items_answer_in_a_pair_queue_says_it_is_free(client, login, make, session):
    """New-user walk: in a queue of two reviewers per run, ann rated her held item's answer
    and the run page kept "Reserved for you until ...", though the next reviewer already
    got that item. The held fragment asks again after each saved rating
    (``feedback-saved``); the answer then says she rated it, and polls no more."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lee")
    ann = make.user(ws, Role.REVIEWER, username="ann")
    make.user(ws, Role.REVIEWER, username="bob")
    run = make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {"kind": "chat"},
                               reviewers_per_run=2)
    login(ann)
    opened = client.post("/queues/next", data={"queue": str(queue.id)})
    item = session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id))
    page = client.get(opened.headers["Location"]).get_data(as_text=True)
    assert re.search(r'id="reservation"[^>]*hx-trigger="every 60s, feedback-saved from:body"', page)
    assert "Reserved for you until" in client.post(
        f"/queues/items/{item.id}/renew").get_data(as_text=True)
    rated = client.post("/feedback", data={"target_type": "chat_message",
                                           "target_id": _answer_id(session, run.id),
                                           "rating": "positive"})
    assert rated.status_code == 303
    polled = client.post(f"/queues/items/{item.id}/renew").get_data(as_text=True)
    assert "You have rated this item: it is free for the next reviewer" in polled
    assert "hx-post" not in polled and "reservation-lost" not in polled
