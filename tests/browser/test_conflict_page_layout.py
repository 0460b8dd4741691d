"""The edit-conflict (409) page's layout: the "Current values" list ran into the "Your
version (not saved)" heading (its last fact, "UPDATED AT", sat right above the heading
with no space between them). Each section keeps a clear gap from the next, at 1280 and
390 px; screenshots under test-output/screenshots."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role
from reviewapp.services import triage

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser

# The vertical gap (px) between the bottom of the current values' list and the top of
# the "Your version" heading's text, and between that heading and the next line.
GAPS = """() => {
  const lists = document.querySelectorAll('.error-page dl.facts');
  const heading = Array.from(document.querySelectorAll('.error-page h2'))
    .find((h) => h.textContent.includes('Your version'));
  const current = lists[0].getBoundingClientRect();
  const lastFact = lists[0].lastElementChild.getBoundingClientRect();
  const top = heading.getBoundingClientRect();
  return {list: top.top - current.bottom, fact: top.top - lastFact.bottom,
          fontSize: parseFloat(getComputedStyle(heading).fontSize)};
}"""


@pytest.mark.parametrize("width,height", [(1280, 900), (390, 844)])
def test_the_409_page_keeps_the_current_values_apart_from_your_version(new_page, make, session, width, height):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lena")
    other = make.user(ws, Role.LEAD, username="omar")
    item = make.triage_item(make.run(ws, query="Why is checkout-service returning 502s?"))
    page = new_page(width, height)
    log_in(page, "lena")
    page.goto(f"/triage/{item.id}")
    triage.set_note(session, make.actor(other), item.id, 1, "omar looked at the pool sizes")
    page.fill("#note", "my careful note about the connection pool")
    page.click("text=Save note")
    page.wait_for_selector("#conflict-title")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"conflict_page_{width}.png"), full_page=True)
    assert lead.username in page.inner_text("header")
    gaps = page.evaluate(GAPS)
    # at least one line of the heading's own size between the facts and the heading
    assert gaps["list"] >= gaps["fontSize"], gaps
    assert gaps["fact"] >= gaps["fontSize"], gaps
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
