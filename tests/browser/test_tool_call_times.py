"""A tool call's times show seconds and milliseconds (new-user finding: an opened
timeline row said "Started 2026-01-01 00:00" and "Ended 2026-01-01 00:00" for a call of
450 ms, so its order against its neighbours could not be read). Shown as the rest of the
page: in the viewer's zone with its offset (JavaScript), else in the workspace's zone
with its offset, written alike ("UTC+01:00"), like the run header (user-walk finding: they read UTC while the header read the
workspace's zone); one filter (``zoned_time`` with ``precise``) for both. Screenshots at
1280 and 390 px."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.fixture
def run(make):
    ws = make.workspace(time_zone="America/New_York")  # not the browser's (Europe/Berlin)
    make.user(ws, username="tim.times")
    return make.run(ws, tool_calls=[
        {"id": "c1", "tool_name": "lookup", "status": "completed", "arguments": {}, "output": "ok",
         "started_at": "2026-01-01T10:15:05.250Z", "completed_at": "2026-01-01T10:15:05.700Z"},
        {"id": "c2", "tool_name": "fetch", "status": "completed", "arguments": {}, "output": "ok",
         "started_at": "2026-01-01T10:15:05.800Z", "completed_at": "2026-01-01T10:15:07.050Z"}])


@pytest.mark.parametrize("width, js", [(1280, True), (390, True), (390, False)])
def test_an_opened_call_shows_its_times_to_the_millisecond(new_page, run, width, js):
    page = new_page(width, 900, java_script_enabled=js, timezone_id="Europe/Berlin")
    log_in(page, "tim.times")
    if js:
        page.goto(f"/runs/{run.id}")
        row = page.locator("#call-c1")
        row.locator("summary").click()
        detail = row.locator(".tool-call-detail")
        detail.wait_for()
        zone = " UTC+01:00"
        expect(detail.locator("time").first).to_have_text("2026-01-01 11:15:05.250" + zone)
        # The header's times read in the same zone (both enhanced by app.js).
        expect(page.locator(".run-header time").first).to_have_text(re.compile(r" UTC\+01:00$"))
    else:
        page.goto(f"/runs/{run.id}")
        expect(page.locator(".run-header time").first).to_have_text(re.compile(r" UTC-05:00$"))
        page.goto(f"/runs/{run.id}/tool-calls/c1")
        detail = page.locator(".tool-call-detail")
        zone = " UTC-05:00"
        expect(detail.locator("time").first).to_have_text("2026-01-01 05:15:05.250" + zone)
    times = detail.locator("time")
    hour = "11" if js else "05"
    assert times.nth(1).inner_text() == f"2026-01-01 {hour}:15:05.700{zone}"
    assert "450 ms" in detail.inner_text()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"tool-call-times-{width}{'' if js else '-nojs'}.png"))
