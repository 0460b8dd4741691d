"""Saving a fault category by keyboard (no htmx: a form POST and a 303) lands back at the
category field, focused and in view (new-user walk, 2026-12-03: the page opened at its top,
the focus on <body>, so a keyboard user had to Tab through the whole page again)."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


def _save_category_by_keyboard(new_page, make, width, height):
    """A lead on a new triage item's page types "Wrong root" in the category, tabs to
    "Save category" and presses Enter; returns (item, page)."""
    ws = make.workspace()
    make.user(ws, Role.LEAD, username="lena")
    item = make.triage_item(make.run(ws, query="Why is checkout-service returning 502s?"))
    page = new_page(width, height)
    log_in(page, "lena")
    page.goto(f"/triage/{item.id}")
    page.locator("#fault_category").focus()
    page.keyboard.type("Wrong root")
    page.keyboard.press("Tab")  # to "Save category"
    page.keyboard.press("Enter")
    return item, page


@pytest.mark.parametrize("width,height", [(390, 844), (1280, 900)])
def test_saving_a_category_by_keyboard_keeps_the_focus_at_the_category(new_page, make, width, height):
    item, page = _save_category_by_keyboard(new_page, make, width, height)
    page.wait_for_selector("#category-status:not(:empty)")  # the saved message, said at the category
    assert page.url.endswith(f"/triage/{item.id}#fault_category")
    page.wait_for_function("() => document.activeElement && document.activeElement.id === 'fault_category'",
                           timeout=15000)
    assert page.locator("#fault_category").input_value() == "WRONG_ROOT_CAUSE"
    box = page.locator("#fault_category").bounding_box()
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= height
    page.keyboard.press("Tab")  # the next control after the category, not the page's first link
    assert page.evaluate("() => document.activeElement.textContent.trim()") == "Save category"


@pytest.mark.parametrize("width,height", [(390, 844), (1280, 700)])
def test_the_saved_message_shows_and_is_announced_at_the_category(new_page, make, width, height):
    """Second new-user walk: after saving by keyboard the page came back at the category, its
    "Fault category saved." in the message region at the page's top, out of view (and, being
    there at load, never announced). It is said in the live region under the category."""
    item, page = _save_category_by_keyboard(new_page, make, width, height)
    page.wait_for_url(f"**/triage/{item.id}#fault_category")
    status = page.locator("#category-status")
    status.wait_for(state="visible", timeout=15000)
    page.wait_for_function("() => document.activeElement && document.activeElement.id === 'fault_category'",
                           timeout=15000)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"triage_category_saved_{width}.png"))
    assert status.inner_text().strip() == "Fault category saved."
    assert status.get_attribute("role") == "status"
    box = status.bounding_box()
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= height
    assert "Fault category saved." not in page.locator("#messages").inner_text()  # said once
