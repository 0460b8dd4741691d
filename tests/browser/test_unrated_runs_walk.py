"""The runs list's walk through the unrated runs reads "Unrated runs", apart from the
navigation's "Review queue" (new-user walk, 2026-12-04); screenshots of a run in the walk
at 1280 and 390 px go to test-output/screenshots/."""

from __future__ import annotations

import pytest

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1280, 390])
def test_the_walk_banner_says_unrated_runs(new_page, make, width):
    ws = make.workspace()
    for i in range(3):
        make.run(ws, query=f"Walk question {i}?")
    make.user(ws, username="una")
    page = new_page(width=width, height=900)
    log_in(page, "una")
    page.goto("/")
    page.get_by_role("link", name="Review the next unrated run ›").click()
    page.locator("#queue-progress progress").wait_for()
    banner = " ".join(page.locator("#queue-progress").inner_text().split())
    assert banner.startswith("Unrated runs") and "0 of 3 reviewed" in banner
    assert page.get_by_role("navigation", name="Main").locator('[aria-current="page"]').inner_text() == "Runs"
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"unrated-walk-{width}.png"))
