"""The blind-review banner follows the rating without a reload (new-user finding: it
still said the verdict stayed hidden after the reviewer had rated, while the verdict
badge beside it already showed). Rating the answer replaces the banner (out-of-band, with
the verdict badge's refresh) by "Blind review over"; taking the rating back brings the
banner back. Screenshots at 1280 and 390 px."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from reviewapp.actors import Role
from reviewapp.services import review_queues as rq

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1280, 390])
def test_the_blind_banner_ends_when_the_answer_is_rated(new_page, make, session, width):
    ws = make.workspace(name="Checkout on-call")
    lead = make.user(ws, Role.LEAD, username="team.lead")
    make.user(ws, username="ann")
    run = make.run(ws, query="Why did checkout fail?", answer="The card processor timed out.")
    rq.create_queue(session, make.actor(lead), ws.id, "Checkout pairs", {}, reviewers_per_run=2, blind=True)
    page = new_page(width, 900)
    log_in(page, "ann")
    page.goto(f"/runs/{run.id}")
    note = page.locator(".blind-note")
    expect(note).to_contain_text("stay hidden until you have rated the answer")
    page.locator('.answer .thumb[data-rating="positive"]').click()
    expect(page.locator(f"#run-{run.id}-verdict")).to_have_text("No verdict yet")
    expect(note).to_contain_text("Blind review over")
    assert "stay hidden" not in note.inner_text()
    assert page.locator(".blind-note").count() == 1
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".run-header").screenshot(path=str(SCREENSHOTS / f"blind-note-over-{width}.png"))
    # Taking the rating back makes the run blind again: the banner says so again.
    page.locator('.answer .thumb[data-rating="positive"]').click()
    expect(page.locator(f"#run-{run.id}-verdict")).to_have_text("Blind review")
    expect(note).to_contain_text("stay hidden until you have rated the answer")
