"""The disputes page keeps to the screen when a run's query, run id, reviewer name or
comment is one long word (new-user finding: a query "big QQQ..." made /adjudication/
2,389 px wide at 1280 and 2,333 px at 390). Screenshots at 1280 and 390 px."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role
from reviewapp.services import feedback
from reviewapp.services import review_queues as rq

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1280, 390])
def test_a_disputed_run_of_long_words_does_not_widen_the_page(new_page, make, session, width):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="team.lead")
    ann = make.user(ws, username="ann" + "n" * 70)
    bob = make.user(ws, username="bob")
    run = make.run(ws, run_id="r-" + "x" * 150, query="big " + "Q" * 3000,
                   answer="A" * 2000)
    rq.create_queue(session, make.actor(lead), ws.id, "Pairs" + "P" * 100, {}, reviewers_per_run=2)
    answer = next(m for m in run.messages if m.role == "assistant")
    feedback.upsert_feedback(session, make.actor(ann), "chat_message", answer.id, None, "positive",
                             comment="C" * 500)
    feedback.upsert_feedback(session, make.actor(bob), "chat_message", answer.id, None, "negative")
    page = new_page(width, 900)
    log_in(page, "team.lead")
    page.goto("/adjudication/")
    assert page.locator("article.adj-item").count() == 1
    page.locator("article.adj-item details").first.click()
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"adjudication-long-words-{width}.png"), full_page=True)
    wide = page.evaluate("""() => [...document.querySelectorAll('body *')].filter(
        e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
        .slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().width))""")
    assert overflow <= 0, (overflow, wide)
    # A decision whose note is one long word: the recent decisions' note cell wraps it
    # (new-user finding: the table grew to 6,595 px inside its scroll box).
    page.get_by_label("Not useful").check()
    page.get_by_label("Note").fill("Decided " + "N" * 500 + " https://example.org/" + "p" * 300)
    page.get_by_role("button", name="Decide").click()
    note = page.locator("td.adj-note").first
    note.wait_for()
    assert note.bounding_box()["width"] <= 24 * 16 + 32
    table = page.evaluate("() => document.querySelector('#decided-h ~ .table-wrap table').scrollWidth")
    page.screenshot(path=str(SCREENSHOTS / f"adjudication-decided-long-note-{width}.png"), full_page=True)
    assert table <= max(width, 1100), table
