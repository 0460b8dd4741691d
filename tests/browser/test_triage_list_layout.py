"""The triage list's layout (second new-user walk, 2026-12-03): at 1280 px the State cell
broke its category label inside a word ("Authenticatio / n") and the Ratings cell wrapped
"▲ 1 ▼ 2" apart; the State filter cut "Open (new + triaged)" short; at 390 px the filters
started a row with a bare "to" (the end of a score or day range, away from its "from")."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import Message, TriageItem
from reviewapp.services import feedback

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser

# For each element of the selector: its words that the browser laid out on more than one
# line (a Range over the word has one client rect per line it spans).
SPLIT_WORDS = """(selector) => {
  const split = [];
  document.querySelectorAll(selector).forEach((el) => {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const re = /\\S+/g;
      let m;
      while ((m = re.exec(node.data)) !== null) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top)));
        if (tops.size > 1) split.push(m[0]);
      }
    }
  });
  return split;
}"""


@pytest.fixture
def queue(make, session):
    ws = make.workspace()
    make.user(ws, Role.LEAD, username="lena")
    raters = [make.user(ws, username=name) for name in ("ann", "bob", "cid")]
    items = []
    for i, category in enumerate(("AUTH", "RESOURCE_EXHAUSTION", "UNGROUNDED_CLAIM")):
        run = make.run(ws, query=f"Why is checkout-service returning 502s for region eu-west-{i}?")
        answer = session.scalar(select(Message.id).where(Message.run_pk == run.id, Message.role == "assistant"))
        feedback.upsert_feedback(session, make.actor(raters[0]), "chat_message", answer, None, "positive")
        for rater, reason in zip(raters[1:], ("incorrect", "incomplete"), strict=True):
            feedback.upsert_feedback(session, make.actor(rater), "chat_message", answer, None, "negative", reason)
        item = session.scalars(select(TriageItem).where(TriageItem.run_pk == run.id)).one()  # the verdict's
        item.fault_category = category
        session.commit()
        items.append(item)
    return items


def _shoot(page, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


def test_the_list_breaks_no_word_and_keeps_the_rating_counts_on_one_line(new_page, queue):
    page = new_page(1280, 900)
    log_in(page, "lena")
    page.goto("/triage/")
    _shoot(page, "triage_list_1280.png")
    assert page.evaluate(SPLIT_WORDS, "table.triage td[data-label=State]") == []
    assert page.evaluate(SPLIT_WORDS, "table.triage td.ratings") == []
    for item in queue:
        counts = page.locator(f"#triage-row-{item.id} td.ratings")
        up, down = counts.locator(".up").bounding_box(), counts.locator(".down").bounding_box()
        assert abs(up["y"] - down["y"]) < 2, (up, down)  # "▲ 1 ▼ 2" on one line
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 1280


@pytest.mark.parametrize("width,height", [(390, 844), (1280, 900)])
def test_the_state_filter_shows_its_longest_option_whole(new_page, queue, width, height):
    page = new_page(width, height)
    log_in(page, "lena")
    page.goto("/triage/?state=open")
    select_box = page.locator("#f-state")
    assert select_box.evaluate("(s) => s.options[s.selectedIndex].text") == "Open (new + triaged)"
    # A select as wide as its content (shrink-to-fit: absolute, width auto) fits its widest
    # option: the page's is no narrower.
    _shoot(page, f"triage_state_filter_{width}.png")
    shown, natural = select_box.evaluate(
        "(s) => { const w = s.getBoundingClientRect().width; const old = s.style.cssText;"
        " s.style.cssText = 'position: absolute !important; width: auto !important; min-width: 0 !important;"
        " max-width: none !important';"
        " const n = s.getBoundingClientRect().width; s.style.cssText = old; return [w, n]; }")
    assert shown >= natural - 0.5, (shown, natural)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize("width,height", [(390, 844), (1280, 900)])
def test_each_range_s_to_stays_beside_its_from(new_page, queue, width, height):
    page = new_page(width, height)
    log_in(page, "lena")
    page.goto("/triage/")
    _shoot(page, f"triage_filters_{width}.png")
    for start, end in (("#f-smin", "#f-smax"), ("#f-from", "#f-to")):
        a, b = page.locator(start).bounding_box(), page.locator(end).bounding_box()
        assert abs(a["y"] - b["y"]) < 2 and b["x"] > a["x"], (start, a, b)  # one row, "to" after "from"
        assert b["x"] + b["width"] <= width
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
