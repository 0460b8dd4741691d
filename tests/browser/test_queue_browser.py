"""Review queues in a real browser (issue 16): a lead creates a queue through the form
and sees its items; a reviewer opens "my next item", finds the run page reserved for
them, rates the answer and presses n for the next item. Screenshots at 1280 and 390 px
(``tmp_path``) were looked at when the pages were written."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import Membership, QueueItem, ReviewQueue

from .conftest import log_in

pytestmark = pytest.mark.browser


def test_lead_creates_a_queue_and_a_reviewer_works_through_it(new_page, make, session, tmp_path):
    ws = make.workspace()
    make.user(ws, Role.LEAD, username="lena")
    rita = make.user(ws, Role.REVIEWER, username="rita")
    runs = [make.run(ws, query=f"Why did deploy {i} fail?") for i in range(3)]
    make.aiops_run(ws)

    lead = new_page()
    errors: list[str] = []
    lead.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    log_in(lead, "lena")
    lead.goto("/queues/new")
    lead.fill("#name", "Chat answers")
    lead.select_option("#kind", "chat")
    lead.select_option("#reviewers_per_run", "2")
    lead.fill("#reservation_minutes", "15")
    lead.screenshot(path=str(tmp_path / "queue-form-1280.png"), full_page=True)
    lead.get_by_role("button", name="Create queue").click()
    lead.wait_for_selector(".flash-success")
    assert "created with 3 runs" in lead.locator(".flash-success").inner_text()
    items = lead.locator("table.queue-items tbody tr")
    assert items.count() == 3
    assert "the rule" in items.first.inner_text() and "0 / 2" in items.first.inner_text()
    lead.screenshot(path=str(tmp_path / "queue-detail-1280.png"), full_page=True)
    session.rollback()
    queue = session.scalar(select(ReviewQueue).where(ReviewQueue.workspace_id == ws.id))
    assert (queue.rule, queue.reviewers_per_run, queue.reservation_minutes) == ({"kind": "chat"}, 2, 15)

    reviewer = new_page()
    reviewer.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    log_in(reviewer, "rita")
    reviewer.get_by_role("link", name="Review queue").click()
    reviewer.get_by_role("button", name="Open my next item").click()
    reviewer.wait_for_selector(".queue-bar")
    assert "Reserved for you until" in reviewer.locator(".queue-bar").inner_text()
    assert f"/runs/{runs[0].id}?item=" in reviewer.url
    reviewer.screenshot(path=str(tmp_path / "queue-item-1280.png"), full_page=True)
    session.rollback()
    first = session.scalar(select(QueueItem).where(QueueItem.run_pk == runs[0].id))
    assert first.reserved_by == rita.id
    # Rate the answer, then n: the next item (a POST through the "Next item" button).
    reviewer.locator(".answer .thumbs").get_by_role("button", name=re.compile("^Helpful")).click()
    reviewer.locator(".answer .thumbs .fb-status .saved").wait_for()
    reviewer.locator("body").press("n")
    reviewer.wait_for_url(f"**/runs/{runs[1].id}?item=*")
    reviewer.get_by_role("button", name="Skip").click()
    reviewer.wait_for_url(f"**/runs/{runs[2].id}?item=*")
    assert errors == []

    phone = new_page(width=390, height=844)
    log_in(phone, "rita")
    phone.goto("/queue")
    phone.screenshot(path=str(tmp_path / "queue-mine-390.png"), full_page=True)
    phone.get_by_role("button", name="Open my next item").click()
    phone.wait_for_selector(".queue-bar")
    phone.screenshot(path=str(tmp_path / "queue-item-390.png"), full_page=True)
    lead_phone = new_page(width=390, height=844)
    log_in(lead_phone, "lena")
    lead_phone.goto(f"/queues/{queue.id}")
    lead_phone.screenshot(path=str(tmp_path / "queue-detail-390.png"), full_page=True)
    lead_phone.goto(f"/queues/{queue.id}/edit")
    lead_phone.screenshot(path=str(tmp_path / "queue-form-390.png"), full_page=True)
    widths = lead_phone.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1] + 1, widths  # no sideways scrolling on a phone


def test_skip_and_n_walk_through_the_queue_and_wrap(new_page, make, session):
    """"Open my next item", then Skip and n (leaving an item unrated) alternately: each
    opens the next item in the queue's order and the last wraps to the first (the
    session 7 new user got A, B, A, B, A, B)."""
    from reviewapp.services import review_queues as rq

    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lee")
    make.user(ws, Role.REVIEWER, username="ravi")
    runs = [make.run(ws, query=f"Why is disk {i} full?") for i in range(4)]
    rq.create_queue(session, make.actor(lead), ws.id, "Disks", {"kind": "chat"})
    page = new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    log_in(page, "ravi")
    page.goto("/queue")
    page.get_by_role("button", name="Open my next item").click()
    page.wait_for_url(f"**/runs/{runs[0].id}?item=*")
    for step, run in enumerate(runs[1:] + runs[:1]):
        page.locator(".queue-bar").wait_for()
        if step % 2:
            page.locator("body").press("n")
        else:
            page.get_by_role("button", name="Skip").click()
        page.wait_for_url(f"**/runs/{run.id}?item=*")
    assert errors == []


def test_the_named_reviewers_follow_the_workspace_chosen_on_the_new_queue_form(new_page, make):
    """A lead of two workspaces who picks the second one on the new-queue form sees its
    reviewers to name, not the first one's (found in a browser walk: the checkboxes kept
    the first workspace's people, and "Create queue" then refused them by user id)."""
    first, second = make.workspace(), make.workspace()
    lena = make.user(first, Role.LEAD, username="lena")
    make.session.add(Membership(user_id=lena.id, workspace_id=second.id, role=Role.LEAD.value))
    make.session.commit()
    make.user(first, Role.REVIEWER, username="only-in-first")
    make.user(second, Role.REVIEWER, username="only-in-second")
    page = new_page()
    log_in(page, "lena")
    page.goto(f"/queues/new?workspace={first.id}")
    named = page.locator("#named-field")
    assert "only-in-first" in named.inner_text() and "only-in-second" not in named.inner_text()
    page.select_option("#workspace", str(second.id))
    page.wait_for_function("() => document.querySelector('#named-field').innerText.includes('only-in-second')")
    assert "only-in-first" not in page.locator("#named-field").inner_text()
    page.fill("#name", "Second's queue")
    page.select_option("#reviewers", "named")
    page.get_by_label("only-in-second").check()
    page.get_by_role("button", name="Create queue").click()
    page.wait_for_selector(".flash-success")
