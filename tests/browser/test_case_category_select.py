"""The case editor's "Fault category" is a select of the workspace's labels (new-user walk,
2026-12-04: a text box wanting a code); picking a label and saving stores its code.
Screenshots at 1280 and 390 px in test-output/screenshots/."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import Case
from reviewapp.services import feedback

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1280, 390])
def test_pick_a_category_by_its_label(new_page, make, session, width):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lena.lead")
    run = make.run(ws)
    case_id = feedback.set_run_verdict(session, make.actor(lead), run.session.session_id,
                                       run.run_id, "useful").case_id
    page = new_page(width, 900)
    log_in(page, "lena.lead")
    page.goto(f"/cases/{case_id}/edit")
    field = page.get_by_label("Fault category")
    assert field.evaluate("e => e.tagName") == "SELECT"
    field.select_option(label="Resource exhaustion")
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"case-edit-category-{width}.png"))
    page.get_by_role("button", name="Save").click()
    page.wait_for_url(f"**/cases/{case_id}")
    session.rollback()
    assert session.scalar(select(Case.fault_category).where(Case.case_id == case_id)) == "RESOURCE_EXHAUSTION"
