"""The run page's timeline in chunks (issue 18) in headless Chromium: "Show the next N of
M tool calls" loads the next rows in place, the focus moves to the first new row, a
loaded row rates like the others; a failed load says so at the control; without
JavaScript the control is a link to the page with the next rows; a link to a call past
the first chunk lands on its row. Screenshots at 1280 and 390 px."""

from __future__ import annotations

import pytest

from reviewapp.models import Feedback

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


def _calls(n):
    return [{"id": f"call-{i}", "tool_name": f"lookup_{i % 7}",
             "status": "failed" if i % 9 == 0 else "completed",
             "arguments": {"i": i}, "output": f"result {i}", "error": "Error: timeout" if i % 9 == 0 else None,
             "started_at": f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z",
             "completed_at": f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}.700000Z"} for i in range(n)]


@pytest.fixture
def world(make):
    ws = make.workspace()
    user = make.user(ws, username="cara.chunks")
    run = make.run(ws, tool_calls=_calls(130))
    return {"run": run, "user": user}


def test_show_the_next_calls_with_the_keyboard_then_rate_a_loaded_row(new_page, world, session):
    run = world["run"]
    page = new_page(1280, 900)
    log_in(page, "cara.chunks")
    page.goto(f"/runs/{run.id}")
    assert page.locator(".tl-row").count() == 50
    more = page.locator("[data-more-calls] a")
    assert more.inner_text() == "Show the remaining 80 tool calls"
    # The failed calls past row 50 are named in the summary.
    assert page.locator(".hidden-failed").inner_text() == "Show the 9 failed calls not shown yet"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".run-header").screenshot(path=str(SCREENSHOTS / "timeline-chunks-header-1280.png"))
    more.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "timeline-chunks-1280.png"))
    more.focus()
    page.keyboard.press("Enter")
    page.locator("#call-call-129").wait_for()
    assert page.locator(".tl-row").count() == 130
    assert page.locator("[data-more-calls]").count() == 0
    # The focus moved to the first new row (its summary: Enter opens it).
    assert page.evaluate("document.activeElement.closest('.tl-row').id") == "call-call-50"
    assert page.locator("#call-call-50 .tl-index").inner_text() == "51"
    # A loaded row is a full row: its details open, its thumbs save (CSRF token included).
    row = page.locator("#call-call-99")
    row.locator("summary").click()
    row.locator(".tool-call-detail").wait_for()
    assert '"i": 99' in row.locator(".tool-call-detail").inner_text()
    row.locator('.thumb[data-rating="negative"]').click()
    page.locator('#call-call-99 .thumb[data-rating="negative"][aria-pressed="true"]').wait_for()
    session.rollback()
    assert [(f.subject_key, f.rating) for f in session.query(Feedback).filter_by(author_id=world["user"].id)] == [
        ("call-99", "negative")]


def test_a_failed_load_says_so_at_the_control_and_can_be_tried_again(new_page, world):
    run = world["run"]
    page = new_page(1280, 900)
    log_in(page, "cara.chunks")
    page.goto(f"/runs/{run.id}")
    page.route("**/timeline/calls?**", lambda route: route.fulfill(status=500, body="broken"))
    page.locator("[data-more-calls] a").click()
    error = page.locator(".tl-more-error")
    error.wait_for()
    assert error.inner_text() == "The next tool calls could not be loaded (error 500). Try again, or reload the page."
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("[data-more-calls]").screenshot(path=str(SCREENSHOTS / "timeline-chunks-error-1280.png"))
    assert page.locator(".tl-row").count() == 50
    page.unroute("**/timeline/calls?**")
    page.locator("[data-more-calls] a").click()
    page.locator("#call-call-129").wait_for()
    assert page.locator(".tl-row").count() == 130


def test_without_javascript_the_control_is_a_link_to_the_next_rows(new_page, world):
    run = world["run"]
    page = new_page(390, 844, java_script_enabled=False)
    log_in(page, "cara.chunks")
    page.goto(f"/runs/{run.id}")
    assert page.locator(".tl-row").count() == 50
    more = page.locator("[data-more-calls] a")
    more.scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "timeline-chunks-390.png"))
    box = more.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390  # fits the phone's width
    more.click()
    page.wait_for_url(f"**/runs/{run.id}?calls_after=call-49#call-call-50")
    assert page.locator(".tl-row").count() == 130
    assert page.locator("[data-more-calls]").count() == 0


def test_a_link_to_a_call_past_the_first_chunk_lands_on_its_row(new_page, world):
    run = world["run"]
    page = new_page(1280, 900)
    log_in(page, "cara.chunks")
    page.goto(f"/runs/{run.id}/tool-calls/call-120")
    page.get_by_role("link", name="← Back to the run").click()
    page.wait_for_url(f"**/runs/{run.id}?call=call-120#call-call-120")
    row = page.locator("#call-call-120")
    assert row.locator(".tl-index").inner_text() == "121"
    top = row.evaluate("el => el.getBoundingClientRect().top")
    assert -1 < top < 900  # scrolled to it (its top at the window's, give or take a subpixel)
    # The summary's link to the failed calls not shown yet lands on the first of them.
    page.goto(f"/runs/{run.id}")
    page.locator(".hidden-failed").click()
    page.wait_for_url(f"**/runs/{run.id}?call=call-126#call-call-54")
    assert page.locator(".tl-row").count() == 127
    top = page.locator("#call-call-54").evaluate("el => el.getBoundingClientRect().top")
    assert -1 < top < 900


def test_the_failed_calls_not_shown_yet_follow_the_loaded_chunks(new_page, make):
    """Finding (UI walk): after "Show the next" the header's "Show the N failed calls not
    shown yet" kept its first count. It counts the failed calls still below the rows
    shown; the header's "(N failed)" stays the whole run's count."""
    ws = make.workspace()
    make.user(ws, username="cara.chunks")
    run = make.run(ws, tool_calls=_calls(300))
    failed = [i for i in range(300) if i % 9 == 0]  # 34 failed calls
    page = new_page(1280, 900)
    log_in(page, "cara.chunks")
    page.goto(f"/runs/{run.id}")
    hidden = page.locator(".hidden-failed")
    assert hidden.inner_text() == f"Show the {sum(i >= 50 for i in failed)} failed calls not shown yet"  # 28
    page.locator("[data-more-calls] a").click()
    page.locator("#call-call-249").wait_for()
    assert page.locator(".tl-row").count() == 250
    assert hidden.inner_text() == f"Show the {sum(i >= 250 for i in failed)} failed calls not shown yet"  # 6
    assert hidden.get_attribute("href").endswith("?call=call-297#call-call-252")
    assert page.locator(".failed-count").inner_text() == f"({len(failed)} failed)"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".run-header").screenshot(path=str(SCREENSHOTS / "timeline-chunks-failed-after-chunk-1280.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    page.locator(".run-header").screenshot(path=str(SCREENSHOTS / "timeline-chunks-failed-after-chunk-390.png"))
    page.set_viewport_size({"width": 1280, "height": 900})
    page.locator("[data-more-calls] a").click()
    page.locator("#call-call-299").wait_for()
    assert page.locator(".hidden-failed").count() == 0
    assert page.locator(".failed-count").inner_text() == f"({len(failed)} failed)"
