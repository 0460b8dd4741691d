"""The case list's refused filter in a real browser (filters review, 2026-12-03: the cases
page answered a bad filter with the site's bare "Please check what was sent (400)" page).
Now, as on the runs and triage lists, the summary stands in the list's place, the field
is marked and takes the focus; fixing it and searching again brings the cases back and
takes the marks away. A workspace's short name filters the list."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role
from reviewapp.models import Membership

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser

REASON = "'not a category' is no fault category of your workspaces nor of any case"


@pytest.mark.parametrize("width,height", [(390, 844), (1280, 900)])
def test_a_bad_category_is_named_in_the_lists_place_and_marked_at_its_field(new_page, make, width, height):
    ws, other = make.workspace(slug="payments"), make.workspace(slug="search-team", name="Search team")
    user = make.user(ws, Role.REVIEWER, username="rita")
    make.session.add(Membership(user_id=user.id, workspace_id=other.id, role="reviewer"))
    make.session.commit()
    make.case(ws, title="Pool exhausted after failover")
    make.case(other, title="Index rebuild stalls")
    page = new_page(width, height)
    log_in(page, "rita")
    page.goto("/cases/")
    page.locator("#c-cat").fill("not a category")
    page.get_by_role("button", name="Search").click()
    page.wait_for_selector("#cases-table p.error")
    page.wait_for_function("() => document.activeElement && document.activeElement.id === 'c-cat'")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"cases_filter_refused_{width}.png"), full_page=True)
    table = page.locator("#cases-table").inner_text()
    assert table.startswith("Some filters are not valid; fix the fields marked above: Category: " + REASON)
    assert page.locator("#c-cat").get_attribute("aria-invalid") == "true"
    assert REASON in page.locator("#c-cat-error").inner_text()
    assert "Pool exhausted" not in page.locator("main").inner_text()
    assert page.locator("#messages").inner_text().strip() == ""
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    page.locator("#c-cat").fill("")
    page.get_by_role("button", name="Search").click()
    page.wait_for_selector("text=Pool exhausted after failover")
    assert page.locator("#c-cat").get_attribute("aria-invalid") is None
    page.goto("/cases/?workspace=search-team")
    assert "Index rebuild stalls" in page.locator("#cases-table").inner_text()
    assert "Pool exhausted" not in page.locator("#cases-table").inner_text()
    assert page.locator("#c-ws").input_value() == str(other.id)
