"""A lead works the queue in a real browser; an admin downloads a CSV (issue 7)."""

from __future__ import annotations

import csv
import io

import pytest

from reviewapp.actors import Role
from reviewapp.models import TriageItem

from .conftest import log_in

pytestmark = pytest.mark.browser


def test_lead_triages_an_item_and_admin_downloads_a_csv(new_page, make, session, tmp_path):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lena")
    admin = make.user(ws, Role.ADMIN, username="ada")
    run = make.run(ws, query="Why is checkout-service returning 502s? 为什么")
    item = make.triage_item(run)
    make.case(ws, run=run, title="=cmd|' /C calc'!A0", root_cause="数据库\n🚀 הפריסה")

    page = new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    log_in(page, "lena")
    page.goto("/triage/")
    row = page.locator(f"#triage-row-{item.id}")
    assert "为什么" in row.inner_text()

    # htmx: assign swaps only the row, which comes back with the new version.
    row.locator("select[name=assignee_id]").select_option(label="lena")
    row.get_by_role("button", name="Assign").click()
    page.wait_for_selector(f"#triage-row-{item.id} .row-notice")
    assert "Assignment saved." in page.locator(f"#triage-row-{item.id}").inner_text()
    assert page.locator(f"#triage-row-{item.id} input[name=items]").get_attribute("value") == f"{item.id}:2"

    page.locator(f"#triage-row-{item.id}").get_by_role("button", name="Resolve").click()
    page.wait_for_selector(f"#triage-row-{item.id} .badge-triage-resolved")
    # The state tabs recount without a reload (they were stale before).
    # (queried afresh on each poll: the swap replaces the nav element)
    page.wait_for_function("""() => [...document.querySelectorAll('#triage-tabs a')]
        .some(a => a.textContent.includes('Resolved') && a.querySelector('.count').textContent.trim() === '1')""")
    assert page.locator("#triage-tabs a", has_text="New").locator(".count").inner_text() == "0"

    # The item page (plain form POST + 303): set the fault category.
    page.goto(f"/triage/{item.id}")
    # A select of the categories, found by its label and worked by keyboard alone.
    page.get_by_label("Fault category").focus()
    page.keyboard.type("Wrong root")
    assert page.locator("#fault_category").input_value() == "WRONG_ROOT_CAUSE"
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_selector("#category-status:not(:empty)")  # "saved", said at the category (app.js)
    assert page.locator("#category-status").inner_text() == "Fault category saved."
    assert page.locator("#fault_category").input_value() == "WRONG_ROOT_CAUSE"
    assert errors == []

    session.rollback()  # end the test's read snapshot; the server wrote in its own sessions
    stored = session.get(TriageItem, item.id)
    assert (stored.state, stored.assignee_id, stored.fault_category, stored.version) == (
        "resolved", lead.id, "WRONG_ROOT_CAUSE", 4)

    page = new_page(accept_downloads=True)
    log_in(page, admin.username)
    page.goto("/exports/")
    with page.expect_download() as info:
        page.locator("#x-cases").locator("xpath=..").get_by_role("button", name="Download CSV").click()
    target = tmp_path / info.value.suggested_filename
    info.value.save_as(target)
    assert target.name.startswith("cases-") and target.suffix == ".csv"
    rows = list(csv.DictReader(io.StringIO(target.read_text("utf-8"), newline="")))
    assert [(r["title"], r["root_cause"], r["run_id"]) for r in rows] == [
        ("'=cmd|' /C calc'!A0", "数据库\n🚀 הפריסה", run.run_id)]
