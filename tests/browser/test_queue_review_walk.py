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
