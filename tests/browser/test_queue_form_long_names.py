"""The new-queue form keeps to a phone's width when a reviewer's username is one long
word (new-user finding: an 80-character username widened the form to 836 px at 390 px:
a fieldset grows to its content's narrowest width unless told otherwise). Screenshot."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [390, 1280])
def test_a_long_username_does_not_widen_the_queue_form(new_page, make, width):
    ws = make.workspace()
    make.user(ws, Role.LEAD, username="lena.lead")
    make.user(ws, username="a" * 80)
    make.user(ws, username="rev2")
    page = new_page(width, 900)
    log_in(page, "lena.lead")
    page.goto("/queues/new")
    label = page.get_by_label("a" * 80)
    label.scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"queue-form-long-name-{width}.png"), full_page=True)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    box = label.bounding_box()
    assert box is not None and box["x"] + box["width"] <= width
