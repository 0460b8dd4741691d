"""New-user walk of the team-review queues, what the pages say: the bulk "Add to queue"
refusal and a lead's by-hand assignment refusals are plain sentences (no field code such
as "runs: ", no lower-case start), each asserted as the exact text the page shows."""

from __future__ import annotations

import html as htmllib
import re

from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import QueueAssignment, QueueItem
from reviewapp.services import review_queues as rq


def _text(markup: str) -> str:
    return htmllib.unescape(re.sub(r"\s+", " ", markup))


def _flashes(page: str) -> list[str]:
    return [_text(m).strip() for m in re.findall(r'<div class="flash flash-\w+">(.*?)</div>', page, re.S)]


def test_a_refused_bulk_add_says_a_sentence_without_the_field_code(client, login, make, session):
    """Walk finding 6: the refusal read "runs: nothing was added: ..." (the field's code
    first). Each refusal of "Add to queue" now reads as a sentence of its own."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    good = make.run(ws, "good-1")
    make.aiops_run(ws, "failed-1", status="FAILED", answer=None, report=None)
    bad = make.aiops_run(ws, "failed-2", status="FAILED", answer=None, report=None)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Q", {"kind": "aiops", "status": "SUCCESS"})
    login(lead)
    back = "/?kind=chat"

    def told(data):
        answer = client.post("/queues/add-runs", data={"queue": str(queue.id), "next": back, **data})
        assert answer.status_code == 303 and answer.headers["Location"] == back
        return _flashes(client.get(back).get_data(as_text=True))

    assert told({}) == ["Nothing was added: check at least one run to add to the queue."]
    assert told({"runs": "abc"}) == ["Nothing was added: the checked values are not run ids."]
    assert told({"runs": [str(good.id), str(bad.id)]}) == [
        "Nothing was added: 1 of the 2 checked runs has nothing to rate at answer level (no answer, no "
        "report), so its item could never complete: failed-2. Uncheck it and add again."]
    assert not rq.exists_item(session, queue.id, good.id)


def _by_hand(make, session, *, n: int = 1):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lee")
    ann, bob = make.user(ws, Role.REVIEWER, username="ann"), make.user(ws, Role.REVIEWER, username="bob")
    outsider = make.user(make.workspace(), Role.REVIEWER, username="zed")
    run = make.run(ws, "run-a")
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "By hand", {"kind": "chat"},
                               reviewers_per_run=n, assignment="by_hand")
    item = session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id))
    return lead, (ann, bob, outsider), run, queue, item


def _error_beside(page: str, item_id: int) -> str:
    found = re.search(rf'<small id="assign-{item_id}-error" class="error">(.*?)</small>', page, re.S)
    assert found, "no reason beside the item's form"
    return _text(found.group(1)).strip()


def test_the_assign_forms_refusals_are_sentences(client, login, make, session):
    """Walk finding 7: the reasons beside a by-hand item's Assign form began in lower
    case ("this queue takes 1 reviewer per run (2 chosen)"). Each is a sentence now."""
    lead, (ann, bob, outsider), _, queue, item = _by_hand(make, session)
    login(lead)

    def refused(*people):
        answer = _shown(client, client.post(f"/queues/{queue.id}/items/{item.id}/assign",
                                            data={"assignees": [str(p.id) for p in people]}))
        assert answer.status_code == 200
        return _error_beside(answer.get_data(as_text=True), item.id)

    assert refused(ann, bob) == "This queue takes 1 reviewer per run (2 chosen)."
    assert refused(ann, ann) == "Choose each reviewer once (twice: ann)."
    assert refused(outsider) == ("Only reviewers who may review this queue can be assigned "
                                 "(not: 1 person outside the workspace).")
    odd = _shown(client, client.post(f"/queues/{queue.id}/items/{item.id}/assign", data={"assignees": ["x"]}))
    assert odd.status_code == 200
    assert _error_beside(odd.get_data(as_text=True), item.id) == "Choose reviewers from the list."
    assert session.scalars(select(QueueAssignment).where(QueueAssignment.item_id == item.id)).all() == []


def test_assigning_an_item_completed_meanwhile_says_so_on_the_queue_page(client, login, make, session):
    """A stale page's Assign on an item completed since (its row has no form any more):
    the queue page says above the items, as a sentence, that it was not assigned and why,
    instead of an error page reading "item: the item of run ... is complete"."""
    lead, (ann, bob, _), run, queue, item = _by_hand(make, session)
    rq.assign(session, make.actor(lead), item.id, [ann.id])
    make.feedback_row(run, ann, rating="positive")  # N = 1: complete
    login(lead)
    answer = _shown(client, client.post(f"/queues/{queue.id}/items/{item.id}/assign", data={"assignees": [str(bob.id)]}))
    assert answer.status_code == 200
    page = answer.get_data(as_text=True)
    top = re.search(r'<p class="flash flash-error" role="alert" tabindex="-1" autofocus>(.*?)</p>', page, re.S)
    assert top and _text(top.group(1)) == (
        "The item was not assigned. The item of run run-a is complete (its reviewers have rated it): "
        "it takes no assignment.")


def _next_item_forms(page: str) -> list[str]:
    """The queue ids of the page's "review" buttons (next-item forms; "" across queues)."""
    forms = re.findall(r'<form method="post" action="/queues/next".*?</form>', page, re.S)
    queues = [re.search(r'name="queue" value="(\d*)"', f) for f in forms]
    return [m.group(1) if m else "" for m in queues]


def _actions(row: str) -> str:
    """The text of a table row's actions cell."""
    cell = re.search(r'<td class="actions"[^>]*>(.*?)</td>', row, re.S).group(1)
    return " ".join(re.sub(r"<[^>]+>", " ", cell).split())


def test_an_empty_queue_offers_no_review_button(client, login, make, session):
    """Walk finding 4: a queue with no items still offered "Review this queue" (and, on the
    queues list, "Review"), which led to "Nothing to review in this queue yet". Its row
    says it has no runs instead; with every queue empty "My next item" says so in place of
    "Open my next item"."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann = make.user(ws, Role.REVIEWER, username="ann")
    make.run(ws)
    empty, _ = rq.create_queue(session, make.actor(lead), ws.id, "Empty one", {"kind": "aiops"})
    login(ann)
    mine = _text(client.get("/queue").get_data(as_text=True))
    assert _next_item_forms(mine) == []
    empty_state = re.search(r'<div class="empty">(.*?)</div>', mine, re.S).group(1)
    assert " ".join(re.sub(r"<[^>]+>", " ", empty_state).split()) == (
        "No runs in your queues yet. Runs matching a queue's rule enter as they finish; "
        "a lead can also add runs from the runs list.")
    row = re.search(r"<tr id=\"queue-\d+\"><td data-label=\"Queue\".*?</tr>", mine, re.S).group(0)
    assert _actions(row) == "No runs yet"
    listing = client.get("/queues/").get_data(as_text=True)
    assert _next_item_forms(listing) == [""]  # "My next item" only, no "Review" for the empty queue
    row = re.search(rf'<tr id="queue-{empty.id}">.*?</tr>', listing, re.S).group(0)
    assert _actions(row) == "No runs yet"
    # A queue with runs beside it: its button is there, the empty one's is not.
    full, _ = rq.create_queue(session, make.actor(lead), ws.id, "With runs", {"kind": "chat"})
    mine = client.get("/queue").get_data(as_text=True)
    assert _next_item_forms(mine) == ["", str(full.id)]
    assert "Review this queue" in mine and "No runs yet" in mine
    assert _next_item_forms(client.get("/queues/").get_data(as_text=True)) == ["", str(full.id)]


def _reservation(page: str) -> str:
    found = re.search(r'<span id="reservation"[^>]*>(.*?)</span>', page, re.S)
    assert found, "no reservation banner"
    return _text(re.sub(r"<[^>]+>", "", found.group(1))).strip()


def test_a_skipped_assigned_items_banner_says_who_may_take_it(client, login, make, session):
    """Walk finding 2: after Skip, a by-hand item's page (Back, or its renewal poll) said
    "another reviewer may take this item"; only its assignees may, and a lead decides who
    they are. It says so now, for a round-robin queue too (dealt, not assigned by a lead);
    an open queue's item says another reviewer may take it, true there (since the item bar
    walk: that you can rate it here, and "Next item" reserves one; ``queue_bar``)."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lee")
    ann, bob = make.user(ws, Role.REVIEWER, username="ann"), make.user(ws, Role.REVIEWER, username="bob")
    make.run(ws)
    told = {}
    login(ann)
    for mode in ("by_hand", "round_robin", "open"):
        queue, _ = rq.create_queue(session, make.actor(lead), ws.id, mode, {"kind": "chat"}, assignment=mode)
        item = session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id))
        if mode == "by_hand":
            rq.assign(session, make.actor(lead), item.id, [ann.id])
        elif mode == "round_robin":  # dealt to ann or bob: make it ann's
            rq.assign(session, make.actor(lead), item.id, [ann.id])
        opened = client.post("/queues/next", data={"queue": str(queue.id)})
        assert f"item={item.id}" in opened.headers["Location"]
        # (Skip on the queue's only item, held by nobody else: this answered a 500 for the
        # assigned queues, as no other item waited for anyone.)
        stays = (f"it stays assigned to you and comes back after your other items in “{mode}”" if mode != "open"
                 else f"it is free again for the other reviewers of “{mode}”, and comes back to you after your other items")
        assert _told(client, {"queue": str(queue.id), "skip": str(item.id)}) == [
            f"Item skipped: {stays}.",  # what Skip did (queuewalk)
            "Nothing else for you to review in this queue: you skipped the one item left for you, "
            "and “Review this queue” hands it back."]
        back = _reservation(client.get(opened.headers["Location"]).get_data(as_text=True))
        polled = _reservation(client.post(f"/queues/items/{item.id}/renew").get_data(as_text=True))
        assert back == polled
        told[mode] = back
        if mode != "open":  # the lead gives it to bob: no longer ann's
            rq.assign(session, make.actor(lead), item.id, [bob.id])
            told[f"{mode} elsewhere"] = _reservation(client.get(opened.headers["Location"]).get_data(as_text=True))
            assert _reservation(client.post(f"/queues/items/{item.id}/renew").get_data(as_text=True)) == \
                told[f"{mode} elsewhere"]
    assert told == {
        "by_hand": "Assigned to you: you can rate it here; only the reviewers a lead assigned it to "
                   "can take it. Use “Next item” for your next one.",  # item-bar walk: no "Not reserved, but"
        "by_hand elsewhere": "Not reserved for you: a lead assigned this item to other reviewers. "
                             "Use “Next item” for your next one.",
        "round_robin": "Assigned to you: you can rate it here; only the reviewers it was dealt to "
                       "can take it. Use “Next item” for your next one.",
        "round_robin elsewhere": "Not reserved for you: this item is assigned to other reviewers. "
                                 "Use “Next item” for your next one.",
        "open": "You can rate this item here. It is not reserved for you, so another reviewer may take it "
                "meanwhile; “Next item” reserves one for you.",
    }


def _shown(client, answer):
    """A refused Assign's answer (queuewalk: POST/redirect/GET): a redirect to the queue's
    page at the item, whose GET shows the refusal; returns that page's response."""
    assert answer.status_code == 303 and "#item-" in answer.headers["Location"], answer.status_code
    return client.get(answer.headers["Location"].split("#")[0])


def _told(client, data):
    answer = client.post("/queues/next", data=data)
    assert answer.status_code == 303
    return _flashes(client.get(answer.headers["Location"]).get_data(as_text=True))


def test_a_lead_is_told_to_assign_not_to_wait_for_a_lead(client, login, make, session):
    """Walk finding 3: a lead reviewing a by-hand queue they lead read "wait for a lead to
    assign them" and "a lead assigns its items": they are that lead. They are told to
    assign them on the queue's page (which My next item now links for a lead); a reviewer
    still reads the old sentences."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lee")
    ann = make.user(ws, Role.REVIEWER, username="ann")
    for _ in range(3):
        make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "By hand", assignment="by_hand")
    login(lead)
    assert _told(client, {"queue": queue.id}) == [
        "Nothing is assigned to you in this queue yet: you lead it, so assign its items on the queue's "
        "page (under Queues)."]
    mine = client.get("/queue").get_data(as_text=True)
    assert f'<a href="/queues/{queue.id}">By hand</a>' in mine  # the queue's page, one click away
    items = sorted(session.scalars(select(QueueItem.id).where(QueueItem.queue_id == queue.id)))
    rq.assign(session, make.actor(lead), items[0], [lead.id])
    rq.assign(session, make.actor(lead), items[1], [ann.id])
    skipped = "Item skipped: it stays assigned to you and comes back after your other items in “By hand”."
    assert _told(client, {"queue": queue.id, "skip": items[0]}) == [
        skipped,  # what Skip did (queuewalk)
        "Nothing else for you to review in this queue: you skipped the one item left for you, and "
        "“Review this queue” hands it back. Of the 2 other items not complete yet, 1 waits for you to "
        "assign it on the queue's page (under Queues) and 1 for other reviewers."]
    assert _told(client, {"skip": items[0]}) == [
        skipped,
        "Nothing else for you to review in your queues: you skipped the one item left for you, and "
        "“Open my next item” hands it back. Of the 2 other items not complete yet, 1 waits for you to "
        "assign it on its queue's page (under Queues) and 1 for other reviewers."]
    # A reviewer of the same queue: a lead assigns.
    client.post("/logout")
    login(ann)
    client.post("/queues/next", data={"queue": queue.id})
    assert _told(client, {"queue": queue.id, "skip": items[1]}) == [
        skipped,
        "Nothing else for you to review in this queue: you skipped the one item left for you, and "
        "“Review this queue” hands it back. Of the 2 other items not complete yet, 1 waits for a lead to "
        "assign it and 1 for other reviewers."]
    assert f'<a href="/queues/{queue.id}">' not in client.get("/queue").get_data(as_text=True)


def test_a_queue_items_run_page_stays_in_the_queue(client, login, make, session):
    """Walk finding 1: a run opened as a queue item had "← Runs", "‹ Previous" and
    "Next ›" of the runs list's order, which left the queue. Chosen: the way back is the
    reviewer's queues page ("← Review queue", the nav item this page is under; since the
    queuewalk, at the item's queue's row); Previous
    and Next of the runs list are not shown (items are handed out by reservation, so an
    item "before" may be someone else's or complete: not meaningful); the queue bar's
    "Next item" (n) goes on in the queue, as the shortcuts help says. A rating saved
    without JavaScript comes back to the item's page (its queue bar), not the bare run."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann = make.user(ws, Role.REVIEWER)
    runs = [make.run(ws) for _ in range(3)]
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Q", {"kind": "chat"})
    login(ann)
    opened = client.post("/queues/next", data={"queue": str(queue.id)})
    location = opened.headers["Location"]
    item = session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id, QueueItem.run_pk == runs[0].id))
    assert location == f"/runs/{runs[0].id}?item={item.id}&queue_id={queue.id}"
    page = client.get(location).get_data(as_text=True)
    nav = re.search(r'<nav class="run-nav".*?</nav>', page, re.S).group(0)
    links = [(href, _text(re.sub(r"<[^>]+>", "", label)).strip())
             for href, label in re.findall(r'<a [^>]*href="([^"]*)"[^>]*>(.*?)</a>', nav, re.S)]
    assert links == [(f"/queue#queue-{queue.id}", "← Review queue")]  # the queue's row (queuewalk)
    assert "Previous" not in nav and "Next ›" not in nav and 'rel="next"' not in nav
    assert "Next item" in page  # the queue bar's
    help_n = re.search(r"<kbd>n</kbd></dt><dd>(.*?)</dd>", page).group(1)
    assert help_n == "Next item in the queue"
    nexts = set(re.findall(r'<input type="hidden" name="next" value="([^"]*)">', page))
    assert nexts == {f"/runs/{runs[0].id}?item={item.id}&amp;queue_id={queue.id}"}
    # The same run outside the queue keeps the runs list's links.
    plain = client.get(f"/runs/{runs[0].id}").get_data(as_text=True)
    nav = re.search(r'<nav class="run-nav".*?</nav>', plain, re.S).group(0)
    assert "← Runs" in nav and "Next ›" in nav


def test_removing_a_queue_item_asks_first_and_works_without_javascript(client, login, make, session):
    """Walk finding 8: "Remove" on a queue's item removed it at once. It now asks on the
    queue's page (server-rendered: a plain GET, no JavaScript needed), naming the run and
    what removing does; "Cancel" goes back to the item, the question's own button (a POST
    with the CSRF token and confirm=1) removes. A POST without confirm=1 only asks."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    run = make.run(ws, "run-to-go", query="Why did checkout fail?")
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Chat answers", {"kind": "chat"})
    item = session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id))
    login(lead)
    page = client.get(f"/queues/{queue.id}").get_data(as_text=True)
    row = re.search(rf'<tr id="item-{item.id}">.*?</tr>', page, re.S).group(0)
    asking = f"/queues/{queue.id}/items/{run.id}/remove"
    assert re.search(rf'<form method="get" action="{asking}" class="inline">\s*<button type="submit" class="link">Remove</button>', row)

    def question(response):
        assert response.status_code == 200
        html = response.get_data(as_text=True)
        card = re.search(r'<section class="card confirm-remove" aria-labelledby="rm-h">(.*?)</section>', html, re.S)
        assert card, "no question"
        return card.group(1)

    for response in (client.get(asking), client.post(asking, data={})):
        card = question(response)
        assert _text(re.sub(r"<[^>]+>", " ", re.search(r"<h2[^>]*>(.*?)</h2>", card, re.S).group(1))).strip() == \
            "Remove this run from “Chat answers”?"
        assert _text(re.sub(r"<[^>]+>", "", re.search(r"<p>(.*?)</p>", card, re.S).group(1))).strip() == (
            "“Why did checkout fail?” (run-to-go). Its ratings stay with the run. The queue's rule will not bring it "
            "back; a lead can add it again from the runs list.")
        assert f'<form method="post" action="{asking}" class="buttons">' in card
        assert 'name="csrf_token"' in card and '<input type="hidden" name="confirm" value="1">' in card
        assert f'<a class="button" href="/queues/{queue.id}#item-{item.id}" autofocus>Cancel</a>' in card
        assert rq.exists_item(session, queue.id, run.id)
    removed = client.post(asking, data={"confirm": "1"})
    assert removed.status_code == 303 and removed.headers["Location"] == f"/queues/{queue.id}"
    assert not rq.exists_item(session, queue.id, run.id)
    assert _flashes(client.get(f"/queues/{queue.id}").get_data(as_text=True)) == ["Run removed from the queue."]
    # Asked again once it is gone: said so, on the queue's page.
    gone = client.get(asking)
    assert gone.status_code == 303 and gone.headers["Location"] == f"/queues/{queue.id}"
    assert _flashes(client.get(f"/queues/{queue.id}").get_data(as_text=True)) == ["That run was not in the queue."]
