"""The runs list's score boxes (new-user finding): typing 150 in "Score from" then Tab sent
no request and said nothing (the input's max made htmx skip it); and both boxes turned red
when only one was wrong. Now the typed value is asked for and the server's message shows,
with only the wrong box marked. Chromium at 1280 and 390 px; screenshots go to
test-output/screenshots/score-filter-*.png."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1280, 390])
def test_a_typed_score_out_of_range_is_named_and_only_its_box_marked(new_page, make, width):
    ws = make.workspace(slug="scores")
    make.user(ws, username="sam.score")
    make.run(ws, query="First run")
    page = new_page(width=width, height=900)
    log_in(page, "sam.score")
    page.goto("/")
    if width < 600:
        page.click("label[for=filters-toggle]")
    box = page.locator("input[name=score_min]")
    box.fill("150")
    box.press("Tab")
    expect(page.locator(".score-range .error")).to_contain_text("must be between 0 and 100")
    expect(page.locator("input[name=score_min]")).to_have_attribute("aria-invalid", "true")
    colour = "el => getComputedStyle(el).borderTopColor"
    bad = page.locator("input[name=score_min]").evaluate(colour)
    other = page.locator("input[name=score_max]").evaluate(colour)
    plain = page.locator("#q").evaluate(colour)
    assert bad != plain and other == plain, (bad, other, plain)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"score-filter-{width}.png"), full_page=True)
