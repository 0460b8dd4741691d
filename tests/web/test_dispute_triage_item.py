"""The triage item page of a run whose pair of reviewers came to disagree: resolved
automatically with the reason in its history, reopened by a lead's not_useful decision."""

from __future__ import annotations

import html
import re

from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import Message, TriageItem
from reviewapp.services import feedback
from reviewapp.services import review_queues as rq


def _history(page):
    """The item's history entries as read (tags dropped, spaces collapsed)."""
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", "", li)).split()) for li in
            page.split('<ol class="history item-history">', 1)[1].split("</ol>", 1)[0].split("<li>")[1:]]


def test_a_disputed_run_s_item_is_resolved_then_reopened_by_the_decision(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lea")
    ann, bob = make.user(ws, username="ann"), make.user(ws, username="bob")
    run = make.run(ws)
    rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {}, reviewers_per_run=2,
                    reviewers="named", named=[ann.id, bob.id])
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id, Message.role == "assistant"))
    for user in (ann, bob):
        feedback.upsert_feedback(session, make.actor(user), "chat_message", answer, None, "negative")
    item_id = session.scalar(select(TriageItem.id).where(TriageItem.run_pk == run.id))

    login(bob)  # Bob changes his mind on the run page: 1 up, 1 down
    saved = client.post("/feedback", data={"target_type": "chat_message", "target_id": answer,
                                           "rating": "positive", "switch": "1"})
    assert saved.status_code == 303
    client.post("/logout")
    login(lead)
    page = client.get(f"/triage/{item_id}").get_data(as_text=True)
    assert '<span class="badge badge-triage-resolved">Resolved' in page
    assert [e.split(" — ", 1)[1] for e in _history(page)] == [
        "automatically: Resolved automatically: the run is disputed: waiting for a lead's decision"]

    decided = client.post(f"/adjudication/runs/{run.id}/decide", data={"verdict": "not_useful", "note": ""})
    assert decided.status_code == 303
    page = client.get(f"/triage/{item_id}").get_data(as_text=True)
    assert '<span class="badge badge-triage-new">New' in page
    assert [e.split(" — ", 1)[1] for e in _history(page)] == [
        "automatically: Resolved automatically: the run is disputed: waiting for a lead's decision",
        "automatically: Reopened automatically: the run was judged not useful again"]


def _text(fragment):
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


def _cell(page, row_marker, label):
    row = page.split(row_marker, 1)[1].split("</tr>", 1)[0]
    return _text(row.split(f'data-label="{label}">', 1)[1].split("</td>", 1)[0])


def _disputed_run(make, session, other_id):
    """A lead, a run its two named reviewers split on in a queue of 2 reviewers per run
    (ann and bob both rate its answer down, then bob up: disputed, its triage item
    resolved by the dispute), and another run ``other_id`` of the workspace."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lea")
    ann, bob = make.user(ws, username="ann"), make.user(ws, username="bob")
    run, other = make.run(ws, run_id="run-disputed"), make.run(ws, run_id=other_id)
    rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {}, reviewers_per_run=2,
                    reviewers="named", named=[ann.id, bob.id])
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id, Message.role == "assistant"))
    for user in (ann, bob):
        feedback.upsert_feedback(session, make.actor(user), "chat_message", answer, None, "negative")
    feedback.upsert_feedback(session, make.actor(bob), "chat_message", answer, None, "positive")
    return lead, run, other


def test_a_disputed_run_s_item_and_verdict_say_why_they_read_resolved_and_none(client, login, make, session):
    """Second new-user walk: the item the dispute resolved read "Resolved" like one a lead
    closed, and the runs list's verdict read "none". The item's state says why (from its
    history's automatic resolve for a dispute); the runs list's verdict reads "disputed"."""
    lead, run, other = _disputed_run(make, session, "run-closed-by-lead")
    item_id = session.scalar(select(TriageItem.id).where(TriageItem.run_pk == run.id))
    closed = make.triage_item(other)
    login(lead)
    assert client.post(f"/triage/{closed.id}/state", data={"version": "1", "state": "resolved"}).status_code == 303

    detail = client.get(f"/triage/{item_id}").get_data(as_text=True)
    head = detail.split('<div class="page-head">', 1)[1].split("</div>\n</div>", 1)[0]
    assert _text(head.split("<h1>", 1)[1].split("</h1>", 1)[1]) == "Resolved — run disputed"
    listing = client.get("/triage/?state=resolved").get_data(as_text=True)
    assert _cell(listing, f'id="triage-row-{item_id}"', "State") == "Resolved — run disputed"
    assert _cell(listing, f'id="triage-row-{closed.id}"', "State") == "Resolved"
    runs = client.get("/").get_data(as_text=True)
    assert _cell(runs, "<code>run-disputed</code>", "Verdict") == "disputed"

    client.post(f"/adjudication/runs/{run.id}/decide", data={"verdict": "not_useful", "note": ""})
    listing = client.get("/triage/").get_data(as_text=True)
    assert _cell(listing, f'id="triage-row-{item_id}"', "State") == "New"
    runs = client.get("/").get_data(as_text=True)
    assert _cell(runs, "<code>run-disputed</code>", "Verdict") == "✗ not useful"


def _fact(page, label):
    """The text of the ``<dt>label</dt><dd>`` fact (item page, 409 page's current values)."""
    return _text(re.search(rf"<dt>{label}</dt><dd[^>]*>(.*?)</dd>", page, re.S).group(1))


def test_a_disputed_run_s_item_reads_disputed_as_its_verdict(client, login, make, session):
    """New-user walk: the runs list and run page said "disputed", but the run's triage item
    read VERDICT "No verdict" (item page), "—" (409 page), and the queue row only "2
    reviewers / disagree". All three read "Disputed" (badge-disputed) until a lead decides;
    a run without a verdict that is not disputed reads as before."""
    lead, run, other = _disputed_run(make, session, "run-plain")
    item = session.scalar(select(TriageItem).where(TriageItem.run_pk == run.id))
    plain = make.triage_item(other, verdict=False)
    login(lead)

    assert _fact(client.get(f"/triage/{item.id}").get_data(as_text=True), "Verdict") == "Disputed"
    assert _fact(client.get(f"/triage/{plain.id}").get_data(as_text=True), "Verdict") == "No verdict"
    listing = client.get("/triage/?state=resolved").get_data(as_text=True)
    row = listing.split(f'id="triage-row-{item.id}"', 1)[1].split("</tr>", 1)[0]
    assert '<span class="badge badge-warn badge-disputed"' in row
    assert _cell(listing, f'id="triage-row-{item.id}"', "Ratings") == "▲ 1 ▼ 1 2 reviewers disagree Disputed"
    plain_row = _cell(client.get("/triage/").get_data(as_text=True), f'id="triage-row-{plain.id}"', "Ratings")
    assert plain_row == "▲ 0 ▼ 0 0 reviewers"
    stale = client.post(f"/triage/{item.id}/state", data={"version": str(item.version + 1), "state": "new"})
    assert stale.status_code == 409
    assert _fact(stale.get_data(as_text=True).split("<h2>Current values</h2>", 1)[1], "Verdict") == "Disputed"
    stale = client.post(f"/triage/{plain.id}/state", data={"version": "2", "state": "resolved"})
    assert stale.status_code == 409
    assert _fact(stale.get_data(as_text=True).split("<h2>Current values</h2>", 1)[1], "Verdict") == "—"

    client.post(f"/adjudication/runs/{run.id}/decide", data={"verdict": "not_useful", "note": ""})
    assert _fact(client.get(f"/triage/{item.id}").get_data(as_text=True), "Verdict") == "✗ Not useful"
    listing = client.get("/triage/").get_data(as_text=True)
    assert _cell(listing, f'id="triage-row-{item.id}"', "Ratings") == "▲ 1 ▼ 1 2 reviewers disagree"


def test_every_automatic_resolve_says_why_in_the_state(client, login, make, session):
    """Only the dispute's automatic resolve said why ("Resolved — run disputed"); an item
    the app resolved because the run's verdict became useful, or because its last negative
    rating was withdrawn, read a bare "Resolved", like one a lead closed."""
    ws = make.workspace()
    lead, ann = make.user(ws, Role.LEAD, username="lea"), make.user(ws, username="ann")
    useful, withdrawn = make.run(ws), make.run(ws)
    ids = {}
    for run in (useful, withdrawn):
        answer = session.scalar(select(Message.id).where(Message.run_pk == run.id, Message.role == "assistant"))
        rating = feedback.upsert_feedback(session, make.actor(ann), "chat_message", answer, None, "negative")
        ids[run.id] = session.scalar(select(TriageItem.id).where(TriageItem.run_pk == run.id))
        if run is useful:
            feedback.upsert_feedback(session, make.actor(ann), "chat_message", answer, None, "positive", switch=True)
        else:
            feedback.delete_feedback(session, make.actor(ann), rating.id)
    login(lead)
    listing = client.get("/triage/?state=resolved").get_data(as_text=True)
    assert _cell(listing, f'id="triage-row-{ids[useful.id]}"', "State") == "Resolved — run judged useful"
    assert _cell(listing, f'id="triage-row-{ids[withdrawn.id]}"', "State") == "Resolved — no negative rating left"
    detail = client.get(f"/triage/{ids[withdrawn.id]}").get_data(as_text=True)
    head = detail.split('<div class="page-head">', 1)[1].split("</div>\n</div>", 1)[0]
    assert _text(head.split("<h1>", 1)[1].split("</h1>", 1)[1]) == "Resolved — no negative rating left"
