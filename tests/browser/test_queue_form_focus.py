"""A refused new-queue form focuses its first invalid field (new-user walk at 1280x800:
an error on "Reservation (minutes)", below the fold, was invisible — the page came back
at its top with nothing focused). The browser scrolls the focused field into view."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


def test_an_error_below_the_fold_is_focused_and_in_view(new_page, make):
    ws = make.workspace()
    make.user(ws, Role.LEAD, username="lena.lead")
    make.user(ws, username="rev2")
    page = new_page(1280, 800)
    log_in(page, "lena.lead")
    page.goto("/queues/new")
    page.get_by_label("Name", exact=True).fill("Focus check")
    page.get_by_label("Reservation (minutes)").fill("0")
    page.get_by_role("button", name="Create queue").click()
    page.wait_for_function("() => document.activeElement && document.activeElement.name === 'reservation_minutes'")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "queue-form-focus-1280.png"))
    focused = page.evaluate("""() => {
        const el = document.activeElement, box = el.getBoundingClientRect();
        return {invalid: el.getAttribute('aria-invalid'), top: box.top, bottom: box.bottom,
                height: window.innerHeight};
    }""")
    assert focused["invalid"] == "true"
    assert 0 <= focused["top"] and focused["bottom"] <= focused["height"]
