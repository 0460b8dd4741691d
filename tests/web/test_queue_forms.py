"""Every state-changing queue action reads its fields through a FlaskForm (issue 12
point 3): the queue form's named reviewers, an item's remove / assign buttons, bulk "Add
to queue" and "Open my next item". A missing field answers 400 naming it; values that
are not ids are dropped as they always were."""

from __future__ import annotations

import html
import re
from pathlib import Path

from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import QueueItem
from reviewapp.services import review_queues as rq

WEB = Path(__file__).resolve().parents[2] / "reviewapp"


def _form(ws_id, **extra):
    return {"workspace": str(ws_id), "name": "Named queue", "kind": "chat",
            "sample_percent": "100", "reviewers_per_run": "1", "reservation_minutes": "15",
            "reviewers": "named", "assignment": "open", **extra}


def test_no_view_reads_request_form_for_a_change():
    """Only two places read raw form values, on purpose: the NUL check of every request
    (``web/hooks.py``) and the login rate-limit key, read before the view runs
    (``web/auth.py``). Every other POST field goes through a FlaskForm. ``req`` is the
    name the hooks give ``request`` once resolved, so it is looked for too."""
    readers = sorted(
        f"{path.relative_to(WEB)}:{number}"
        for folder in ("web", "api") for path in (WEB / folder).rglob("*.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\b(?:request|req)\.(?:form|values)\b", line))
    assert [reader.split(":")[0] for reader in readers] == ["web/auth.py", "web/hooks.py"], readers


def test_named_reviewers_come_through_the_form(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    first, second = make.user(ws, Role.REVIEWER), make.user(ws, Role.REVIEWER)
    login(lead)
    # Named scope with nobody named: the service's refusal sits beside the checkboxes.
    refused = client.post("/queues/new", data=_form(ws.id))
    html = refused.get_data(as_text=True)
    assert refused.status_code == 422
    assert '<div class="field has-error" id="named-field">' in html
    # A value that is not an id is the service's to refuse, beside the checkboxes; the
    # ids that were checked stay checked.
    odd = client.post("/queues/new", data=_form(ws.id, named=[str(second.id), "x"]))
    odd_html = odd.get_data(as_text=True)
    assert odd.status_code == 422 and '<div class="field has-error" id="named-field">' in odd_html
    assert f'value="{second.id}" checked' in odd_html
    assert f'value="{first.id}" checked' not in odd_html
    # Someone who is no reviewer of the workspace is named by username, never by user id;
    # someone from another workspace is counted, not named.
    gone, outsider = make.user(ws, Role.REVIEWER, username="gone.rev"), make.user(make.workspace())
    gone.active = False
    session.commit()
    strangers = client.post("/queues/new", data=_form(ws.id, named=[str(gone.id), str(outsider.id)]))
    strangers_html = strangers.get_data(as_text=True)
    assert strangers.status_code == 422 and '<div class="field has-error" id="named-field">' in strangers_html
    assert ("Only reviewers of the queue&#39;s workspace can be named (not: gone.rev and 1 person outside the workspace)."
            in strangers_html)
    assert f"not: {gone.id}" not in strangers_html
    created = client.post("/queues/new", data=_form(ws.id, named=[str(second.id), str(first.id)]))
    assert created.status_code == 303
    queue_id = int(created.headers["Location"].rstrip("/").split("/")[-1])
    assert rq.named_reviewers(session, queue_id) == [second.id, first.id]
    # The edit page checks the named ones; a failed edit keeps what was checked.
    page = client.get(f"/queues/{queue_id}/edit").get_data(as_text=True)
    assert f'value="{first.id}" checked' in page and f'value="{second.id}" checked' in page
    kept = client.post(f"/queues/{queue_id}/edit",
                       data=_form(ws.id, named=[str(first.id)], sample_percent="0"))
    kept_html = kept.get_data(as_text=True)
    assert kept.status_code == 422
    assert f'value="{first.id}" checked' in kept_html
    assert f'value="{second.id}" checked' not in kept_html


def test_bulk_add_names_the_missing_field(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    run = make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Q", {"kind": "aiops"})
    login(lead)
    no_queue = client.post("/queues/add-runs", data={"runs": str(run.id)})
    assert no_queue.status_code == 400
    assert "Choose the queue to add the checked runs to." in no_queue.get_data(as_text=True)
    assert not rq.exists_item(session, queue.id, run.id)


def test_bulk_add_with_no_run_checked_goes_back_to_the_list(client, login, make, session):
    """"Add to queue" with no run ticked: back on the runs list the lead came from (its
    filters kept), the error shown there; not a dead-end page of its own."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    run = make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Q", {"kind": "aiops"})
    login(lead)
    back = "/?kind=chat&status=SUCCESS"
    no_runs = client.post("/queues/add-runs", data={"queue": str(queue.id), "next": back})
    assert no_runs.status_code == 303 and no_runs.headers["Location"] == back
    page = client.get(back)
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and 'id="add-to-queue"' in html
    assert "Nothing was added: check at least one run to add to the queue." in html
    assert not rq.exists_item(session, queue.id, run.id)
    # Checkbox values that are no run ids: the service's refusal, shown the same way.
    odd = client.post("/queues/add-runs", data={"queue": str(queue.id), "runs": "abc",
                                                "next": back})
    assert odd.status_code == 303 and odd.headers["Location"] == back
    assert "Nothing was added: the checked values are not run ids." in client.get(back).get_data(as_text=True)
    assert not rq.exists_item(session, queue.id, run.id)
    # An outside "next" falls back to the runs list.
    added = client.post("/queues/add-runs", data={"queue": str(queue.id), "runs": str(run.id),
                                                  "next": "//elsewhere.example/"})
    assert added.status_code == 303 and added.headers["Location"] == "/"
    assert rq.exists_item(session, queue.id, run.id)


def test_assign_and_remove_read_their_buttons_through_the_form(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    reviewer = make.user(ws, Role.REVIEWER)
    run = make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Q", {"kind": "chat"},
                               assignment="by_hand")
    item = session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id))
    login(lead)
    # An empty choice is dropped: "Nobody" unassigns.
    assigned = client.post(f"/queues/{queue.id}/items/{item.id}/assign",
                           data={"assignees": ["", str(reviewer.id)]})
    assert assigned.status_code == 303
    assert assigned.headers["Location"] == f"/queues/{queue.id}#item-{item.id}"
    assert "Item assigned." in client.get(f"/queues/{queue.id}").get_data(as_text=True)
    removed = client.post(f"/queues/{queue.id}/items/{run.id}/remove", data={"confirm": "1"})
    assert removed.status_code == 303 and removed.headers["Location"] == f"/queues/{queue.id}"
    assert not rq.exists_item(session, queue.id, run.id)


def _slots(html: str, item_id: int) -> list[list[tuple[str, str, bool]]]:
    """The assign form's selects of one item, in slot order: (value, label, selected) of
    each option; each select must have its own label."""
    found = re.findall(rf'<select id="assign-{item_id}-(\d+)" name="assignees">(.*?)</select>', html, re.S)
    assert [int(n) for n, _ in found] == list(range(1, len(found) + 1))
    for n, _ in found:
        assert f'for="assign-{item_id}-{n}"' in html
    return [[(value, " ".join(label.split()), bool(chosen)) for value, chosen, label in re.findall(
        r'<option value="([^"]*)"( selected)?>([^<]*)</option>', options)] for _, options in found]


def test_assign_shows_every_current_assignee_one_select_per_slot(client, login, make, session):
    """Leftover of session 9: the by-hand assign control was one select, so an item with
    two assignees (reviewers per run 2) showed one of them selected, and Assign as the page
    stood unassigned the other. Now one select per reviewer slot (reviewers per run; more
    when the item has more assignees), each showing its assignee, a former member marked;
    Assign as the page stands changes nothing; the same reviewer twice is refused naming
    ``assignees``."""
    from reviewapp.actors import Actor
    from reviewapp.services import admin

    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lee")
    ann, bob, cy, dan = (make.user(ws, Role.REVIEWER, username=n) for n in ("ann", "bob", "cy", "dan"))
    runs_ = [make.run(ws) for _ in range(5)]
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {"kind": "chat"},
                               reviewers_per_run=3, assignment="by_hand")
    items = sorted(session.scalars(select(QueueItem.id).where(QueueItem.queue_id == queue.id)))
    chosen = {items[0]: [ann.id, bob.id], items[1]: [cy.id], items[2]: [bob.id, dan.id],
              items[3]: [ann.id, bob.id, cy.id], items[4]: []}
    for item_id, users in chosen.items():
        rq.assign(session, make.actor(lead), item_id, users)
    # N lowered to 2 after items[3] got three: it keeps them (rq.assign's rule).
    rq.update_queue(session, make.actor(lead), queue.id, reviewers_per_run=2)
    make.feedback_row(runs_[2], dan)  # rated: dan stays assigned after he leaves
    admin.remove_member(session, Actor.system_actor(), ws.id, dan.id)
    login(lead)
    html = client.get(f"/queues/{queue.id}").get_data(as_text=True)

    def selected(item_id):
        return [[label for _, label, on in slot if on] for slot in _slots(html, item_id)]

    assert selected(items[0]) == [["ann"], ["bob"]]
    assert selected(items[1]) == [["cy"], []]  # the second slot: "Nobody", the first option
    assert selected(items[2]) == [["bob"], ["dan (no longer a member)"]]
    assert selected(items[3]) == [["ann"], ["bob"], ["cy"]]  # more than 2: all shown
    assert selected(items[4]) == [[], []]
    # Every slot offers Nobody and who may review now; a former member only in his own slot.
    assert [[label for _, label, _ in slot] for slot in _slots(html, items[2])] == [
        ["Nobody", "ann", "bob", "cy", "lee"], ["Nobody", "dan (no longer a member)", "ann", "bob", "cy", "lee"]]
    # Assign as the page stands changes nothing.
    for item_id in items:
        values = [next((v for v, _, on in slot if on), "") for slot in _slots(html, item_id)]
        answer = client.post(f"/queues/{queue.id}/items/{item_id}/assign", data={"assignees": values})
        assert answer.status_code == 303
    rows = {r.item_id: r for r in rq.list_items(session, make.actor(lead), queue.id)[1].rows}
    assert {i: rows[i].assignees for i in items} == {
        items[0]: ("ann", "bob"), items[1]: ("cy",), items[2]: ("bob", "dan"),
        items[3]: ("ann", "bob", "cy"), items[4]: ()}
    # A second slot changed: both slots count.
    answer = client.post(f"/queues/{queue.id}/items/{items[1]}/assign",
                         data={"assignees": [str(cy.id), str(ann.id)]})
    assert answer.status_code == 303
    # The same reviewer in two slots is a bad choice: refused beside the item's selects
    # (tests/web/test_queue_assign.py), unchanged.
    twice = client.post(f"/queues/{queue.id}/items/{items[0]}/assign",
                        data={"assignees": [str(ann.id), str(ann.id)]})
    assert twice.status_code == 303  # POST/redirect/GET (queuewalk): the queue page shows it
    twice = client.get(twice.headers["Location"].split("#")[0])
    assert f'<small id="assign-{items[0]}-error" class="error">Choose each reviewer once (twice: ann).</small>' \
        in twice.get_data(as_text=True)
    rows = {r.item_id: r for r in rq.list_items(session, make.actor(lead), queue.id)[1].rows}
    assert (rows[items[0]].assignees, rows[items[1]].assignees) == (("ann", "bob"), ("ann", "cy"))


def test_next_item_ignores_a_skip_that_is_not_an_id(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    reviewer = make.user(ws, Role.REVIEWER)
    run = make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Q", {"kind": "chat"})
    item = session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id))
    login(reviewer)
    opened = client.post("/queues/next", data={"skip": "not-an-id", "queue": str(queue.id)})
    assert opened.status_code == 303
    assert opened.headers["Location"] == f"/runs/{run.id}?item={item.id}&queue_id={queue.id}"


def _field_errors(html: str) -> dict[str, str]:
    """Each field marked wrong on the page: its control's name -> the error beside it."""
    return {re.search(r'name="([^"]+)"', control).group(1): re.sub(r"\s+", " ", error).strip()
            for control, error in re.findall(
                r'<div class="field[^"]*has-error"[^>]*>(.*?)<small[^>]*class="error"[^>]*>(.*?)</small>',
                html, re.S)}


def test_a_refused_new_queue_marks_every_wrong_field_in_one_submit(client, login, make, session):
    """The form said one thing per submit: the form's own refusals first, the service's
    (a rule's scores, the reviewers per run) only once those were fixed, one at a time.
    One submit now marks each wrong field, its error beside it, and creates nothing."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    make.user(ws, Role.REVIEWER)
    login(lead)
    data = {**_form(ws.id, reviewers="all"), "name": "", "reservation_minutes": "0",
            "score_min": "80", "score_max": "20", "reviewers_per_run": "3"}
    refused = client.post("/queues/new", data=data)
    errors = _field_errors(refused.get_data(as_text=True))
    assert refused.status_code == 422
    assert errors == {
        "name": "This field is required.",
        "reservation_minutes": "Number must be between 1 and 240.",
        "score_max": "Must not be below the minimum score.",
        "reviewers_per_run": "This queue asks 3 reviewers per run, but only 2 members of the workspace may "
                             "review it: its items could never complete.",
    }
    assert rq.list_queues(session, make.actor(lead)) == []
    # Service refusals alone (the form's checks pass): every one at once too.
    data = {**_form(ws.id, reviewers="all"), "score_min": "80", "score_max": "20",
            "reviewers_per_run": "3"}
    errors = _field_errors(client.post("/queues/new", data=data).get_data(as_text=True))
    assert sorted(errors) == ["reviewers_per_run", "score_max"]


def test_every_refusal_the_queue_form_shows_is_a_sentence(client, login, make, session):
    """New-user walk: a refusal beside a queue form's field started in lower case ("the
    workspace already has a queue named 'Taken'") among the form's own ("This field is
    required."). Every message the form shows, the service's too, starts with a capital
    and ends with a full stop: the name taken (alone, and beside another refusal), no
    reviewer named, someone named from outside, a value that is no id, a rule's scores,
    more reviewers per run than may review, and the same name on the edit form."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    make.user(ws, Role.REVIEWER)
    outsider = make.user(make.workspace())
    rq.create_queue(session, make.actor(lead), ws.id, "Taken", {})
    other, _ = rq.create_queue(session, make.actor(lead), ws.id, "Other", {})
    login(lead)

    def shown(url, **extra):
        response = client.post(url, data={**_form(ws.id, reviewers="all"), **extra})
        assert response.status_code == 422, extra
        return {name: html.unescape(error) for name, error in _field_errors(response.get_data(as_text=True)).items()}

    taken = "The workspace already has a queue named 'Taken'."
    assert shown("/queues/new", name="Taken") == {"name": taken}
    assert shown("/queues/new", name="Taken", reviewers_per_run="3") == {
        "name": taken,
        "reviewers_per_run": "This queue asks 3 reviewers per run, but only 2 members of the workspace "
                             "may review it: its items could never complete."}
    assert shown("/queues/new", reviewers="named") == {"named": "Name at least one reviewer, or let all review."}
    assert shown("/queues/new", reviewers="named", named=[str(outsider.id)]) == {
        "named": "Only reviewers of the queue's workspace can be named (not: 1 person outside the workspace)."}
    assert shown("/queues/new", reviewers="named", named=["x"]) == {"named": "Named reviewers must be user ids."}
    assert shown("/queues/new", score_min="80", score_max="20") == {
        "score_max": "Must not be below the minimum score."}
    assert shown(f"/queues/{other.id}/edit", name="Taken") == {"name": taken}


def test_the_form_refuses_a_near_duplicate_name_naming_the_queue_it_clashes_with(
        client, login, make, session):
    """New-user walk: "Team review" and "team review " were both created. The new and the
    edit form refuse such a name beside the field, naming the queue as it is stored."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    make.user(ws, Role.REVIEWER)
    rq.create_queue(session, make.actor(lead), ws.id, "Team review", {})
    other, _ = rq.create_queue(session, make.actor(lead), ws.id, "Other", {})
    login(lead)
    taken = {"name": "The workspace already has a queue named 'Team review'."}
    for url in ("/queues/new", f"/queues/{other.id}/edit"):
        response = client.post(url, data={**_form(ws.id, reviewers="all"), "name": "team review "})
        assert response.status_code == 422
        errors = {k: html.unescape(v) for k, v in _field_errors(response.get_data(as_text=True)).items()}
        assert errors == taken, url


def test_a_refused_bulk_add_keeps_the_ticks_and_the_chosen_queue(client, login, make, session):
    """New-user walk (38_add_failed_running): "Add to queue" with a good run and a FAILED
    run with no answer ticked showed a banner naming the failed run only; the good run
    was not added either, and the page came back with no run ticked and the first queue
    chosen. The banner says nothing was added and why; the ticks and the queue stay."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    good = make.run(ws, "good-1")
    bad = make.aiops_run(ws, "failed-1", status="FAILED", answer=None, report=None)
    other = make.run(ws, "other-1")
    first, _ = rq.create_queue(session, make.actor(lead), ws.id, "A first", {"kind": "aiops", "status": "SUCCESS"})
    chosen, _ = rq.create_queue(session, make.actor(lead), ws.id, "B chosen", {"kind": "aiops", "status": "SUCCESS"})
    login(lead)
    back = "/?kind=&sort=newest"
    refused = client.post("/queues/add-runs", data={"queue": str(chosen.id), "runs": [str(good.id), str(bad.id)],
                                                    "next": back})
    assert refused.status_code == 303 and refused.headers["Location"] == back
    page = html.unescape(re.sub(r"\s+", " ", client.get(back).get_data(as_text=True)))
    assert ("Nothing was added: 1 of the 2 checked runs has nothing to rate at answer level "
            "(no answer, no report), so its item could never complete: failed-1. Uncheck it and add again.") in page
    ticked = set(re.findall(r'<input type="checkbox" name="runs" value="(\d+)" form="add-to-queue" checked', page))
    assert ticked == {str(good.id), str(bad.id)}
    assert re.findall(r'<option value="(\d+)" selected>', page) == [str(chosen.id)]
    assert not rq.exists_item(session, chosen.id, good.id)
    # Kept for that one page only: the next visit starts afresh.
    again = client.get(back).get_data(as_text=True)
    assert f'<input type="checkbox" name="runs" value="{other.id}" form="add-to-queue"' in again
    assert not re.findall(r'form="add-to-queue" checked', again)
    assert not re.findall(r'<option value="\d+" selected>', again)
    assert f'<option value="{first.id}">A first' in again  # the first queue, chosen by default


def _focused(page: str) -> list[str]:
    """The tags of the page's controls that carry autofocus."""
    return re.findall(r"<(?:input|select|textarea)\b[^>]*\bautofocus\b[^>]*>", page)


def test_a_refused_queue_form_focuses_its_first_invalid_field(client, login, make, session):
    """New-user walk (1280x800): an error on a field below the fold was invisible — the
    page came back at its top with nothing focused. As the app's other forms do, the
    first invalid field (in the page's order) has autofocus, and each invalid one
    aria-invalid."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    reviewer = make.user(ws, Role.REVIEWER)
    login(lead)
    ok = {"reviewers": "named", "named": [str(reviewer.id)]}

    def refused(url="/queues/new", **extra):
        response = client.post(url, data=_form(ws.id, **{**ok, **extra}))
        assert response.status_code == 422, extra
        return response.get_data(as_text=True)

    page = refused(reservation_minutes="0")  # far below the fold
    [tag] = _focused(page)
    assert 'name="reservation_minutes"' in tag and 'aria-invalid="true"' in tag
    page = refused(name="", reservation_minutes="0")  # the first one wins
    [tag] = _focused(page)
    assert 'name="name"' in tag and 'aria-invalid="true"' in tag
    reservation = re.search(r'<input[^>]*name="reservation_minutes"[^>]*>', page).group(0)
    assert 'aria-invalid="true"' in reservation and "autofocus" not in reservation
    page = refused(reviewers_per_run="3")  # the service's refusal, on a select
    [tag] = _focused(page)
    assert 'name="reviewers_per_run"' in tag and 'aria-invalid="true"' in tag
    page = refused(named=[])  # nobody named: the first checkbox
    [tag] = _focused(page)
    assert tag == re.search(r'<input type="checkbox" name="named"[^>]*>', page).group(0)
    assert 'aria-invalid="true"' in tag
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Q")
    page = refused(f"/queues/{queue.id}/edit", assignment="nope")  # the edit form too
    [tag] = _focused(page)
    assert 'name="assignment"' in tag and 'aria-invalid="true"' in tag
    assert _focused(client.get("/queues/new").get_data(as_text=True)) == []  # nothing refused
