"""A refused by-hand assignment in the browser (new-user finding): it answered a bare 400
page. Now the queue page comes back with the reason beside the item's selects, the
lead's picks still in them, the first of them focused and in view, at 390 and 1280 px;
fixing the pick and pressing Assign again saves it.

The refusal here is the natural one: an item given three reviewers while the queue took
three, then the queue lowered to two (the item keeps its three, so the page shows three
selects); the lead swaps the third for someone new, which would keep the item above two
(``rq.assign``: only someone new is refused above N)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import QueueAssignment, QueueItem
from reviewapp.services import review_queues as rq

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser

REASON = "This queue takes 2 reviewers per run (3 chosen)."


@pytest.fixture
def lowered(make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lena")
    people = {n: make.user(ws, Role.REVIEWER, username=n) for n in ("ann", "bob", "cy", "dan")}
    for i in range(3):
        make.run(ws, query=f"Why did the checkout service in eu-west-1 return 502 errors {i}?")
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Triples", reviewers_per_run=3,
                               assignment="by_hand")
    item = min(session.scalars(select(QueueItem.id).where(QueueItem.queue_id == queue.id)))
    rq.assign(session, make.actor(lead), item, [people[n].id for n in ("ann", "bob", "cy")])
    rq.update_queue(session, make.actor(lead), queue.id, reviewers_per_run=2)
    session.commit()
    return type("L", (), dict(queue=queue, item=item, people=people))


def _assigned(session, item_id):
    session.rollback()  # a fresh snapshot: the live server wrote meanwhile
    return sorted(session.scalars(select(QueueAssignment.user_id)
                                  .where(QueueAssignment.item_id == item_id)))


@pytest.mark.parametrize("width,height", [(390, 844), (1280, 900)])
def test_a_refused_assignment_keeps_the_picks_and_focuses_the_error(
        new_page, lowered, session, width, height):
    page = new_page(width, height)
    log_in(page, "lena")
    page.goto(f"/queues/{lowered.queue.id}")
    row = page.locator(f"#item-{lowered.item}")
    selects = row.locator("select")
    assert selects.count() == 3
    selects.nth(2).select_option(label="dan")
    with page.expect_response(lambda r: r.url.endswith("/assign")) as answer:
        row.locator("button", has_text="Assign").click()
    assert answer.value.status == 303  # POST/redirect/GET (queuewalk): a reload does not post again
    page.wait_for_url(f"**/queues/{lowered.queue.id}#item-{lowered.item}")
    page.wait_for_load_state()
    first = f"assign-{lowered.item}-1"
    page.wait_for_function(f"() => document.activeElement && document.activeElement.id === '{first}'",
                           timeout=5000)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"queue-assign-refused-{width}.png"))
    page.screenshot(path=str(SCREENSHOTS / f"queue-assign-refused-{width}-full.png"), full_page=True)
    row = page.locator(f"#item-{lowered.item}")
    error = row.locator(f"#assign-{lowered.item}-error")
    assert error.inner_text().strip() == REASON
    # The picks as the lead left them, each select marked and described by the reason.
    selects = row.locator("select")
    assert [selects.nth(i).evaluate("s => s.selectedOptions[0].textContent.trim()")
            for i in range(3)] == ["ann", "bob", "dan"]
    assert {selects.nth(i).get_attribute("aria-describedby") for i in range(3)} == \
        {f"assign-{lowered.item}-error"}
    # The focused select and the reason are in view, side by side with the form, and the
    # page does not scroll sideways.
    for box in (selects.nth(0).bounding_box(), error.bounding_box()):
        assert 0 <= box["y"] and box["y"] + box["height"] <= height, box
        assert 0 <= box["x"] and box["x"] + box["width"] <= width, box
    assert page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth") == 0
    assert _assigned(session, lowered.item) == sorted(
        lowered.people[n].id for n in ("ann", "bob", "cy"))
    # Fixed from the keyboard where the focus is: the third slot to Nobody, then Assign.
    selects.nth(2).select_option(label="Nobody")
    row.locator("button", has_text="Assign").click()
    page.wait_for_selector(".flash-success")
    assert "Item assigned." in page.locator(".flash-success").inner_text()
    assert page.locator(f"#assign-{lowered.item}-error").count() == 0
    assert _assigned(session, lowered.item) == sorted(lowered.people[n].id for n in ("ann", "bob"))
