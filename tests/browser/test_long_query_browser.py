"""A very long question on the run page, as a person sees it at 1280 and 390 px: a short
heading, the question behind "Show the whole question", cut with its marker
(screenshots in test-output/screenshots)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1280, 390])
def test_a_long_query_reads_as_a_short_heading_and_a_cut_whole(new_page, make, width):
    ws = make.workspace()
    make.user(ws, username="rita.reviewer")
    query = "Why is checkout slow since the deploy? " + "log line 42 timeout " * 15_000  # 300,039
    run = make.run(ws, query=query)
    page = new_page(width=width)
    log_in(page, "rita.reviewer")
    page.goto(f"/runs/{run.id}")
    heading = page.locator("h1.query-title")
    expect(heading).to_contain_text("Why is checkout slow since the deploy?")
    assert len(heading.inner_text()) <= 243
    page.locator(".full-query > summary").click()
    expect(page.locator(".full-query .cut-note")).to_contain_text(
        f"Cut at 200,000 of {len(query):,} characters")
    overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"long-query-{width}.png"), full_page=False)
