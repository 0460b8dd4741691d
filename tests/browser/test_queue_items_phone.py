"""A queue's items table on a phone (new-user finding): at 390 px it scrolled sideways
inside its card (the assign form and the times pushed it past the card's width), so the
Remove button sat off screen. The rows now stack as cards, every control in view and
reachable with the keyboard. The assign form has one select per reviewer slot (two here:
reviewers per run 2), each showing its assignee."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role
from reviewapp.services import review_queues as rq

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


def _shoot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"queue-items-{name}.png"), full_page=True)


@pytest.fixture
def queue(make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lena")
    reviewers = [make.user(ws, Role.REVIEWER, username=name) for name in ("ann", "bartholomew-the-reviewer")]
    for i in range(3):
        make.run(ws, run_id=f"run-with-a-long-external-identifier-{i:04d}-0123456789abcdef",
                 query=f"Why did the checkout service in eu-west-1 return 502 errors {i}?")
    created, _ = rq.create_queue(session, make.actor(lead), ws.id, "Pairs", reviewers_per_run=2,
                                 assignment="by_hand")
    first = min(rq.list_items(session, make.actor(lead), created.id)[1].rows, key=lambda r: r.item_id)
    rq.assign(session, make.actor(lead), first.item_id, [u.id for u in reviewers])
    session.commit()
    return created


def _overflow(page) -> dict:
    return page.evaluate("""() => {
        const wrap = document.querySelector('table.queue-items').closest('.table-wrap');
        return {wrap: wrap.scrollWidth - wrap.clientWidth,
                page: document.documentElement.scrollWidth - window.innerWidth};
    }""")


def test_queue_items_fit_a_phone_and_work_from_the_keyboard(new_page, queue):
    wide = new_page(1280, 900)
    log_in(wide, "lena")
    wide.goto(f"/queues/{queue.id}")
    _shoot(wide, "1280")
    assert _overflow(wide) == {"wrap": 0, "page": 0}
    # On a wide screen the slots stack too, and Assign sits beside the last one.
    wide_row = wide.locator("table.queue-items tbody tr").first
    last, assign = wide_row.locator("select").nth(1).bounding_box(), wide_row.locator("button", has_text="Assign").bounding_box()
    assert abs(assign["y"] + assign["height"] - last["y"] - last["height"]) <= 4 and assign["x"] > last["x"] + last["width"]

    page = new_page(390, 844)
    log_in(page, "lena")
    page.goto(f"/queues/{queue.id}")
    _shoot(page, "390")
    assert _overflow(page) == {"wrap": 0, "page": 0}
    row = page.locator("table.queue-items tbody tr").first
    # Every control of a row is inside the screen, and Tab walks them in order.
    controls = row.locator("a, select, button")
    assert controls.count() == 5  # run link, a select per reviewer slot (2), Assign, Remove
    for i in range(controls.count()):
        box = controls.nth(i).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, (i, box)
    # Both assignees show, one per slot, stacked, each as wide as the card.
    assert [controls.nth(i).evaluate("s => s.selectedOptions[0].textContent.trim()") for i in (1, 2)] \
        == ["ann", "bartholomew-the-reviewer"]
    first_box, select_box = controls.nth(1).bounding_box(), controls.nth(2).bounding_box()
    assert first_box["x"] == select_box["x"] and first_box["y"] < select_box["y"]  # stacked
    assert select_box["width"] >= 300  # the card's width: a long username reads whole
    # The Assign button keeps its word on one line (it broke "Assig / n"), under the selects.
    assign_box = controls.nth(3).bounding_box()
    assert assign_box["height"] <= select_box["height"] + 4
    assert assign_box["y"] >= select_box["y"] + select_box["height"] and assign_box["x"] == select_box["x"]
    controls.nth(0).focus()
    order = []
    for _ in range(4):
        page.keyboard.press("Tab")
        order.append(page.evaluate("document.activeElement.tagName + ':' + "
                                   "(document.activeElement.textContent || '').trim().slice(0, 20)"))
    assert [o.split(":")[0] for o in order[:2]] == ["SELECT", "SELECT"]
    assert order[2] == "BUTTON:Assign" and order[3] == "BUTTON:Remove"
    # The cell labels stand in for the hidden header: each says what its value is.
    labels = row.locator("td").evaluate_all(
        "cells => cells.map(c => getComputedStyle(c, '::before').content)")
    assert labels[:4] == ['"Run"', '"Why it is here"', '"Rated"', '"Reserved"']
    # Remove works from the keyboard (Enter on the focused button); it asks first
    # (bd4485b), and its question's own button is reached and pressed from the keyboard too.
    page.keyboard.press("Enter")
    confirm = page.get_by_role("button", name="Remove from the queue")
    confirm.wait_for()
    confirm.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector(".flash-success")
    assert page.locator("table.queue-items tbody tr").count() == 2
