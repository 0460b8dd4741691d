"""Removing a member asks first (new-user finding: one click on "Remove from workspace"
removed the membership at once). The button opens a confirmation on the members page
(server-rendered, so it works without JavaScript too); "Cancel" keeps the member, the
confirmation's own button removes; the focus starts on "Cancel", so Enter cancels. A POST
without the confirmation removes nothing.
Screenshots at 1280 and 390 px."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import Membership

from .conftest import SCREENSHOTS, focused, log_in, wait_focused

pytestmark = pytest.mark.browser


def _members(session, ws):
    session.rollback()
    ids = set(session.scalars(select(Membership.user_id).where(Membership.workspace_id == ws.id)))
    session.rollback()
    return ids


@pytest.mark.parametrize("width, js", [(1280, True), (390, True), (390, False)])
def test_remove_member_asks_first_then_cancel_keeps_and_confirm_removes(new_page, make, session, width, js):
    ws = make.workspace(slug="acme", name="ACME on-call")
    ada = make.user(ws, Role.ADMIN, username="ada")
    bob = make.user(ws, username="bob.reviewer")
    page = new_page(width, 900, java_script_enabled=js)
    log_in(page, "ada")
    page.goto(f"/admin/{ws.id}/members")
    page.locator(f"#member-{bob.id}").get_by_role("button", name="Remove from workspace").click()
    question = page.get_by_role("region", name="Remove bob.reviewer from ACME on-call?")
    question.wait_for()
    assert _members(session, ws) == {ada.id, bob.id}  # nothing removed yet
    assert "keeps the account" in question.inner_text()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"admin-remove-member-confirm-{width}{'' if js else '-nojs'}.png"))
    box = question.get_by_role("button", name="Remove bob.reviewer").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width
    # The focus starts on Cancel, not on the red button: Enter cancels.
    wait_focused(page, "a: Cancel")
    assert focused(page) == "a: Cancel"
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/admin/{ws.id}/members")
    page.locator(f"#member-{bob.id}").get_by_role("button", name="Remove from workspace").wait_for()
    assert _members(session, ws) == {ada.id, bob.id}
    # Again, and this time confirm (keyboard: Shift+Tab to the red button, Enter).
    page.locator(f"#member-{bob.id}").get_by_role("button", name="Remove from workspace").click()
    page.get_by_role("region", name="Remove bob.reviewer from ACME on-call?").wait_for()
    wait_focused(page, "a: Cancel")  # autofocus first, then the key
    page.keyboard.press("Shift+Tab")
    assert focused(page) == "button: Remove bob.reviewer"
    page.keyboard.press("Enter")
    page.wait_for_selector(".flash-success")
    assert page.locator(f"#member-{bob.id}").count() == 0
    assert _members(session, ws) == {ada.id}


def test_a_post_without_the_confirmation_removes_nothing(new_page, make, session):
    ws = make.workspace(slug="acme", name="ACME on-call")
    ada = make.user(ws, Role.ADMIN, username="ada")
    bob = make.user(ws, username="bob.reviewer")
    page = new_page(1280, 900)
    log_in(page, "ada")
    page.goto(f"/admin/{ws.id}/members")
    token = page.locator("input[name=csrf_token]").first.input_value()
    answer = page.request.post(f"/admin/{ws.id}/members/{bob.id}/remove", form={"csrf_token": token})
    assert answer.status == 200 and "Remove bob.reviewer from ACME on-call?" in answer.text()
    assert _members(session, ws) == {ada.id, bob.id}
