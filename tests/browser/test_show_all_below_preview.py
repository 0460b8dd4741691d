"""A long comment or correction on the disputes page: its "Show all 4,000 characters"
control sat beside the preview (``.adj-texts div`` made the text's own wrapper a 6.5rem +
1fr grid), squeezing the preview into a ~100 px column. The control sits below it, at
1280 and 390 px. Screenshots go to test-output/screenshots."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import SCREENSHOTS

pytestmark = pytest.mark.browser

CSS = Path(__file__).resolve().parents[2] / "static" / "css" / "app.css"
MARKUP = ('{% from "macros/ui.html" import plain_text %}<main><div class="adj-col"><dl class="adj-texts">'
          '<div><dt>Reason</dt><dd>Incorrect</dd></div>'
          '<div><dt>Correction</dt><dd>{{ plain_text(text, 600, "prewrap", "span") }}</dd></div></dl></div></main>')


@pytest.mark.parametrize("width", [1280, 390])
def test_show_all_sits_below_a_long_corrections_preview(app, browser, width):
    text = ("Check the payment gateway's error budget before paging anyone. " * 70)[:4000]
    with app.test_request_context():
        body = app.jinja_env.from_string(MARKUP).render(text=text)
    assert "Show all 4,000 characters" in body
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_content(f"<!doctype html><html><head><style>{CSS.read_text()}</style></head><body>{body}</body></html>")
    preview = page.locator(".preview-text").bounding_box()
    control = page.locator(".show-all > summary").bounding_box()
    term = page.locator(".adj-texts dt").nth(1).bounding_box()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"show-all-below-preview-{width}.png"), full_page=True)
    page.close()
    assert control["y"] >= preview["y"] + preview["height"]  # below, not beside
    assert abs(control["x"] - preview["x"]) < 2  # in the same column
    # The preview takes the value column: the page width less the term column and padding.
    assert preview["width"] > width - term["x"] - term["width"] - 120
