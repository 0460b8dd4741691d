"""An admin runs the workspace in a real browser (issue 15): creates an account, grants
it a role, creates and revokes an ingest token, changes a setting; then the new user
logs in with the one-time password, must choose their own, and works. Screenshots of
the admin pages at 1280 and 390 px go to test-output/screenshots/."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import AuditEvent, IngestToken, Membership, User, Workspace

from .conftest import PASSWORD, SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


def _shoot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"admin-{name}.png"), full_page=True)


def test_admin_manages_the_workspace_and_the_new_user_logs_in(new_page, make, session):
    ws = make.workspace(slug="acme", name="ACME on-call")
    make.user(ws, Role.ADMIN, username="ada")
    page = new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    log_in(page, "ada")

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Admin").click()
    page.get_by_role("link", name="Members").first.click()
    page.wait_for_url(f"**/admin/{ws.id}/members")

    # Create an account (generated one-time password, shown once) ...
    page.fill("#new-username", "nina")
    page.select_option("#new-role", "reviewer")
    page.get_by_role("button", name="Create account").click()
    one_time = page.locator("#ot-pw").input_value()
    assert len(one_time) == 16
    _shoot(page, "members-one-time-1280")
    # ... and grant her a role.
    page.goto(f"/admin/{ws.id}/members")
    assert page.locator("#ot-pw").count() == 0  # shown once
    session.rollback()  # end the test's read snapshot: the server wrote in its own session
    nina_id = session.scalar(select(User.id).where(User.username == "nina"))
    session.rollback()
    row = page.locator(f"#member-{nina_id}")
    row.locator("select[name=role]").select_option("lead")
    row.get_by_role("button", name="Save role").click()
    page.wait_for_selector(".flash-success")
    assert page.locator(f"#role-{nina_id}").input_value() == "lead"

    # A token: created (secret shown once), then revoked.
    page.get_by_role("link", name="Ingest tokens").click()
    page.fill("#token-name", "agent-prod")
    page.get_by_role("button", name="Create token").click()
    secret = page.locator("#nt-secret").input_value()
    assert secret.startswith("rvw_")
    page.get_by_role("button", name="Copy").click()
    page.get_by_role("button", name="Copied").wait_for()
    _shoot(page, "tokens-secret-1280")
    # A reload is a GET of the tokens page (app.js replaced the POST's history entry):
    # no secret, no second token.
    assert page.url.endswith(f"/admin/{ws.id}/tokens")
    with page.expect_response(lambda r: r.url.endswith(f"/admin/{ws.id}/tokens")) as reloaded:
        page.reload()
    assert reloaded.value.request.method == "GET" and reloaded.value.status == 200
    assert page.locator("#nt-secret").count() == 0
    assert page.locator("table.tokens tr", has_text="agent-prod").count() == 1
    page.goto(f"/admin/{ws.id}/tokens")
    token_row = page.locator("table.tokens tr", has_text="agent-prod")
    assert "ada" in token_row.inner_text() and "never" in token_row.inner_text()
    token_row.get_by_role("button", name="Revoke").click()  # asks first
    page.get_by_role("button", name="Revoke agent-prod").click()
    page.wait_for_selector(".flash-success")
    assert "revoked" in page.locator("table.tokens tr", has_text="agent-prod").inner_text()

    # A setting: negative part ratings open triage items.
    page.get_by_role("link", name="Settings").click()
    page.check("#set-triage_negative_targets")
    page.fill("#set-time_zone", "Europe/Berlin")
    page.get_by_role("button", name="Save settings").click()
    page.wait_for_selector(".flash-success")
    _shoot(page, "settings-1280")
    page.get_by_role("link", name="Audit log").click()
    log_text = page.locator("table.audit").inner_text()
    for label in ("Account created", "Role changed", "Ingest token created", "Ingest token revoked",
                  "Settings changed"):
        assert label in log_text
    assert secret not in page.content() and one_time not in page.content()
    _shoot(page, "audit-1280")

    # The phone width: the same pages, nothing cut off.
    phone = new_page(width=390, height=844)
    log_in(phone, "ada")
    for name in ("members", "tokens", "settings", "audit"):
        phone.goto(f"/admin/{ws.id}/{name}")
        wide = phone.evaluate("document.documentElement.scrollWidth")
        assert wide <= 390 + 1, (name, wide)
        _shoot(phone, f"{name}-390")

    # The new user logs in with the one-time password and must choose her own first.
    nina = new_page()
    nina.goto("/login")
    nina.fill("#username", "nina")
    nina.fill("#password", one_time)
    nina.click("button[type=submit]")
    nina.wait_for_url("**/account/")
    assert "Choose your own" in nina.content()
    # A wrong current password: the reason beside the field, under its label (no field code).
    nina.fill("#current_password", "not-the-one-time")
    nina.fill("#new_password", PASSWORD + "-nina")
    nina.fill("#confirm", PASSWORD + "-nina")
    nina.get_by_role("button", name="Change password").click()
    nina.wait_for_selector("#current_password-error")
    assert nina.inner_text("#current_password-error") == "is not your current password"
    assert "current_password" not in nina.inner_text("main")
    _shoot(nina, "account-error-1280")
    nina.set_viewport_size({"width": 390, "height": 844})
    assert nina.evaluate("document.documentElement.scrollWidth") <= 390 + 1
    _shoot(nina, "account-error-390")
    nina.set_viewport_size({"width": 1280, "height": 900})
    nina.fill("#current_password", one_time)
    nina.fill("#new_password", PASSWORD + "-nina")
    nina.fill("#confirm", PASSWORD + "-nina")
    nina.get_by_role("button", name="Change password").click()
    nina.wait_for_selector(".flash-success")
    _shoot(nina, "account-1280")
    nina.goto("/")
    nav = nina.get_by_role("navigation", name="Main").inner_text()
    assert "Triage" in nav and "Admin" not in nav  # a lead now, not an admin
    assert errors == []

    session.rollback()
    nina_user = session.scalars(select(User).where(User.username == "nina")).one()
    assert nina_user.must_change_password is False and nina_user.last_login_at is not None
    assert session.scalar(select(Membership.role).where(Membership.user_id == nina_user.id)) == "lead"
    assert session.scalars(select(IngestToken.revoked).where(IngestToken.name == "agent-prod")).one()
    assert session.get(Workspace, ws.id).settings["triage_negative_targets"] is True
    assert session.scalar(select(AuditEvent.id).where(AuditEvent.action == "settings.change")) is not None
