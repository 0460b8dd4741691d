"""The runs list's search in headless Chromium (new-user finding): one search is one
browser history entry, and Back returns to the list as it was before it. A search was
pushed twice or more: the typing's request (input, after 500 ms), then Enter's change
and submit each sent and pushed the same address again."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.fixture
def world(make):
    ws = make.workspace()
    make.user(ws, username="sam.search")
    make.run(ws, query="alpha question about invoices")
    make.run(ws, query="beta question about shipping")
    return ws


def _rows(page):
    return page.locator("#runs-table tbody tr").count()


@pytest.mark.parametrize("width", [1280, 390])
def test_one_search_is_one_history_entry_and_back_returns_to_the_list(new_page, world, width):
    page = new_page(width, 900)
    log_in(page, "sam.search")
    page.goto("/")
    assert _rows(page) == 2
    start = page.evaluate("history.length")
    pushed = []
    page.expose_function("notePush", lambda path: pushed.append(path))
    page.evaluate("document.body.addEventListener('htmx:pushedIntoHistory', e => window.notePush(e.detail.path))")
    search = page.locator("#q")
    search.click()
    search.press_sequentially("alpha", delay=30)
    page.wait_for_url(lambda url: "/?q=alpha&" in url)  # the typing's request (after 500 ms)
    expect(page.locator("#runs-table tbody tr")).to_have_count(1)
    search.press("Enter")  # a person who types, then presses Enter: still one search
    page.wait_for_timeout(1200)
    assert _rows(page) == 1
    assert [p.split("&")[0] for p in pushed] == ["/?q=alpha"]
    assert page.evaluate("history.length") == start + 1
    # A second search, typed with a pause ("bet", then "a"): one more entry, the pause's
    # own answer refined in place; Back returns to the first search, then the list.
    search.press("Control+a")
    search.press_sequentially("bet", delay=30)
    page.wait_for_url(lambda url: "/?q=bet&" in url)
    search.press_sequentially("a", delay=30)
    page.wait_for_url(lambda url: "/?q=beta&" in url)
    search.press("Enter")
    page.wait_for_timeout(1200)
    assert [p.split("&")[0] for p in pushed] == ["/?q=alpha", "/?q=bet"]  # then replaced by beta
    assert page.evaluate("history.length") == start + 2
    assert "/?q=beta&" in page.url
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"runs-search-history-{width}.png"))
    page.go_back()
    page.wait_for_url(lambda url: "/?q=alpha&" in url)
    # The address changes at once; the page itself comes back from the server after it
    # (historyCacheSize 0), and beta's one row looked like alpha's until then: wait for it.
    expect(page.locator("#q")).to_have_value("alpha")
    expect(page.locator("#runs-table tbody tr")).to_have_count(1)
    expect(page.locator("#runs-table tbody")).to_contain_text("alpha question")
    page.go_back()
    page.wait_for_url(lambda url: url.endswith("/"))
    expect(page.locator("#runs-table tbody tr")).to_have_count(2)
