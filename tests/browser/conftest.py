"""Browser tests: Debian's Chromium driven by Playwright against a live server on
127.0.0.1 that each test starts (a thread running werkzeug with the test app).

No browser is ever downloaded: Playwright launches ``/usr/bin/chromium``. When it is
missing the tests skip with a notice, except under ``CI=true`` where they fail.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"
PASSWORD = "correct-horse-battery"


def _require_chromium() -> None:
    if Path(CHROMIUM).exists():
        return
    message = f"{CHROMIUM} is missing: browser tests need Debian's chromium (make test installs it)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def app_config(app_config: dict[str, Any]) -> dict[str, Any]:
    """The browser sees the real thing: CSRF on, as in production."""
    return {**app_config, "WTF_CSRF_ENABLED": True}


@pytest.fixture
def new_page(browser, live_server):
    """``new_page(width=1280, height=900, **context_options)`` -> a page in a fresh context."""
    contexts = []

    def _new(width: int = 1280, height: int = 900, **options: Any):
        context = browser.new_context(viewport={"width": width, "height": height},
                                      base_url=live_server, **options)
        context.set_default_timeout(20_000)  # CI under load 13 once took 10 s to load a page
        contexts.append(context)
        return context.new_page()

    yield _new
    for context in contexts:
        context.close()


def focused(page) -> str:
    """The page's focused element as "tag: text", e.g. "a: Cancel"."""
    return page.evaluate("(() => { const e = document.activeElement;"
                         " return e.tagName.toLowerCase() + ': ' + e.textContent.trim(); })()")


def wait_focused(page, expected: str, timeout_ms: int = 15000) -> None:
    """Wait until ``focused(page)`` reads ``expected``: ``autofocus`` is applied after the
    page is parsed, so a loaded machine may read the focus before it moved (CI at load
    13 once took more than 5 s). On timeout, fails naming what has the focus instead."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(
            "(want) => { const e = document.activeElement;"
            " return e.tagName.toLowerCase() + ': ' + e.textContent.trim() === want; }",
            arg=expected, timeout=timeout_ms)
    except PlaywrightTimeout:
        assert focused(page) == expected, f"no focus on {expected!r} after {timeout_ms} ms"


def log_in(page, username: str) -> None:
    """Log in through the form, as a person would."""
    page.goto("/login")
    page.fill("#username", username)
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/")
