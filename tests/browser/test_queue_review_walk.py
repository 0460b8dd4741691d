"""New-user walk of the team-review queues, in the browser at 1280 and 390 px (screenshots
looked at): an empty queue's row offers no "Review this queue" but says it has no runs,
and with every queue empty "My next item" shows an empty state instead of its big button."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role
from reviewapp.services import review_queues as rq

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


def _shoot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"queue-walk-{name}.png"), full_page=True)


def _inside(page, locator, width: int) -> None:
    box = locator.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= width, box


@pytest.mark.parametrize("width", [1280, 390])
def test_an_empty_queue_says_it_has_no_runs_instead_of_a_review_button(new_page, make, session, width):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lena")
    make.user(ws, Role.REVIEWER, username="ann")
    make.run(ws)
    rq.create_queue(session, make.actor(lead), ws.id, "Alerts only (none yet)", {"kind": "aiops"})
    session.commit()
    page = new_page(width, 900)
    log_in(page, "ann")
    page.goto("/queue")
    empty = page.locator(".queue-mine .empty")
    assert empty.inner_text().split("\n")[0] == "No runs in your queues yet."
    assert page.get_by_role("button", name="Open my next item").count() == 0
    assert page.get_by_role("button", name="Review this queue").count() == 0
    row = page.locator("table.queues tbody tr").first
    assert row.locator("td.actions").inner_text().strip() == "No runs yet"
    _inside(page, row.locator("td.actions span"), width)
    _shoot(page, f"mine-empty-{width}")
    # A queue with runs beside it: its button, and the big one, are back.
    rq.create_queue(session, make.actor(lead), ws.id, "Chat answers", {"kind": "chat"})
    session.commit()
    page.goto("/queue")
    page.get_by_role("button", name="Open my next item").wait_for()
    assert page.get_by_role("button", name="Review this queue").count() == 1
    assert page.locator(".queue-mine .empty").count() == 0
    _shoot(page, f"mine-one-empty-{width}")
    page.goto("/queues/")
    assert page.get_by_role("button", name="Review", exact=True).count() == 1
    _shoot(page, f"queues-one-empty-{width}")


@pytest.mark.parametrize("width", [1280, 390])
def test_a_queue_items_page_leads_back_to_the_queue_not_the_runs_list(new_page, make, session, width):
    """Walk finding 1: the item's page shows "← Review queue" and no runs-list Previous /
    Next; the queue bar's "Next item" is the way on; the crumb goes to My next item, at
    the item's queue's row (queuewalk)."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lena")
    make.user(ws, Role.REVIEWER, username="ann")
    for i in range(2):
        make.run(ws, query=f"Why did checkout return 502 errors {i}?")
    rq.create_queue(session, make.actor(lead), ws.id, "Chat answers", {"kind": "chat"})
    session.commit()
    page = new_page(width, 900)
    log_in(page, "ann")
    page.goto("/queue")
    page.get_by_role("button", name="Review this queue").click()
    page.wait_for_url("**/runs/*?item=*")
    nav = page.get_by_role("navigation", name="Run navigation")
    assert nav.get_by_role("link").all_inner_texts() == ["← Review queue"]
    assert nav.get_by_text("Previous").count() == 0 and nav.get_by_text("Next ›").count() == 0
    _inside(page, page.get_by_role("button", name="Next item"), width)
    _shoot(page, f"item-nav-{width}")
    nav.get_by_role("link", name="← Review queue").click()
    page.wait_for_url("**/queue#queue-*")  # the item's queue's row (queuewalk)
    page.get_by_role("heading", name="My next item").wait_for()


@pytest.mark.parametrize("width, js", [(1280, True), (390, True), (390, False)])
def test_removing_a_queue_item_asks_first_then_cancel_keeps_and_confirm_removes(new_page, make, session, width, js):
    """Walk finding 8: "Remove" asks on the queue's page (with or without JavaScript);
    the focus starts on Cancel, which keeps the item; the question's button removes it."""
    from .conftest import focused, wait_focused

    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lena")
    run = make.run(ws, run_id="run-to-remove", query="Why did the checkout service return 502 errors?")
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Chat answers", {"kind": "chat"})
    session.commit()
    page = new_page(width, 900, java_script_enabled=js)
    log_in(page, "lena")
    page.goto(f"/queues/{queue.id}")
    page.locator("table.queue-items").get_by_role("button", name="Remove").click()
    question = page.get_by_role("region", name="Remove this run from “Chat answers”?")
    question.wait_for()
    assert "Its ratings stay with the run." in question.inner_text()
    assert rq.exists_item(session, queue.id, run.id)
    session.rollback()
    _inside(page, question.get_by_role("button", name="Remove from the queue"), width)
    _shoot(page, f"remove-confirm-{width}{'' if js else '-nojs'}")
    wait_focused(page, "a: Cancel")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/queues/{queue.id}#item-*")
    assert page.get_by_role("region", name="Remove this run from “Chat answers”?").count() == 0
    assert rq.exists_item(session, queue.id, run.id)
    session.rollback()
    page.locator("table.queue-items").get_by_role("button", name="Remove").click()
    page.get_by_role("button", name="Remove from the queue").click()
    page.wait_for_selector(".flash-success")
    assert page.locator(".flash-success").inner_text().strip() == "Run removed from the queue."
    assert focused(page)  # the page is there and usable
    session.rollback()
    assert not rq.exists_item(session, queue.id, run.id)
