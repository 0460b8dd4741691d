"""A disputed run's header at 390 and 1280 px (issue 16, new-user finding: it read "No
verdict yet"). The second reviewer's rating turns the badge to "Disputed" without a
reload; a reviewer gets no link, a lead's link opens the run on the disputes page. No
sideways scroll; screenshots in test-output/screenshots for a person to look at."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import Message
from reviewapp.services import feedback
from reviewapp.services import review_queues as rq

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser
OVERFLOW = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"


@pytest.mark.parametrize("width", [390, 1280])
def test_a_split_turns_the_header_to_disputed_and_leads_reach_the_dispute(
        new_page, make, session, width):
    ws = make.workspace(name="Checkout on-call")
    lead = make.user(ws, Role.LEAD, username="lena.lead")
    ann = make.user(ws, username="ann")
    make.user(ws, username="bob")
    run = make.run(ws, query="Why did checkout fail for card payments in eu-west-1?")
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Checkout pairs", {},
                               reviewers_per_run=2)
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                     Message.role == "assistant"))
    feedback.upsert_feedback(session, make.actor(ann), "chat_message", answer, None, "positive")

    page = new_page(width, 900)
    log_in(page, "bob")
    page.goto(f"/runs/{run.id}")
    badge = page.locator(f"#run-{run.id}-verdict")
    expect(badge).to_have_text("No verdict yet")
    page.locator('.answer .thumbs .thumb[data-rating="negative"]').click()
    expect(badge.locator(".badge-disputed")).to_have_text("Disputed")  # refreshed, no reload
    expect(badge).to_contain_text("waits for a lead's decision")
    assert badge.locator("a").count() == 0  # a reviewer may not open the disputes page
    assert page.evaluate(OVERFLOW) <= 0
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("header.run-header").screenshot(
        path=str(SCREENSHOTS / f"disputed-header-reviewer-{width}.png"))

    page.context.clear_cookies()
    log_in(page, "lena.lead")
    page.goto(f"/runs/{run.id}")
    link = badge.get_by_role("link", name="decide it on the disputes page")
    expect(link).to_be_visible()
    assert page.evaluate(OVERFLOW) <= 0
    page.locator("header.run-header").screenshot(
        path=str(SCREENSHOTS / f"disputed-header-lead-{width}.png"))
    link.click()
    page.wait_for_url(f"**/adjudication/?queue={queue.id}#adj-{run.id}-h")
    expect(page.locator(f"#adj-{run.id}-h")).to_contain_text("Why did checkout fail")
