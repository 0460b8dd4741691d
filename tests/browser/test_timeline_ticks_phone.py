"""On a phone the timeline's time axis shows labels that do not run into each other
(new-user finding: at 390 px "0 ms 11 h 18 min 22 h 37 min 33 h 56 min 45 h 15 min" read
as one line): every other tick's label is hidden, each keeps its place on the axis.
Screenshots at 390 and 1280 px."""

from __future__ import annotations

import pytest

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [390, 1280])
def test_the_shown_tick_labels_keep_apart(new_page, make, width):
    ws = make.workspace()
    make.user(ws, username="tia.ticks")
    run = make.run(ws, tool_calls=[
        {"id": "c1", "tool_name": "lookup", "status": "completed", "arguments": {}, "output": "ok",
         "started_at": "2026-01-01T00:00:00Z", "completed_at": "2026-01-01T01:00:00Z"},
        {"id": "c2", "tool_name": "fetch", "status": "completed", "arguments": {}, "output": "ok",
         "started_at": "2026-01-02T20:00:00Z", "completed_at": "2026-01-02T21:15:00Z"}])
    page = new_page(width, 900)
    log_in(page, "tia.ticks")
    page.goto(f"/runs/{run.id}")
    boxes = page.evaluate("""() => [...document.querySelectorAll('.tl-ticks > span')]
        .filter(s => getComputedStyle(s).visibility !== 'hidden')
        .map(s => { const r = s.getBoundingClientRect(); return [s.textContent, r.left, r.right]; })""")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".tl-axis").screenshot(path=str(SCREENSHOTS / f"timeline-ticks-{width}.png"))
    assert boxes[0][0] == "0 ms" and len(boxes) >= 3, boxes
    gaps = [right_of_next[1] - this[2] for this, right_of_next in zip(boxes, boxes[1:])]
    assert min(gaps) >= 8, boxes  # at least 8 px between two shown labels
