"""A tool call opens whatever its id (new-user finding: the call with id ``..`` asked for
``/runs/35/tool-calls/%2E%2E``, which the browser normalises to ``/runs/35/``, a 404; its
"Show the arguments and the result" link too). Ids are the agent's free text. Chromium
at 1280 and 390 px, opening each row in place and following each row's fallback link;
screenshots go to test-output/screenshots/odd-call-ids-*.png."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser
IDS = ["..", ".", "a/b", "%2F", "日本語/ü", "../..", "x?y#z&call_id=1"]


@pytest.mark.parametrize("width", [1280, 390])
def test_every_call_opens_in_place_and_by_its_link(new_page, make, width):
    ws = make.workspace(slug="odd")
    make.user(ws, username="olga.odd")
    run = make.run(ws, status="SUCCESS", tool_calls=[
        {"id": call_id, "tool_name": f"tool_{i}", "status": "completed", "output": f"result-of-{i}"}
        for i, call_id in enumerate(IDS)])
    page = new_page(width=width, height=900)
    log_in(page, "olga.odd")
    page.goto(f"/runs/{run.id}")
    rows = page.locator(".timeline .tl-row")
    expect(rows).to_have_count(len(IDS))
    links = []
    for i in range(len(IDS)):
        row = rows.nth(i)
        links.append(row.locator(".tl-body a").get_attribute("href"))
        row.locator("summary").click()
        expect(row.locator(".tl-body")).to_contain_text(f"result-of-{i}")
        expect(row.locator(".tl-body")).to_contain_text(IDS[i])
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"odd-call-ids-{width}.png"), full_page=True)
    for i, href in enumerate(links):
        response = page.goto(href)
        assert response.status == 200, (IDS[i], href, page.url)
        expect(page.locator("main")).to_contain_text(f"result-of-{i}")
