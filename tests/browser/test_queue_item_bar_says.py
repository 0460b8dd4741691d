"""Item bar walk, in the browser at 1280 and 390 px (screenshots looked at): a lead opening
reviewer2's item from the queue's page reads who holds it and until when, in the bar,
without sideways scroll."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import QueueItem
from reviewapp.services import review_queues as rq

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1280, 390])
def test_the_lead_reads_who_holds_the_item(new_page, make, session, width):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lena")
    reviewer2 = make.user(ws, Role.REVIEWER, username="reviewer2")
    run = make.run(ws)
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Chat answers", {"kind": "chat"})
    item = session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id))
    until = (datetime.now(UTC) + timedelta(minutes=20)).replace(second=0, microsecond=0)
    item.reserved_by, item.reserved_until = reviewer2.id, until
    session.commit()
    page = new_page(width, 900)
    log_in(page, "lena")
    page.goto(f"/queues/{queue.id}")
    page.locator(f'#item-{item.id} a[href*="item={item.id}"]').click()
    page.wait_for_url(f"**/runs/{run.id}?item={item.id}*")
    bar = page.locator("#reservation")
    # the page's usual time format, the server's and app.js's alike (the browser's zone: UTC)
    assert " ".join(bar.inner_text().split()) == (
        f"reviewer2 is reviewing this item (reserved until {until:%Y-%m-%d %H:%M} UTC).")
    box = bar.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= width, box
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"item-bar-held-{width}.png"), full_page=False)
