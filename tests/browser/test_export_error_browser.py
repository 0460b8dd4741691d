"""A refused export shows its error in its own form's card, with that form's choices and
BOM tick kept and the other forms left empty, readable at 1280 and 390 px (screenshots)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from reviewapp.actors import Role

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


REVERSED = '"Created from" must not be after "to".'
SIZES = pytest.mark.parametrize("width,height", [(1280, 800), (390, 844)])


@pytest.fixture
def exports(new_page, make):
    """``exports(width=1280, height=900, settings=None, **context_options)`` -> ``(page,
    feedback)``: an admin of a fresh workspace (``settings``: its settings, e.g.
    ``{"feedback_reasons": [...]}``) logged in on the exports page; ``feedback`` is the
    feedback export form's card."""
    def _open(width: int = 1280, height: int = 900, settings: dict[str, Any] | None = None,
              **options: Any):
        admin = make.user(make.workspace(**(settings or {})), Role.ADMIN)
        page = new_page(width, height, **options)
        log_in(page, admin.username)
        page.goto("/exports/")
        return page, page.locator("section", has=page.locator("#x-feedback"))

    return _open


def _refuse_reversed_dates(feedback) -> None:
    """Ask for feedback created from 2026-12-31 to 2026-01-01: refused, saying why."""
    feedback.locator("#xf-from").fill("2026-12-31")
    feedback.locator("#xf-to").fill("2026-01-01")
    feedback.get_by_role("button", name="Download CSV").click()
    expect(feedback.get_by_role("alert")).to_contain_text(REVERSED)


def _download_corrected_csv(page, feedback) -> None:
    """Correct the end date to 2026-12-31 and download: a CSV file comes."""
    feedback.locator("#xf-to").fill("2026-12-31")
    with page.expect_download() as info:
        feedback.get_by_role("button", name="Download CSV").click()
    assert info.value.suggested_filename.endswith(".csv")


def _no_sideways_scroll(page, width: int) -> None:
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width


@SIZES
def test_a_refused_feedback_export_keeps_its_form(exports, width, height):
    """The refusal names the fields by the labels the form shows (new-user finding
    2026-12-03: it read "date_from: must not be after date_to"), both dates are marked
    invalid, red and described by the message, and the first one has the focus."""
    page, feedback = exports(width, height)
    feedback.locator("#xf-from").fill("2026-12-05")
    feedback.locator("#xf-to").fill("2026-12-01")
    feedback.get_by_label("Add a BOM for Excel (CSV)").check()
    feedback.get_by_role("button", name="Download CSV").click()
    alert = feedback.get_by_role("alert")
    expect(alert).to_have_text(f"Nothing was downloaded: {REVERSED}")
    start, end = feedback.get_by_label("Created from"), feedback.get_by_label("to", exact=True)
    expect(start).to_be_focused()  # scrolled to: on a phone the card is below the fold
    for box in (start, end):
        expect(box).to_have_attribute("aria-invalid", "true")
        expect(box).to_have_accessible_description(f"Nothing was downloaded: {REVERSED}")
        assert box.evaluate("(e) => getComputedStyle(e).borderTopColor") == "rgb(180, 35, 24)"
    expect(feedback.get_by_label("Rating")).not_to_have_attribute("aria-invalid", "true")
    expect(alert).to_be_in_viewport()
    expect(start).to_be_in_viewport()
    expect(start).to_have_value("2026-12-05")
    expect(feedback.get_by_label("Add a BOM for Excel (CSV)")).to_be_checked()
    expect(page.locator("#xd-from")).to_have_value("")
    expect(page.get_by_role("alert")).to_have_count(1)
    _no_sideways_scroll(page, width)
    page.screenshot(path=str(SCREENSHOTS / f"export-error-{width}.png"), full_page=True)
    page.screenshot(path=str(SCREENSHOTS / f"export-error-view-{width}.png"))


@SIZES
def test_an_unknown_reason_is_refused_at_the_reason_box(exports, width, height):
    """Reason "bogus" downloaded an empty CSV; it is refused listing the reasons."""
    page, feedback = exports(width, height, settings={"feedback_reasons": ["stale"]})
    feedback.get_by_label("Reason").fill("bogus")
    feedback.get_by_role("button", name="Download CSV").click()
    message = 'Nothing was downloaded: "Reason" must be one of Stale (stale).'
    expect(feedback.get_by_role("alert")).to_have_text(message)
    reason = feedback.get_by_label("Reason")
    expect(reason).to_be_focused()
    expect(reason).to_have_attribute("aria-invalid", "true")
    expect(reason).to_have_accessible_description(message)
    expect(reason).to_be_in_viewport()
    _no_sideways_scroll(page, width)
    page.screenshot(path=str(SCREENSHOTS / f"export-reason-error-{width}.png"))


@SIZES
def test_a_download_after_a_refused_export_clears_its_error(exports, width, height):
    """New-user finding: after a refused export, correcting the form and downloading left
    "Nothing was downloaded: ..." on the page, though the file had come. The download
    clears it (the page stays: a download does not load a page); a refusal afterwards
    shows its own error again."""
    page, feedback = exports(width, height)
    _refuse_reversed_dates(feedback)

    _download_corrected_csv(page, feedback)
    expect(page.get_by_role("alert")).to_have_count(0)
    expect(page.get_by_text("Nothing was downloaded")).to_have_count(0)
    expect(page.locator("[aria-invalid]")).to_have_count(0)  # no mark left on the fields
    expect(feedback.locator("#xf-from")).to_have_value("2026-12-31")  # the corrected form stays
    expect(feedback.locator("#xf-to")).to_have_value("2026-12-31")
    _no_sideways_scroll(page, width)
    page.screenshot(path=str(SCREENSHOTS / f"export-error-cleared-{width}.png"), full_page=True)

    feedback.locator("#xf-to").fill("2026-01-01")
    feedback.get_by_role("button", name="Download JSONL").click()
    expect(feedback.get_by_role("alert")).to_contain_text(REVERSED)
    expect(page.get_by_role("alert")).to_have_count(1)


def test_without_javascript_the_corrected_export_still_downloads(exports):
    """The forms are plain GET forms: without JavaScript a corrected export downloads as
    before (its old error stays on the page: nothing but a script can take it out)."""
    page, feedback = exports(java_script_enabled=False)
    _refuse_reversed_dates(feedback)
    _download_corrected_csv(page, feedback)
