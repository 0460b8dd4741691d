"""A live (RUNNING) run's timeline poll keeps what the reader has open (new-user finding:
the 2 s refresh closed the opened tool call and sent the focus to the page body): the
opened call stays open with its details, the focus stays on its summary, and the calls
that arrived meanwhile are appended. Chromium at 1280 and 390 px; screenshots go to
test-output/screenshots/live-timeline-*.png."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from reviewapp.actors import Actor
from reviewapp.services import tool_calls

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser
SYSTEM = Actor.system_actor()


@pytest.mark.parametrize("width", [1280, 390])
def test_a_live_poll_keeps_the_opened_call_open_and_focused(new_page, make, session, width):
    ws = make.workspace(slug="live")
    make.user(ws, username="lena.live")
    run = make.run(ws, status="RUNNING", started_at="2026-01-01T00:00:00Z", tool_calls=[
        {"id": "first", "tool_name": "search", "status": "completed", "arguments": {"q": "kept-open-args"},
         "started_at": "2026-01-01T00:00:00Z", "completed_at": "2026-01-01T00:00:01Z"}])
    page = new_page(width=width, height=900)
    log_in(page, "lena.live")
    page.goto(f"/runs/{run.id}")
    rows = page.locator(".timeline .tl-row")
    assert rows.count() == 1
    summary = rows.first.locator("summary")
    summary.focus()
    page.keyboard.press("Enter")
    body = rows.first.locator(".tl-body")
    body.get_by_text("kept-open-args").wait_for()
    tool_calls.apply_events(session, SYSTEM, ws.id, [
        {"id": "second", "run_id": run.run_id, "event": "started", "tool_name": "fetch",
         "timestamp": "2026-01-01T00:00:02Z"},
        {"id": "third", "run_id": run.run_id, "event": "started", "tool_name": "write",
         "timestamp": "2026-01-01T00:00:03Z"}])
    expect(rows).to_have_count(3, timeout=8000)
    page.wait_for_timeout(300)  # the swap has settled
    assert [rows.nth(i).get_attribute("id") for i in range(3)] == ["call-first", "call-second", "call-third"]
    assert page.evaluate("document.querySelector('#call-first details').open") is True
    assert page.evaluate("document.querySelector('#call-second details').open") is False
    assert "kept-open-args" in page.locator("#call-first .tl-body").inner_text()
    assert page.evaluate("document.activeElement === document.querySelector('#call-first summary')")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"live-timeline-{width}.png"), full_page=True)
