"""A refused export shows its error in its own form's card, with that form's choices and
BOM tick kept and the other forms left empty, readable at 1280 and 390 px (screenshots)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from reviewapp.actors import Role

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


REVERSED = '"Created from" must not be after "to".'


@pytest.mark.parametrize("width,height", [(1280, 800), (390, 844)])
def test_a_refused_feedback_export_keeps_its_form(new_page, make, width, height):
    """The refusal names the fields by the labels the form shows (new-user finding
    2026-12-03: it read "date_from: must not be after date_to"), both dates are marked
    invalid, red and described by the message, and the first one has the focus."""
    ws = make.workspace()
    admin = make.user(ws, Role.ADMIN)
    page = new_page()
    page.set_viewport_size({"width": width, "height": height})
    log_in(page, admin.username)
    page.goto("/exports/")
    feedback = page.locator("section", has=page.locator("#x-feedback"))
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
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    page.screenshot(path=str(SCREENSHOTS / f"export-error-{width}.png"), full_page=True)
    page.screenshot(path=str(SCREENSHOTS / f"export-error-view-{width}.png"))


@pytest.mark.parametrize("width,height", [(1280, 800), (390, 844)])
def test_an_unknown_reason_is_refused_at_the_reason_box(new_page, make, width, height):
    """Reason "bogus" downloaded an empty CSV; it is refused listing the reasons."""
    ws = make.workspace(feedback_reasons=["stale"])
    admin = make.user(ws, Role.ADMIN)
    page = new_page()
    page.set_viewport_size({"width": width, "height": height})
    log_in(page, admin.username)
    page.goto("/exports/")
    feedback = page.locator("section", has=page.locator("#x-feedback"))
    feedback.get_by_label("Reason").fill("bogus")
    feedback.get_by_role("button", name="Download CSV").click()
    message = 'Nothing was downloaded: "Reason" must be one of Stale (stale).'
    expect(feedback.get_by_role("alert")).to_have_text(message)
    reason = feedback.get_by_label("Reason")
    expect(reason).to_be_focused()
    expect(reason).to_have_attribute("aria-invalid", "true")
    expect(reason).to_have_accessible_description(message)
    expect(reason).to_be_in_viewport()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    page.screenshot(path=str(SCREENSHOTS / f"export-reason-error-{width}.png"))


@pytest.mark.parametrize("width,height", [(1280, 800), (390, 844)])
def test_a_download_after_a_refused_export_clears_its_error(new_page, make, width, height):
    """New-user finding: after a refused export, correcting the form and downloading left
    "Nothing was downloaded: ..." on the page, though the file had come. The download
    clears it (the page stays: a download does not load a page); a refusal afterwards
    shows its own error again."""
    ws = make.workspace()
    admin = make.user(ws, Role.ADMIN)
    page = new_page()
    page.set_viewport_size({"width": width, "height": height})
    log_in(page, admin.username)
    page.goto("/exports/")
    feedback = page.locator("section", has=page.locator("#x-feedback"))
    feedback.locator("#xf-from").fill("2026-12-31")
    feedback.locator("#xf-to").fill("2026-01-01")
    feedback.get_by_role("button", name="Download CSV").click()
    expect(feedback.get_by_role("alert")).to_contain_text(REVERSED)

    feedback.locator("#xf-to").fill("2026-12-31")
    with page.expect_download() as info:
        feedback.get_by_role("button", name="Download CSV").click()
    assert info.value.suggested_filename.endswith(".csv")
    expect(page.get_by_role("alert")).to_have_count(0)
    expect(page.get_by_text("Nothing was downloaded")).to_have_count(0)
    expect(page.locator("[aria-invalid]")).to_have_count(0)  # no mark left on the fields
    expect(feedback.locator("#xf-from")).to_have_value("2026-12-31")  # the corrected form stays
    expect(feedback.locator("#xf-to")).to_have_value("2026-12-31")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    page.screenshot(path=str(SCREENSHOTS / f"export-error-cleared-{width}.png"), full_page=True)

    feedback.locator("#xf-to").fill("2026-01-01")
    feedback.get_by_role("button", name="Download JSONL").click()
    expect(feedback.get_by_role("alert")).to_contain_text(REVERSED)
    expect(page.get_by_role("alert")).to_have_count(1)


def test_without_javascript_the_corrected_export_still_downloads(new_page, make):
    """The forms are plain GET forms: without JavaScript a corrected export downloads as
    before (its old error stays on the page: nothing but a script can take it out)."""
    ws = make.workspace()
    admin = make.user(ws, Role.ADMIN)
    page = new_page(java_script_enabled=False)
    log_in(page, admin.username)
    page.goto("/exports/")
    feedback = page.locator("section", has=page.locator("#x-feedback"))
    feedback.locator("#xf-from").fill("2026-12-31")
    feedback.locator("#xf-to").fill("2026-01-01")
    feedback.get_by_role("button", name="Download CSV").click()
    expect(feedback.get_by_role("alert")).to_contain_text(REVERSED)
    feedback.locator("#xf-to").fill("2026-12-31")
    with page.expect_download() as info:
        feedback.get_by_role("button", name="Download CSV").click()
    assert info.value.suggested_filename.endswith(".csv")
