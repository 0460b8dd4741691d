"""Deactivating an account and revoking an ingest token ask first, as removing a member
does (user-walk finding: one click did it). Each button opens a question on its page
(server-rendered: it works without JavaScript too); "Cancel" changes nothing, the
question's own button does it. The focus starts on "Cancel" (a walk found it on the red
button: Enter confirmed), so Enter cancels and Shift+Tab, Enter confirms. Screenshots at
1280 and 390 px."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Actor, Role
from reviewapp.models import IngestToken, User
from reviewapp.services import admin

from .conftest import SCREENSHOTS, focused, log_in, wait_focused

pytestmark = pytest.mark.browser


def _read(session, stmt):
    session.rollback()
    value = session.scalar(stmt)
    session.rollback()
    return value


def _shoot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"admin-{name}.png"))


@pytest.mark.parametrize("width, js", [(1280, True), (390, True), (390, False)])
def test_deactivate_asks_first_then_cancel_keeps_and_confirm_deactivates(new_page, make, session,
                                                                         width, js):
    ws = make.workspace(slug="acme", name="ACME on-call")
    make.user(ws, Role.ADMIN, username="ada")
    bob = make.user(ws, username="bob.reviewer")
    active = select(User.active).where(User.id == bob.id)
    page = new_page(width, 900, java_script_enabled=js)
    log_in(page, "ada")
    page.goto(f"/admin/{ws.id}/members")
    page.locator(f"#member-{bob.id}").get_by_role("button", name="Deactivate account").click()
    question = page.get_by_role("region", name="Deactivate bob.reviewer’s account?")
    question.wait_for()
    assert _read(session, active) is True  # nothing changed yet
    assert "cannot log in" in question.inner_text()
    _shoot(page, f"deactivate-confirm-{width}{'' if js else '-nojs'}")
    box = question.get_by_role("button", name="Deactivate bob.reviewer").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width
    # The focus is on Cancel: Enter cancels.
    wait_focused(page, "a: Cancel")
    assert focused(page) == "a: Cancel"
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/admin/{ws.id}/members")
    page.locator(f"#member-{bob.id}").get_by_role("button", name="Deactivate account").wait_for()
    assert _read(session, active) is True
    # Again, and this time confirm with the keyboard: Shift+Tab to the red button, Enter.
    page.locator(f"#member-{bob.id}").get_by_role("button", name="Deactivate account").click()
    page.get_by_role("region", name="Deactivate bob.reviewer’s account?").wait_for()
    wait_focused(page, "a: Cancel")
    assert focused(page) == "a: Cancel"
    page.keyboard.press("Shift+Tab")
    assert focused(page) == "button: Deactivate bob.reviewer"
    page.keyboard.press("Enter")
    page.wait_for_selector(".flash-success")
    row = page.locator(f"#member-{bob.id}")
    row.get_by_role("button", name="Reactivate account").wait_for()
    assert _read(session, active) is False


@pytest.mark.parametrize("width, js", [(1280, True), (390, True), (390, False)])
def test_revoke_asks_first_then_cancel_keeps_and_confirm_revokes(new_page, make, session, width, js):
    ws = make.workspace(slug="acme", name="ACME on-call")
    make.user(ws, Role.ADMIN, username="ada")
    token = admin.create_token(session, Actor.system_actor(), ws.id, "agent-prod").token
    revoked = select(IngestToken.revoked).where(IngestToken.id == token.id)
    page = new_page(width, 900, java_script_enabled=js)
    log_in(page, "ada")
    page.goto(f"/admin/{ws.id}/tokens")
    page.locator(f"#token-{token.id}").get_by_role("button", name="Revoke").click()
    question = page.get_by_role("region", name="Revoke the token “agent-prod”?")
    question.wait_for()
    assert _read(session, revoked) is False
    assert "401" in question.inner_text()
    _shoot(page, f"revoke-confirm-{width}{'' if js else '-nojs'}")
    box = question.get_by_role("button", name="Revoke agent-prod").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width
    wait_focused(page, "a: Cancel")
    assert focused(page) == "a: Cancel"
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/admin/{ws.id}/tokens")
    page.locator(f"#token-{token.id}").get_by_role("button", name="Revoke").wait_for()
    assert _read(session, revoked) is False
    page.locator(f"#token-{token.id}").get_by_role("button", name="Revoke").click()
    page.get_by_role("region", name="Revoke the token “agent-prod”?").wait_for()
    wait_focused(page, "a: Cancel")
    assert focused(page) == "a: Cancel"
    page.keyboard.press("Shift+Tab")
    assert focused(page) == "button: Revoke agent-prod"
    page.keyboard.press("Enter")
    page.wait_for_selector(".flash-success")
    page.locator(f"#token-{token.id}", has_text="revoked").wait_for()
    assert _read(session, revoked) is True
