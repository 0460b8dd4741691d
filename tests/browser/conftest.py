"""Live server + headless Chromium for browser tests (Playwright driving Debian's chromium).

Without ``/usr/bin/chromium`` the browser tests are skipped with a one-line notice,
unless ``CI=true``: then they fail, because CI must run them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from reviewapp import create_app
from reviewapp.extensions import db

CHROMIUM = os.environ.get("REVIEWAPP_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture
def live_server(app_config, app, tmp_path: Path) -> Iterator[str]:
    """The app served over HTTP on a free port (CSRF on, as in production); yields its URL.
    It shares the test database with the ``app`` fixture (and so with ``make``)."""
    served = create_app({**app_config, "WTF_CSRF_ENABLED": True})
    served.instance_path = str(tmp_path / "live-instance")
    server = make_server("127.0.0.1", 0, served, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(10)
        with served.app_context():
            db.engine.dispose()


@pytest.fixture
def browser():
    """A headless Chromium (Playwright); skipped when chromium is missing, except in CI."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {CHROMIUM} is missing: browser tests must run in CI")
        pytest.skip(f"{CHROMIUM} not found: browser tests skipped (make chromium installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
