"""The triage list's refused filter in a real browser (new-user walk, 2026-12-03: Score from
80, to 10 and Filter showed "400 score_min: must not be above score_max" twice, above a list
that still said "2 items match"). Now the message shows once in the list's place and at the
field, named by its label; fixing the value and filtering again brings the rows back and
takes the marks away."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser

MESSAGE = "must not be below the minimum score"


@pytest.mark.parametrize("width,height", [(390, 844), (1280, 900)])
def test_a_reversed_score_range_is_said_once_and_lists_nothing(new_page, make, width, height):
    ws = make.workspace()
    make.user(ws, Role.LEAD, username="lena")
    items = [make.triage_item(make.run(ws, query=f"Why is checkout-service returning 502s {i}?")) for i in range(2)]
    page = new_page(width, height)
    log_in(page, "lena")
    page.goto("/triage/")
    page.locator("#f-smin").fill("80")
    page.locator("#f-smax").fill("10")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_selector("#triage-table p.error")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"triage_filter_refused_{width}.png"), full_page=True)
    text = page.locator("main").inner_text()
    assert text.count(MESSAGE) == 2  # the summary and the field, nothing in the message region
    assert "Score to: " + MESSAGE in page.locator("#triage-table").inner_text()
    assert page.locator("#messages").inner_text().strip() == ""
    assert "400" not in text and "match" not in text and page.locator("[id^=triage-row-]").count() == 0
    assert page.locator("#f-smax").get_attribute("aria-invalid") == "true"
    assert page.locator("#f-smin").input_value() == "80"
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    page.locator("#f-smin").fill("")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_selector(f"#triage-row-{items[0].id}")
    assert page.locator("#f-smax").get_attribute("aria-invalid") is None
    assert MESSAGE not in page.locator("main").inner_text()
