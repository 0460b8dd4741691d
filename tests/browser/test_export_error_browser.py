"""A refused export shows its error in its own form's card, with that form's choices and
BOM tick kept and the other forms left empty, readable at 1280 and 390 px (screenshots)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from reviewapp.actors import Role

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width,height", [(1280, 800), (390, 844)])
def test_a_refused_feedback_export_keeps_its_form(new_page, make, width, height):
    ws = make.workspace()
    admin = make.user(ws, Role.ADMIN)
    page = new_page()
    page.set_viewport_size({"width": width, "height": height})
    log_in(page, admin.username)
    page.goto("/exports/")
    feedback = page.locator("section", has=page.locator("#x-feedback"))
    feedback.locator("#xf-from").fill("2026-12-31")
    feedback.locator("#xf-to").fill("2026-01-01")
    feedback.get_by_label("Add a BOM for Excel (CSV)").check()
    feedback.get_by_role("button", name="Download CSV").click()
    alert = feedback.get_by_role("alert")
    expect(alert).to_contain_text("date_from: must not be after date_to")
    expect(alert).to_be_focused()  # scrolled to: on a phone the card is below the fold
    expect(alert).to_be_in_viewport()
    expect(feedback.locator("#xf-from")).to_have_value("2026-12-31")
    expect(feedback.get_by_label("Add a BOM for Excel (CSV)")).to_be_checked()
    expect(page.locator("#xd-from")).to_have_value("")
    expect(page.get_by_role("alert")).to_have_count(1)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    page.screenshot(path=str(SCREENSHOTS / f"export-error-{width}.png"), full_page=True)


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
    expect(feedback.get_by_role("alert")).to_contain_text("date_from: must not be after date_to")

    feedback.locator("#xf-to").fill("2026-12-31")
    with page.expect_download() as info:
        feedback.get_by_role("button", name="Download CSV").click()
    assert info.value.suggested_filename.endswith(".csv")
    expect(page.get_by_role("alert")).to_have_count(0)
    expect(page.get_by_text("Nothing was downloaded")).to_have_count(0)
    expect(feedback.locator("#xf-from")).to_have_value("2026-12-31")  # the corrected form stays
    expect(feedback.locator("#xf-to")).to_have_value("2026-12-31")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    page.screenshot(path=str(SCREENSHOTS / f"export-error-cleared-{width}.png"), full_page=True)

    feedback.locator("#xf-to").fill("2026-01-01")
    feedback.get_by_role("button", name="Download JSONL").click()
    expect(feedback.get_by_role("alert")).to_contain_text("date_from: must not be after date_to")
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
    expect(feedback.get_by_role("alert")).to_contain_text("date_from: must not be after date_to")
    feedback.locator("#xf-to").fill("2026-12-31")
    with page.expect_download() as info:
        feedback.get_by_role("button", name="Download CSV").click()
    assert info.value.suggested_filename.endswith(".csv")
