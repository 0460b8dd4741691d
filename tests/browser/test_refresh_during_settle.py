"""Self-refreshing parts keep listening while they settle (CI failure of stop 27).

The triage tabs and a run's verdict refresh themselves on an event from the body
(``hx-trigger="… from:body"``) and swap themselves out. htmx processes swapped-in
content only when it settles, 20 ms later by default, so an event sent in that window
reached neither the removed element nor its not-yet-processed replacement: a second
action right after the first left the counts stale (the triage browser test failed in
CI that way). Each test sends the event again in the task right after the first refresh
has swapped, and waits for the second refresh to be asked for.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from reviewapp.actors import Role

from .conftest import log_in

pytestmark = pytest.mark.browser

# Count the element's requests; on its first swap, send the event again in the next task.
RESEND_ON_SWAP = """([id, event]) => {
  window.resent = false;
  window.asked = 0;
  document.body.addEventListener('htmx:beforeRequest', (e) => {
    if (e.detail.elt && e.detail.elt.id === id) window.asked += 1;
  });
  document.body.addEventListener('htmx:afterSwap', (e) => {
    if (!window.resent && e.detail.elt && e.detail.elt.id === id) {
      window.resent = true;  // as another response's event would: in a task of its own
      setTimeout(() => htmx.trigger(document.body, event), 0);
    }
  });
  htmx.trigger(document.body, event);
}"""


def test_triage_tabs_refresh_twice_for_two_quick_changes(new_page, make):
    ws = make.workspace()
    make.user(ws, Role.LEAD, username="lena")
    make.triage_item(make.run(ws))
    page = new_page()
    log_in(page, "lena")
    page.goto("/triage/")
    page.wait_for_selector("#triage-tabs")

    page.evaluate(RESEND_ON_SWAP, ["triage-tabs", "triage-changed"])

    page.wait_for_function("() => window.resent === true")
    page.wait_for_function("() => window.asked === 2", timeout=5_000)  # timed out before the fix
    expect(page.locator("#triage-tabs")).to_have_count(1)


def test_run_verdict_refreshes_twice_for_two_quick_ratings(new_page, make):
    ws = make.workspace()
    make.user(ws, Role.REVIEWER, username="rita")
    run = make.run(ws)
    page = new_page()
    log_in(page, "rita")
    page.goto(f"/runs/{run.id}")
    verdict_id = f"run-{run.id}-verdict"
    page.wait_for_selector(f"#{verdict_id}")

    page.evaluate(RESEND_ON_SWAP, [verdict_id, "feedback-saved"])

    page.wait_for_function("() => window.resent === true")
    page.wait_for_function("() => window.asked === 2", timeout=5_000)  # timed out before the fix
    expect(page.locator(f"#{verdict_id}")).to_have_count(1)
