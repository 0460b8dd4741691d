"""Review queue pages (issue 16): a lead creates and edits a queue through the form, sees
its items and why each is there, removes one, adds runs in bulk from the runs list; a
reviewer opens "my next item", which reserves it, renews and skips it; a lead of one
workspace never sees or changes another's queues."""

from __future__ import annotations

import re

from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import Message, QueueItem, ReviewQueue
from reviewapp.services import review_queues as rq


def _form(ws_id, **extra):
    return {"workspace": str(ws_id), "name": "Chat answers", "kind": "chat",
            "sample_percent": "100", "reviewers_per_run": "2", "reservation_minutes": "15",
            "reviewers": "all", "assignment": "open", **extra}


def test_lead_creates_a_queue_and_sees_its_items(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    make.user(ws, Role.REVIEWER)  # two may review: a 2-reviewer queue can complete
    chat = [make.run(ws, query=f"Chat question {i}?") for i in range(3)]
    make.aiops_run(ws)
    login(lead)
    page = client.get("/queues/new")
    assert page.status_code == 200 and 'name="reviewers_per_run"' in page.get_data(as_text=True)
    bad = client.post("/queues/new", data=_form(ws.id, score_min="200"))
    assert bad.status_code == 422 and "Number must be between 0 and 100" in bad.get_data(as_text=True)
    response = client.post("/queues/new", data=_form(ws.id, blind="y"))
    assert response.status_code == 303
    queue = session.scalar(select(ReviewQueue).where(ReviewQueue.workspace_id == ws.id))
    assert (queue.rule, queue.reviewers_per_run, queue.blind, queue.reservation_minutes) == \
        ({"kind": "chat"}, 2, True, 15)
    html = client.get(response.headers["Location"]).get_data(as_text=True)
    for run in chat:
        assert run.query in html
    assert html.count("the rule,") == 3 and "0 / 2" in html
    # The same name again: the form says so on the name.
    again = client.post("/queues/new", data=_form(ws.id))
    assert again.status_code == 422 and "already has a queue named" in again.get_data(as_text=True)
    # Edit: N = 1 and a new name; remove a run.
    edited = client.post(f"/queues/{queue.id}/edit", data=_form(ws.id, name="Renamed",
                                                                 reviewers_per_run="1"))
    assert edited.status_code == 303
    session.refresh(queue)
    assert (queue.name, queue.reviewers_per_run, queue.blind) == ("Renamed", 1, False)
    removed = client.post(f"/queues/{queue.id}/items/{chat[0].id}/remove", data={"confirm": "1"})
    assert removed.status_code == 303
    assert not rq.exists_item(session, queue.id, chat[0].id)
    # Bulk add from the runs list: the checkboxes and the queue select are there.
    runs_page = client.get("/").get_data(as_text=True)
    assert 'form="add-to-queue"' in runs_page and f'<option value="{queue.id}">Renamed' in runs_page
    added = client.post("/queues/add-runs", data={"queue": queue.id, "runs": [chat[0].id, chat[1].id],
                                                  "next": "/"})
    assert added.status_code == 303 and added.headers["Location"] == "/"
    assert rq.exists_item(session, queue.id, chat[0].id)
    item = session.scalar(select(QueueItem).where(QueueItem.run_pk == chat[0].id))
    assert item.source == "manual" and item.added_by == lead.id
    listing = client.get("/queues/").get_data(as_text=True)
    assert "Renamed" in listing and "0 of 3 complete" in listing


def test_reviewer_flow_reserves_renews_and_skips(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    reviewer = make.user(ws, Role.REVIEWER)
    first, second = make.run(ws), make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Q", {"kind": "chat"},
                               reservation_minutes=20)
    login(reviewer)
    mine = client.get("/queue")
    assert mine.status_code == 200 and "Open my next item" in mine.get_data(as_text=True)
    opened = client.post("/queues/next", data={})
    assert opened.status_code == 303
    item = session.scalar(select(QueueItem).where(QueueItem.run_pk == first.id))
    assert opened.headers["Location"] == f"/runs/{first.id}?item={item.id}"
    session.refresh(item)
    assert item.reserved_by == reviewer.id
    page = client.get(opened.headers["Location"]).get_data(as_text=True)
    assert "Reserved for you until" in page and 'data-shortcut="next-run"' in page
    assert f'hx-post="/queues/items/{item.id}/renew"' in page
    renewed = client.post(f"/queues/items/{item.id}/renew")
    assert renewed.status_code == 200 and "Reserved for you until" in renewed.get_data(as_text=True)
    # Skip: the item is released and the next one opens.
    skipped = client.post("/queues/next", data={"skip": item.id})
    second_item = session.scalar(select(QueueItem).where(QueueItem.run_pk == second.id))
    assert skipped.headers["Location"] == f"/runs/{second.id}?item={second_item.id}"
    session.refresh(item)
    assert item.reserved_by is None
    # The first item's renewal now says it is not held (and stops polling).
    lost = client.post(f"/queues/items/{item.id}/renew").get_data(as_text=True)
    assert "It is not reserved for you" in lost and "hx-post" not in lost
    # Nothing left once both are rated.
    for run in (first, second):
        make.feedback_row(run, reviewer, rating="positive")
    done = client.post("/queues/next", data={})
    assert done.headers["Location"] == "/queue?mine=1"


def test_skip_six_times_from_my_next_item_walks_on(client, login, make, session):
    """The session 7 new user's flow: /queue › "Open my next item", then "Skip" six
    times (the item bar posts ``queue=""`` and ``skip``): seven distinct items in the
    queue's order, not A, B, A, B, A, B."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    reviewer = make.user(ws, Role.REVIEWER)
    for _ in range(8):
        make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Eight", {"kind": "chat"})
    order = [(i.id, i.run_pk) for i in session.scalars(
        select(QueueItem).where(QueueItem.queue_id == queue.id).order_by(QueueItem.id))]
    login(reviewer)
    location = client.post("/queues/next", data={}).headers["Location"]
    seen = []
    for _ in range(6):
        item_id, run_pk = next(p for p in order if location == f"/runs/{p[1]}?item={p[0]}")
        seen.append(item_id)
        location = client.post("/queues/next", data={"queue": "", "skip": str(item_id)}
                               ).headers["Location"]
    assert location == f"/runs/{order[6][1]}?item={order[6][0]}"
    assert seen == [i for i, _ in order[:6]]


def test_a_lead_never_sees_or_changes_another_workspaces_queues(client, login, make, session):
    w1, w2 = make.workspace(), make.workspace()
    lead1 = make.user(w1, Role.LEAD)
    lead2 = make.user(w2, Role.LEAD)
    run2 = make.run(w2)
    make.run(w1)
    q2, _ = rq.create_queue(session, make.actor(lead2), w2.id, "Secret W2 queue", {})
    item2 = session.scalar(select(QueueItem.id).where(QueueItem.queue_id == q2.id))
    login(lead1)
    assert "Secret W2 queue" not in client.get("/queues/").get_data(as_text=True)
    assert "Secret W2 queue" not in client.get("/queue").get_data(as_text=True)
    for path in (f"/queues/{q2.id}", f"/queues/{q2.id}/edit"):
        assert client.get(path).status_code == 403
    attempts = [
        (f"/queues/{q2.id}/edit", _form(w2.id, name="Taken over")),
        (f"/queues/{q2.id}/items/{run2.id}/remove", {"confirm": "1"}),
        (f"/queues/{q2.id}/items/{item2}/assign", {"assignees": str(lead1.id)}),
        ("/queues/add-runs", {"queue": q2.id, "runs": run2.id}),
        ("/queues/next", {"queue": q2.id}),
        (f"/queues/items/{item2}/renew", {}),
        ("/queues/new", _form(w2.id, name="In W2")),
    ]
    for path, data in attempts:
        assert client.post(path, data=data).status_code == 403, path
    session.refresh(q2)
    assert q2.name == "Secret W2 queue"
    assert rq.exists_item(session, q2.id, run2.id)
    assert session.scalar(select(QueueItem.reserved_by).where(QueueItem.id == item2)) is None
    assert session.scalars(select(ReviewQueue.name).where(ReviewQueue.workspace_id == w2.id)).all() \
        == ["Secret W2 queue"]
    # W2's lead does see it.
    client.post("/logout")
    login(lead2)
    assert re.search(r"Secret W2 queue", client.get(f"/queues/{q2.id}").get_data(as_text=True))


def test_lead_chooses_which_split_needs_a_decision(client, login, make, session):
    """The queue's dispute rule (issue 16: "a tie, or any split a lead configured as
    'needs a decision', goes to adjudication") is set in the form: a tie by default,
    any disagreement on request, and an unknown rule is refused naming the field."""
    ws = make.workspace()
    login(make.user(ws, Role.LEAD))
    make.user(ws, Role.REVIEWER)  # two may review: a 2-reviewer queue can complete
    page = client.get("/queues/new").get_data(as_text=True)
    assert 'name="dispute_rule"' in page and "Any disagreement needs a decision" in page
    assert client.post("/queues/new", data=_form(ws.id, name="Ties")).status_code == 303
    assert client.post("/queues/new", data=_form(ws.id, name="Splits",
                                                 dispute_rule="any_split")).status_code == 303
    bad = client.post("/queues/new", data=_form(ws.id, name="Odd", dispute_rule="coin_flip"))
    assert bad.status_code == 422
    rules = dict(session.execute(select(ReviewQueue.name, ReviewQueue.dispute_rule)).all())
    assert rules == {"Ties": "tie", "Splits": "any_split"}
    splits = session.scalar(select(ReviewQueue.id).where(ReviewQueue.name == "Splits"))
    edited = client.post(f"/queues/{splits}/edit",
                         data=_form(ws.id, name="Splits", dispute_rule="tie"))
    assert edited.status_code == 303
    session.expire_all()
    assert session.scalar(select(ReviewQueue.dispute_rule)
                          .where(ReviewQueue.id == splits)) == "tie"


def test_next_item_on_an_item_i_hold_but_have_not_rated_moves_on(client, login, make, session):
    """The run page's "Next item" (n) on an item I hold and have not rated opened the same
    item again (the held item comes first); it now moves on, and the item is free."""
    ws = make.workspace()
    lead, reviewer = make.user(ws, Role.LEAD), make.user(ws)
    first, second = make.run(ws), make.run(ws)
    rq.create_queue(session, make.actor(lead), ws.id, "Q", {"kind": "chat"})
    login(reviewer)
    opened = client.post("/queues/next", data={})
    item = session.scalar(select(QueueItem).where(QueueItem.run_pk == first.id))
    assert opened.headers["Location"] == f"/runs/{first.id}?item={item.id}"
    page = client.get(opened.headers["Location"]).get_data(as_text=True)
    form = next(f for f in re.findall(r"<form[^>]*>.*?</form>", page, re.S) if "next-run" in f)
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form))
    fields.pop("csrf_token", None)
    moved = client.post("/queues/next", data=fields)
    second_item = session.scalar(select(QueueItem).where(QueueItem.run_pk == second.id))
    assert moved.headers["Location"] == f"/runs/{second.id}?item={second_item.id}"
    session.refresh(item)
    assert item.reserved_by is None


def test_removed_runs_stay_out_when_the_queue_is_edited(client, login, make, session):
    """A new user removed runs from a rule-based queue, renamed it through the edit form:
    "Queue saved. 2 more runs entered." and the removed runs were back. They stay out."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    chat = [make.run(ws, query=f"Chat question {i}?") for i in range(4)]
    login(lead)
    created = client.post("/queues/new", data=_form(ws.id, reviewers_per_run="1"))
    queue_id = int(created.headers["Location"].rstrip("/").split("/")[-1])
    for run in chat[:2]:
        assert client.post(f"/queues/{queue_id}/items/{run.id}/remove", data={"confirm": "1"}).status_code == 303
    for data in (_form(ws.id, name="Renamed", reviewers_per_run="1"),
                 _form(ws.id, name="Renamed", reviewers_per_run="1", status="SUCCESS")):
        saved = client.post(f"/queues/{queue_id}/edit", data=data, follow_redirects=True)
        html = saved.get_data(as_text=True)
        assert saved.status_code == 200 and "Queue saved." in html and "entered" not in html
        assert [rq.exists_item(session, queue_id, r.id) for r in chat] == [False, False, True, True]
    assert "0 of 2 complete" in client.get("/queues/").get_data(as_text=True)


def test_a_queue_short_of_reviewers_is_kept_and_its_page_warns(client, login, make, session):
    """A 2-reviewer queue whose second reviewer left the workspace can no longer complete
    an item: it stays (its items and ratings kept), and its page says why and what to do."""
    from reviewapp.actors import Actor
    from reviewapp.services import admin

    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann = make.user(ws, Role.REVIEWER)
    make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Pairs", reviewers_per_run=2)
    login(lead)
    assert "cannot be completed" not in client.get(f"/queues/{queue.id}").get_data(as_text=True)
    admin.remove_member(session, Actor.system_actor(), ws.id, ann.id)
    html = client.get(f"/queues/{queue.id}").get_data(as_text=True)
    warning = re.sub(r"<[^>]+>|\s+", " ", re.search(r'<p class="flash flash-warning queue-short"[^>]*>(.*?)</p>',
                                                    html, re.S).group(1))
    assert " ".join(warning.split()) == (
        "This queue cannot be completed now: it asks 2 reviewers per run, but only 1 member of "
        "the workspace may review it: its items could never complete. Members left or lost the "
        "reviewer role since it was set up. Lower the reviewers per run or let more people review .")
    assert session.get(ReviewQueue, queue.id) is not None
    assert len(_items_of(session, queue.id)) == 1


def test_the_queues_list_warns_a_lead_of_a_queue_short_of_reviewers(client, login, make, session):
    """Where leads manage queues, a queue that can no longer complete says so in short
    (its page's full reason in the tooltip); a queue with enough reviewers does not."""
    from reviewapp.actors import Actor
    from reviewapp.services import admin

    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann = make.user(ws, Role.REVIEWER)
    make.run(ws)
    short, _ = rq.create_queue(session, make.actor(lead), ws.id, "Pairs", reviewers_per_run=2)
    rq.create_queue(session, make.actor(lead), ws.id, "Singles")
    admin.remove_member(session, Actor.system_actor(), ws.id, ann.id)
    login(lead)
    html = client.get("/queues/").get_data(as_text=True)
    rows = dict(re.findall(r'<tr id="queue-(\d+)">(.*?)</tr>', html, re.S))
    reason = rq.capacity(session, make.actor(lead), short.id).reason
    assert "cannot be completed" in rows[str(short.id)] and reason in rows[str(short.id)]
    assert "now: 2 reviewers per run, 1 may review." in re.sub(r"\s+", " ", rows[str(short.id)])
    assert [k for k, row in rows.items() if "cannot be completed" in row] == [str(short.id)]



def test_the_queues_list_says_one_reviewer_in_the_singular(client, login, make, session):
    """New-user finding: a one-reviewer queue whose named reviewer left read "1 reviewers"."""
    from reviewapp.actors import Actor
    from reviewapp.services import admin

    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann = make.user(ws, Role.REVIEWER)
    make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Ann's", reviewers="named",
                               named=[ann.id])
    admin.remove_member(session, Actor.system_actor(), ws.id, ann.id)
    login(lead)
    html = re.sub(r"\s+", " ", client.get("/queues/").get_data(as_text=True))
    assert "now: 1 reviewer per run, 0 may review." in html
    assert "asks 1 reviewer per run, but only 0 named reviewers" in html
    page = re.sub(r"\s+", " ", client.get(f"/queues/{queue.id}").get_data(as_text=True))
    assert "it asks 1 reviewer per run, but only 0 named reviewers may review it" in page

def _items_of(session, queue_id):
    return list(session.scalars(select(QueueItem.id).where(QueueItem.queue_id == queue_id)))


def test_a_removed_members_open_items_are_dealt_to_the_others_on_the_queue_page(
        client, login, make, session):
    """The lead's queue page: after a member is removed, no item is still assigned to them
    (their open assignments went to the other reviewers in turn), and the audit log says
    how many were released."""
    from reviewapp.actors import Actor
    from reviewapp.services import admin

    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lee")
    ann = make.user(ws, Role.REVIEWER, username="ann")
    make.user(ws, Role.REVIEWER, username="bob")
    for _ in range(4):
        make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Dealt", reviewers_per_run=1,
                               assignment="round_robin")
    login(make.user(ws, Role.ADMIN, username="zed"))

    def assigned_to():
        html = client.get(f"/queues/{queue.id}").get_data(as_text=True)
        return [re.sub(r"\s+", " ", cell).strip() for cell in
                re.findall(r'<td class="wide" data-label="Assigned to">(.*?)</td>', html, re.S)]

    assert sorted(assigned_to()) == ["ann", "ann", "bob", "lee"]  # dealt ann, bob, lee, ann
    # (zed, the admin reading the page, joined after the deal)
    admin.remove_member(session, Actor.system_actor(), ws.id, ann.id)
    assert "ann" not in assigned_to() and len(assigned_to()) == 4
    log = client.get(f"/admin/{ws.id}/audit").get_data(as_text=True)
    assert "Assigned queue items released" in log


def test_the_assign_list_offers_only_who_may_review_and_a_forged_assign_is_refused(
        client, login, make, session):
    """New-user finding: a by-hand queue's "assign" list offered a removed member (who had
    rated an item, so the per-reviewer table lists them) and a deactivated one. The list
    is the service's eligibility rule (``rq.assignable_reviewers``: the queue's pool,
    active reviewers who may review it), the one ``rq.assign`` checks; a POST naming
    anyone else is refused with a 4xx naming ``assignees``."""
    from reviewapp.actors import Actor
    from reviewapp.services import admin

    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lee")
    ann = make.user(ws, Role.REVIEWER, username="ann")
    bob = make.user(ws, Role.REVIEWER, username="bob")
    make.user(ws, Role.REVIEWER, username="cy")
    runs_ = [make.run(ws) for _ in range(2)]
    # two per run: the item ann rated stays open (a complete item shows no assign form)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Picked", assignment="by_hand",
                               reviewers_per_run=2)
    make.feedback_row(runs_[0], ann)  # ann rated: she stays in the progress table
    admin.remove_member(session, Actor.system_actor(), ws.id, ann.id)
    admin.set_active(session, Actor.system_actor(), ws.id, bob.id, False)
    login(lead)
    html = client.get(f"/queues/{queue.id}").get_data(as_text=True)
    selects = re.findall(r'<select id="assign-\d+-\d+" name="assignees">(.*?)</select>', html, re.S)
    assert len(selects) == 4  # two items, two reviewer slots each (reviewers per run 2)
    for options in selects:
        assert re.findall(r">\s*([^<>]*?)\s*</option>", options) == ["Nobody", "cy", "lee"]
    assert [(u.username) for u in rq.assignable_reviewers(session, make.actor(lead), queue.id)] \
        == ["cy", "lee"]
    item_id = _items_of(session, queue.id)[1]
    for outsider in (ann, bob):
        response = client.post(f"/queues/{queue.id}/items/{item_id}/assign",
                               data={"assignees": str(outsider.id)})
        assert response.status_code == 303  # POST/redirect/GET (queuewalk)
        shown = client.get(response.headers["Location"].split("#")[0]).get_data(as_text=True)
        assert f'<small id="assign-{item_id}-error" class="error">' in shown
    assert rq.list_items(session, make.actor(lead), queue.id)[1].rows[1].assignees == ()


def test_next_item_in_an_assigned_queue_says_when_nothing_is_assigned_yet(client, login, make,
                                                                           session):
    """New-user finding: in a by-hand queue a reviewer given nothing yet was told "Nothing
    left for you to review", as if done. Nothing assigned yet and all done now read apart."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann = make.user(ws, Role.REVIEWER)
    run = make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Picked", assignment="by_hand")
    login(ann)

    def told() -> str:
        answer = client.post("/queues/next", data={"queue": queue.id})
        assert answer.status_code == 303
        return re.sub(r"\s+", " ", client.get(answer.headers["Location"]).get_data(as_text=True))

    page = told()
    assert "Nothing is assigned to you in this queue yet" in page and "Nothing left" not in page
    item = session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id))
    rq.assign(session, make.actor(lead), item.id, [ann.id])
    make.feedback_row(run, ann, rating="positive")
    page = told()
    assert "Nothing left for you to review in this queue: every item is complete." in page
    assert "Nothing is assigned to you" not in page


def test_the_assign_list_keeps_a_former_reviewers_item_selected_as_theirs(
        client, login, make, session):
    """User-walk finding: a by-hand item still assigned to a removed member who rated it
    showed "Nobody" selected (the list offers only who may review now), so pressing
    Assign on that row unassigned them without a word. The current assignee is the
    selected option, marked as no longer a member (or deactivated), and Assign keeps them."""
    from reviewapp.actors import Actor
    from reviewapp.services import admin

    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lee")
    ann = make.user(ws, Role.REVIEWER, username="ann")
    bob = make.user(ws, Role.REVIEWER, username="bob")
    make.user(ws, Role.REVIEWER, username="cy")
    runs_ = [make.run(ws) for _ in range(3)]
    # two per run: the items rated once stay open (a complete item shows no assign form)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Picked", assignment="by_hand",
                               reviewers_per_run=2)
    items = sorted(_items_of(session, queue.id))
    rq.assign(session, make.actor(lead), items[0], [ann.id])
    rq.assign(session, make.actor(lead), items[1], [bob.id])
    make.feedback_row(runs_[0], ann)  # rated: the assignment stays after she leaves
    make.feedback_row(runs_[1], bob)
    admin.remove_member(session, Actor.system_actor(), ws.id, ann.id)
    admin.set_active(session, Actor.system_actor(), ws.id, bob.id, False)
    login(lead)
    html = client.get(f"/queues/{queue.id}").get_data(as_text=True)

    def options(item_id):
        select_ = re.search(rf'<select id="assign-{item_id}-1" name="assignees">(.*?)</select>', html, re.S)
        return [(value, " ".join(label.split()), bool(chosen)) for value, chosen, label in re.findall(
            r'<option value="([^"]*)"( selected)?>([^<]*)</option>', select_.group(1))]

    assert [o for o in options(items[0]) if o[2]] == [(str(ann.id), "ann (no longer a member)", True)]
    assert [o for o in options(items[1]) if o[2]] == [(str(bob.id), "bob (account deactivated)", True)]
    assert [label for _, label, _ in options(items[0])] == ["Nobody", "ann (no longer a member)", "cy", "lee"]
    assert [o for o in options(items[2]) if o[2]] == []  # nobody: "Nobody", the first, shows
    # Assign as the page stands keeps her.
    response = client.post(f"/queues/{queue.id}/items/{items[0]}/assign", data={"assignees": str(ann.id)})
    assert response.status_code == 303
    rows = {r.item_id: r for r in rq.list_items(session, make.actor(lead), queue.id)[1].rows}
    assert rows[items[0]].assignees == ("ann",) and rows[items[1]].assignees == ("bob",)


def test_an_aiops_queue_reaches_100_percent_without_the_run_with_nothing_to_rate(
        client, login, make, session):
    """Session 11 finding: a queue of kind AIOps took in the demo's FAILED run with no
    answer and no report (a step only); nobody could rate its answer level, so the page
    stuck at "1 of 2 complete". Now the run stays out: rating the one report is 1 of 1."""
    from reviewapp.actors import Actor
    from reviewapp.models import DiagnosticReport, Run
    from reviewapp.services import demo, feedback

    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann = make.user(ws, Role.REVIEWER)
    demo.load(session, Actor.system_actor(), ws.id)
    login(lead)
    created = client.post("/queues/new", data=_form(ws.id, name="AIOps", kind="aiops",
                                                    reviewers_per_run="1"))
    assert created.status_code == 303
    page = created.headers["Location"]
    html = client.get(page).get_data(as_text=True)
    assert "Alert DiskPressure on node-7" not in html and "0 of 1 complete" in html
    report = session.scalar(select(DiagnosticReport.id).join(Run, Run.id == DiagnosticReport.run_pk)
                            .where(Run.run_id == "demo-aiops-payment-errors", Run.workspace_id == ws.id))
    feedback.upsert_feedback(session, make.actor(ann), "diagnostic_report", report, None, "positive")
    html = client.get(page).get_data(as_text=True)
    assert "1 of 1 complete" in html and 'value="1"' in html


def test_a_named_queues_page_counts_and_lists_only_its_reviewers(app_factory, login, make,
                                                                 session):
    """A queue naming alice and bob (2 per run): the admin rating the run's answer (the
    run page's thumbs, the targets API) is not one of its reviewers: the item stays
    "0 / 2" and the Reviewers table does not list the admin; alice's rating makes it
    "1 / 2" with one item rated by her."""
    ws = make.workspace()
    boss = make.user(ws, Role.ADMIN, username="bossadmin")
    lead = make.user(ws, Role.LEAD, username="leadlea")
    alice = make.user(ws, Role.REVIEWER, username="alicerev")
    bob = make.user(ws, Role.REVIEWER, username="bobrev")
    run = make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Named pair", {},
                               reviewers_per_run=2, reviewers="named", named=[alice.id, bob.id])
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                     Message.role == "assistant"))

    def rate(user):
        # another app: Flask-Login caches the logged-in user in g
        response = login(user, c=app_factory().test_client()).put("/api/feedback/targets", json={
            "targetType": "chat_message", "targetId": answer, "rating": "positive"})
        assert response.status_code == 200, response.get_data(as_text=True)

    client = login(lead, c=app_factory().test_client())

    def page():
        html = client.get(f"/queues/{queue.id}").get_data(as_text=True)
        people = re.search(r'<table class="queue-people cards">(.*?)</table>', html, re.S).group(1)
        rows = re.findall(r'<td data-label="Reviewer">([^<]*)</td><td data-label="Items rated">(\d+)</td>',
                          people)
        rated = re.search(r'<table class="queue-items cards">.*?(\d+ / \d+)', html, re.S).group(1)
        return dict(rows), rated

    rate(boss)
    assert page() == ({"alicerev": "0", "bobrev": "0"}, "0 / 2")
    rate(alice)
    assert page() == ({"alicerev": "1", "bobrev": "0"}, "1 / 2")


def test_nothing_left_for_me_says_the_rest_waits_for_other_reviewers(client, login, make, session):
    """New-user walk: after rating everything they could, a reviewer read "Nothing left
    for you to review in your queues." above "2 items not complete yet" and the big
    "Open my next item" button, which read as work left. The message now says the items
    not complete yet wait for other reviewers (N = 2: each run needs a second rating)."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann = make.user(ws, Role.REVIEWER)
    runs = [make.run(ws), make.run(ws)]
    rq.create_queue(session, make.actor(lead), ws.id, "Pairs", reviewers_per_run=2)
    for run in runs:
        make.feedback_row(run, ann, rating="positive")
    login(ann)
    answer = client.post("/queues/next", data={})
    assert answer.status_code == 303
    page = re.sub(r"\s+", " ", client.get(answer.headers["Location"]).get_data(as_text=True))
    assert ("Nothing left for you to review in your queues: the 2 items not complete yet "
            "wait for other reviewers.") in page
    assert "2 items not complete yet." in page  # the page's own count, which it explains


def _told(client, data):
    """Post "Open my next item" (or Skip) and read the page it lands on, whitespace folded."""
    answer = client.post("/queues/next", data=data)
    assert answer.status_code == 303
    return re.sub(r"\s+", " ", client.get(answer.headers["Location"]).get_data(as_text=True))


def test_nothing_left_in_an_empty_queue_says_it_has_no_runs(client, login, make, session):
    """New-user walk (31_review_empty_queue): "Review this queue" on a queue with no runs
    said "every item is complete"."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann = make.user(ws, Role.REVIEWER)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Empty", {"kind": "aiops"})
    login(ann)
    page = _told(client, {"queue": queue.id})
    assert "Nothing to review in this queue yet: it has no runs." in page
    assert "complete." not in page.split("My next item")[0]
    page = _told(client, {})
    assert "Nothing to review in your queues yet: they have no runs." in page


def test_nothing_left_after_skipping_my_only_by_hand_item_says_what_is_true(
        client, login, make, session):
    """New-user walk (48_byhand_r2_after_skip): after Skip on the only item assigned to
    them, a reviewer read "the 4 items not complete yet wait for other reviewers", yet
    "Review this queue" gave the skipped item back and the unassigned items wait for a
    lead. The message says both."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann, bob = make.user(ws, Role.REVIEWER), make.user(ws, Role.REVIEWER)
    for _ in range(5):
        make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "By hand", assignment="by_hand")
    mine, bobs, *_ = _items_of(session, queue.id)
    rq.assign(session, make.actor(lead), mine, [ann.id])
    rq.assign(session, make.actor(lead), bobs, [bob.id])
    login(ann)
    opened = client.post("/queues/next", data={"queue": queue.id})
    assert f"item={mine}" in opened.headers["Location"]
    page = _told(client, {"queue": queue.id, "skip": mine})
    assert ("Nothing else for you to review in this queue: you skipped the one item left for "
            "you, and “Review this queue” hands it back.") in page
    assert ("Of the 4 other items not complete yet, 3 wait for a lead to assign them and 1 "
            "for other reviewers.") in page
    assert "wait for other reviewers" not in page
    again = client.post("/queues/next", data={"queue": queue.id})
    assert f"item={mine}" in again.headers["Location"]  # as the message said
    # Across my queues, after Skip there: the same, naming that button.
    page = _told(client, {"skip": mine})
    assert ("Nothing else for you to review in your queues: you skipped the one item left for "
            "you, and “Open my next item” hands it back.") in page
