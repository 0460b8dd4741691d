"""The thumbs say when they are saving (new-user finding: nothing changed between the
click and the answer, so people clicked again). While the rating is sent the control is
aria-busy and says "Saving…"; the answer says "✓ Saved"; a failed save says it was not
saved, at the control, and the thumbs stay usable (keyboard). Screenshots at 1280 and
390 px."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1280, 390])
def test_thumbs_show_saving_then_saved_and_a_failed_save(new_page, make, width):
    ws = make.workspace()
    make.user(ws, username="rita.rates")
    run = make.run(ws)
    page = new_page(width, 900)
    log_in(page, "rita.rates")
    page.goto(f"/runs/{run.id}")
    held = []
    page.route("**/feedback", lambda route: held.append(route))
    control = page.locator(".answer .thumbs")
    helpful = control.locator('.thumb[data-rating="positive"]')
    helpful.focus()
    page.keyboard.press("Enter")
    expect(control).to_have_attribute("aria-busy", "true")
    expect(control.locator(".fb-status")).to_have_text("Saving…")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    control.screenshot(path=str(SCREENSHOTS / f"thumbs-saving-{width}.png"))
    assert len(held) == 1
    held[0].continue_()
    page.unroute("**/feedback")
    expect(control.locator(".fb-status")).to_have_text("✓ Saved")
    expect(control).not_to_have_attribute("aria-busy", "true")
    # A failed save: said at the control; the other thumb still takes the keyboard.
    page.route("**/feedback", lambda route: route.fulfill(status=500, body="broken"))
    control.locator('.thumb[data-rating="negative"]').focus()
    page.keyboard.press("Enter")
    expect(control.locator(".fb-status")).to_have_text("Not saved (error 500). Try again.")
    expect(control).not_to_have_attribute("aria-busy", "true")
    assert "fb-failed" in control.get_attribute("class")
    control.screenshot(path=str(SCREENSHOTS / f"thumbs-not-saved-{width}.png"))
    page.unroute("**/feedback")
    page.keyboard.press("Enter")
    expect(control.locator('.thumb[data-rating="negative"]')).to_have_attribute("aria-pressed", "true")
    expect(control.locator(".fb-status")).to_have_text("✓ Saved")
