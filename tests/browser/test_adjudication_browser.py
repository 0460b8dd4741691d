"""Issue 16, end to end in a browser: two reviewers of a blind queue with two reviewers
per run rate the same run differently — neither sees the other's rating before rating —
the lead adjudicates on the disputes page, and the verdict and the agreement figures
follow. Screenshots of the adjudication page at 1280 and 390 px go to
test-output/screenshots."""

from __future__ import annotations

import re

import pytest

from reviewapp.actors import Role
from reviewapp.services import review_queues as rq

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.fixture
def blind_pair(make, session):
    ws = make.workspace(name="Checkout on-call")
    lead = make.user(ws, Role.LEAD, username="team.lead")
    make.user(ws, username="ann")
    make.user(ws, username="bob")
    run = make.run(ws, query="Why did checkout fail for order 1042?",
                   answer="The card processor timed out.")
    rq.create_queue(session, make.actor(lead), ws.id, "Checkout pairs", {},
                    reviewers_per_run=2, blind=True)
    return run


def _rate(new_page, run, who, button, width=1280):
    page = new_page(width, 900)
    log_in(page, who)
    page.goto(f"/runs/{run.id}")
    verdict = page.locator(f"#run-{run.id}-verdict")
    # Blind: before rating, no verdict and nobody else's rating shows.
    assert "Blind review" in verdict.inner_text()
    assert page.locator(".blind-note").count() == 1
    assert page.locator(".answer .fb-others").count() == 0
    with page.expect_response(lambda r: r.request.method == "POST"):
        page.locator(".answer .thumbs").get_by_role("button", name=re.compile(button)).click()
    page.locator(".answer .thumbs .fb-status .saved").wait_for()
    page.reload()
    assert "Blind review" not in page.locator(f"#run-{run.id}-verdict").inner_text()
    return page


def test_two_reviewers_disagree_and_the_lead_decides(new_page, blind_pair):
    run = blind_pair
    ann = _rate(new_page, run, "ann", "^Helpful")
    # Ann rated: she sees her own rating; the run waits for the second reviewer.
    assert "No verdict yet" in ann.locator(f"#run-{run.id}-verdict").inner_text()
    bob = _rate(new_page, run, "bob", "^Not helpful")
    # Bob rated too: he now sees both ratings, and the tie left the run disputed, waiting
    # for a lead (it read "No verdict yet" until a new-user finding); no link for him.
    others = bob.locator(".answer .fb-others").inner_text()
    assert "Reviewers disagree" in others
    header = bob.locator(f"#run-{run.id}-verdict")
    assert header.inner_text() == "Disputed The reviewers split; it waits for a lead's decision."
    assert header.locator("a").count() == 0

    lead = new_page(1280, 900)
    log_in(lead, "team.lead")
    lead.goto("/dashboard/agreement?min_shared=1")
    assert "No decided runs" in lead.locator("#t-decisions").locator("..").inner_text()
    lead.goto("/adjudication/")
    item = lead.locator("article.adj-item")
    assert item.count() == 1
    columns = item.locator(".adj-col")
    assert [columns.nth(i).locator("h3").inner_text() for i in range(2)] == ["ann", "bob"]
    assert "Helpful" in columns.nth(0).inner_text()
    assert "Not helpful" in columns.nth(1).inner_text()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    lead.screenshot(path=str(SCREENSHOTS / "adjudication-1280.png"), full_page=True)
    phone = new_page(390, 900)
    log_in(phone, "team.lead")
    phone.goto("/adjudication/")
    overflow = phone.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    phone.screenshot(path=str(SCREENSHOTS / "adjudication-390.png"), full_page=True)
    assert overflow <= 0

    item.get_by_label("Not useful").check()
    item.locator("textarea[name=note]").fill("The processor timeout is the real cause.")
    item.get_by_role("button", name="Decide").click()
    lead.wait_for_url("**/adjudication/**")
    assert "Decision saved" in lead.locator("body").inner_text()
    assert lead.locator("article.adj-item").count() == 0
    assert "The processor timeout is the real cause." in lead.locator("#decided-h").locator(
        "..").inner_text()

    lead.goto(f"/runs/{run.id}")
    assert "Not useful" in lead.locator(f"#run-{run.id}-verdict").inner_text()
    lead.goto("/dashboard/agreement?min_shared=1")
    table = lead.locator("#t-decisions").locator("..").inner_text()
    assert re.search(r"ann\s+1\s+0\s+0%", table) and re.search(r"bob\s+1\s+1\s+100%", table)
