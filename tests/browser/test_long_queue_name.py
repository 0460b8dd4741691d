"""A queue name of one long word (new-user finding, session 7): a name of 120 "x" grew the
queues list's table to about 1,681 px at every width, so the workspace, setup, progress,
"rated by me" and Edit columns of every queue were pushed out of the card; the flash
saying the queue was saved ran out of its box. A long name now breaks inside the word."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role
from reviewapp.domain.queues import NAME_MAX
from reviewapp.services import review_queues as rq

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.fixture
def queues(make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lena")
    make.user(ws, Role.REVIEWER, username="ann")
    make.run(ws, run_id="long-name-run", query="Why did checkout fail?")
    long, _ = rq.create_queue(session, make.actor(lead), ws.id, "x" * NAME_MAX)
    rq.create_queue(session, make.actor(lead), ws.id, "Short")
    session.commit()
    return long


def _overflow(page) -> dict:
    return page.evaluate("""() => {
        const wraps = [...document.querySelectorAll('.table-wrap')];
        return {wrap: Math.max(0, ...wraps.map(w => w.scrollWidth - w.clientWidth)),
                page: document.documentElement.scrollWidth - window.innerWidth,
                flash: Math.max(0, ...[...document.querySelectorAll('.flash')].map(
                    f => f.scrollWidth - f.clientWidth))};
    }""")


@pytest.mark.parametrize("width", [1280, 390])
def test_a_long_queue_name_stays_inside_the_pages(new_page, queues, width):
    page = new_page(width, 900)
    log_in(page, "lena")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for path, name in (("/queues/", "list"), ("/queue", "mine"), (f"/queues/{queues.id}", "detail"),
                       (f"/queues/{queues.id}/edit", "edit")):
        page.goto(path)
        page.screenshot(path=str(SCREENSHOTS / f"long-queue-name-{name}-{width}.png"), full_page=True)
        assert _overflow(page) == {"wrap": 0, "page": 0, "flash": 0}, (path, width)
        if name in ("list", "mine"):  # both queues are listed, the long name in full
            assert page.get_by_text("x" * NAME_MAX, exact=True).count() == 1
            assert page.get_by_text("Short", exact=True).count() == 1
    # Saving it again shows the flash naming the queue: it stays in its box too.
    page.goto(f"/queues/{queues.id}/edit")
    page.get_by_role("button", name="Save").first.click()
    page.wait_for_load_state()
    assert _overflow(page) == {"wrap": 0, "page": 0, "flash": 0}, ("saved", width)
