"""Every state-changing queue action reads its fields through a FlaskForm (issue 12
point 3): the queue form's named reviewers, an item's remove / assign buttons, bulk "Add
to queue" and "Open my next item". A missing field answers 400 naming it; values that
are not ids are dropped as they always were."""

from __future__ import annotations

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
    (``web/auth.py``). Every other POST field goes through a FlaskForm."""
    readers = sorted(
        f"{path.relative_to(WEB)}:{number}"
        for folder in ("web", "api") for path in (WEB / folder).rglob("*.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"request\.(form|values)\b", line))
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
    assert "queue: choose a queue" in no_queue.get_data(as_text=True)
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
    assert "runs: check at least one run" in html
    assert not rq.exists_item(session, queue.id, run.id)
    # Checkbox values that are no run ids: the service's refusal, shown the same way.
    odd = client.post("/queues/add-runs", data={"queue": str(queue.id), "runs": "abc",
                                                "next": back})
    assert odd.status_code == 303 and odd.headers["Location"] == back
    assert "runs: must be run ids" in client.get(back).get_data(as_text=True)
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
    removed = client.post(f"/queues/{queue.id}/items/{run.id}/remove")
    assert removed.status_code == 303 and removed.headers["Location"] == f"/queues/{queue.id}"
    assert not rq.exists_item(session, queue.id, run.id)


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
        "score_max": "must not be below the minimum score",
        "reviewers_per_run": "asks 3 reviewers per run, but only 2 members of the workspace may "
                             "review it: its items could never complete",
    }
    assert rq.list_queues(session, make.actor(lead)) == []
    # Service refusals alone (the form's checks pass): every one at once too.
    data = {**_form(ws.id, reviewers="all"), "score_min": "80", "score_max": "20",
            "reviewers_per_run": "3"}
    errors = _field_errors(client.post("/queues/new", data=data).get_data(as_text=True))
    assert sorted(errors) == ["reviewers_per_run", "score_max"]
