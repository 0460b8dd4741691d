"""The case editor's first Save button (there so that Enter in a field saves rather than
pressing a 'Use "X"' proposal button) is hidden: a class rule showed it (new-user
finding: a visible 68 x 39 px Save that the keyboard and screen readers skip)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from reviewapp.actors import Role
from reviewapp.services import feedback

from .conftest import log_in

pytestmark = pytest.mark.browser


def test_the_enter_key_save_button_is_not_shown(new_page, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lena.lead")
    run = make.run(ws)
    case_id = feedback.set_run_verdict(session, make.actor(lead), run.session.session_id,
                                       run.run_id, "useful").case_id
    page = new_page(1280, 900)
    log_in(page, "lena.lead")
    page.goto(f"/cases/{case_id}/edit")
    hidden = page.locator("form button[hidden]")
    expect(hidden).to_have_count(1)
    expect(hidden).to_be_hidden()
    expect(page.get_by_role("button", name="Save")).to_have_count(1)
