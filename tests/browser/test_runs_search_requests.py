"""The runs list's search in headless Chromium, counted in requests (user-walk findings):
one search is one request (typing, then Enter, sent up to three: the typing's after
500 ms, then Enter's change and submit), a newer search aborts an older one still in
flight, and Back aborts a search still in flight, so its answer can neither swap its rows
in nor push its address after the page Back brought (historyCacheSize 0: the page comes
back from the server). Answers are held back with ``page.route`` to make the timing."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from .conftest import log_in

pytestmark = pytest.mark.browser


@pytest.fixture
def world(make):
    ws = make.workspace()
    make.user(ws, username="rita.requests")
    make.run(ws, query="alpha question about invoices")
    make.run(ws, query="beta question about shipping")
    return ws


def _q(url: str) -> str | None:
    """The ``q`` a runs-list address asks for, or None for another address."""
    parts = urlsplit(url)
    if parts.path != "/":
        return None
    return parse_qs(parts.query).get("q", [""])[0]


class Searches:
    """The list's htmx requests (history restores apart) and the ones that failed."""

    def __init__(self, page):
        self.sent, self.failed = [], []
        page.on("request", self._sent)
        page.on("requestfailed", lambda r: self.failed.append(_q(r.url)) if self._search(r) else None)

    @staticmethod
    def _search(request) -> bool:
        headers = request.headers
        return (_q(request.url) is not None and headers.get("hx-request") == "true"
                and "hx-history-restore-request" not in headers)

    def _sent(self, request) -> None:
        if self._search(request):
            self.sent.append(_q(request.url))


@pytest.mark.parametrize("width", [1280, 390])
def test_one_search_is_one_request(new_page, world, width):
    page = new_page(width, 900)
    log_in(page, "rita.requests")
    page.goto("/")
    expect(page.locator("#runs-table tbody tr")).to_have_count(2)
    searches = Searches(page)
    search = page.locator("#q")
    # Typed, then Enter after the typing's answer: one request.
    search.click()
    search.press_sequentially("alpha", delay=30)
    page.wait_for_url(lambda url: "/?q=alpha&" in url)
    expect(page.locator("#runs-table tbody tr")).to_have_count(1)
    search.press("Enter")
    page.wait_for_timeout(1200)
    assert searches.sent == ["alpha"]
    # Typed and Enter at once (before the typing's 500 ms): one request.
    search.press("Control+a")
    search.press_sequentially("beta", delay=30)
    search.press("Enter")
    page.wait_for_url(lambda url: "/?q=beta&" in url)
    page.wait_for_timeout(1200)
    assert searches.sent == ["alpha", "beta"]
    expect(page.locator("#runs-table tbody")).to_contain_text("beta question")
    # Another filter is another search: one request.
    if width < 720:
        page.locator("label[for=filters-toggle]").click()  # the phone's fold
    page.locator("select[name=sort]").select_option(index=1)
    page.wait_for_url(lambda url: "sort=" in url)
    page.wait_for_timeout(800)
    assert searches.sent == ["alpha", "beta", "beta"]
    assert searches.failed == []


def test_a_newer_search_aborts_an_older_one_in_flight(new_page, world):
    page = new_page(1280, 900)
    log_in(page, "rita.requests")
    page.goto("/")
    searches = Searches(page)
    held = []

    def hold_bet(route):
        if _q(route.request.url) == "bet":
            held.append(route)
        else:
            route.continue_()

    page.route(lambda url: _q(url) is not None, hold_bet)
    search = page.locator("#q")
    search.click()
    search.press_sequentially("bet", delay=30)
    page.wait_for_timeout(900)  # the typing's request went out and is held
    assert searches.sent == ["bet"] and len(held) == 1
    search.press_sequentially("a", delay=30)
    page.wait_for_url(lambda url: "/?q=beta&" in url)
    expect(page.locator("#runs-table tbody tr")).to_have_count(1)
    expect(page.locator("#runs-table tbody")).to_contain_text("beta question")
    assert searches.failed == ["bet"]  # aborted by the newer search
    try:
        held[0].continue_()
    except Exception:  # noqa: BLE001 - the browser may have dropped it already
        pass
    page.wait_for_timeout(800)
    assert "/?q=beta&" in page.url
    expect(page.locator("#runs-table tbody tr")).to_have_count(1)


def test_back_aborts_a_search_in_flight(new_page, world):
    page = new_page(1280, 900)
    log_in(page, "rita.requests")
    page.goto("/")
    start = page.evaluate("history.length")
    searches = Searches(page)
    held_search, held_restore = [], []

    def hold(route):
        headers = route.request.headers
        if "hx-history-restore-request" in headers:
            held_restore.append(route)
        elif _q(route.request.url) == "beta":
            held_search.append(route)
        else:
            route.continue_()

    page.route(lambda url: _q(url) is not None, hold)
    search = page.locator("#q")
    search.click()
    search.press_sequentially("alpha", delay=30)
    page.wait_for_url(lambda url: "/?q=alpha&" in url)
    expect(page.locator("#runs-table tbody tr")).to_have_count(1)
    search.press("Control+a")
    search.press_sequentially("beta", delay=30)
    page.wait_for_timeout(900)  # beta's request is in flight (held)
    assert searches.sent == ["alpha", "beta"] and len(held_search) == 1
    page.go_back(wait_until="commit")
    page.wait_for_url(lambda url: url.endswith("/"))
    page.wait_for_timeout(300)  # popstate handled, the restore request sent (held)
    # beta's answer arrives first, then the page Back brings.
    try:
        held_search[0].continue_()
    except Exception:  # noqa: BLE001 - the browser aborted it
        pass
    page.wait_for_timeout(500)
    assert held_restore, "Back asked the server for the page"
    held_restore[0].continue_()
    expect(page.locator("#runs-table tbody tr")).to_have_count(2)
    expect(page.locator("#q")).to_have_value("")
    page.wait_for_timeout(800)
    assert page.url.endswith("/")
    assert page.evaluate("history.length") == start + 1  # alpha's entry only, nothing pushed after Back
    expect(page.locator("#runs-table tbody tr")).to_have_count(2)
    assert "beta" in searches.failed
