"""No page scrolls sideways at phone or laptop width, even with long unbroken text
from the model or a reviewer, and the answer's thumbs stay reachable under a long
answer (fresh-user findings)."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role

from .conftest import log_in

pytestmark = pytest.mark.browser

LONG = "x" * 300  # no break opportunity at all
URL = "https://docs.example.com/" + "segment/" * 40


@pytest.fixture
def long_world(make):
    ws = make.workspace(name="Workspace " + LONG[:60])
    make.user(ws, Role.ADMIN, username="wide.admin")
    chat = make.run(ws, query="Why? " + LONG, answer="See " + URL, messages=[
        {"id": "u1", "role": "user", "content": "Why? " + LONG},
        {"id": "a1", "role": "assistant", "content": "See " + URL + "\n\n" + "\n\n".join(
            f"Paragraph {i} of a long answer." for i in range(60)),
         "metadata": {"citations": [
             {"id": "c1", "title": "Title " + LONG, "source": URL, "excerpt": LONG,
              "evidence_ref": "ref:" + LONG}]}},
    ])
    aiops = make.aiops_run(ws, query="Alert " + LONG, report={"content": "# " + LONG + "\n" + URL})
    item = make.triage_item(chat, note="Note " + LONG, fault_category="CAT_" + LONG[:50])
    case = make.case(ws, run=aiops, title="Case " + LONG[:190], root_cause=LONG, solution=URL)
    return {"chat": chat, "aiops": aiops, "item": item, "case": case}


@pytest.mark.parametrize("width", [390, 1280])
def test_no_page_scrolls_sideways(new_page, long_world, width):
    page = new_page(width, 800)
    log_in(page, "wide.admin")
    paths = ["/", f"/runs/{long_world['chat'].id}", f"/runs/{long_world['aiops'].id}", "/triage/",
             f"/triage/{long_world['item'].id}", "/cases/", f"/cases/{long_world['case'].case_id}",
             "/dashboard/", "/dashboard/agreement",
             "/dashboard/alignment", "/exports/"]
    wide = {}
    for path in paths:
        page.goto(path)
        overflow = page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        if overflow > 0:
            wide[path] = overflow
    assert wide == {}


def test_the_answer_thumbs_are_not_clipped_by_a_long_answer(new_page, long_world):
    page = new_page(1280, 800)
    log_in(page, "wide.admin")
    page.goto(f"/runs/{long_world['chat'].id}")
    card = page.locator("section.answer")
    assert card.evaluate("el => el.scrollHeight - el.clientHeight") <= 1
    thumbs = card.locator(".thumbs")
    thumbs.scroll_into_view_if_needed()
    assert thumbs.is_visible()


def test_the_triage_items_facts_do_not_run_into_the_query_heading(new_page, make):
    """On the triage item page the last fact ('OPENED' ...) sat flush on the 'Query'
    heading under it: the facts list had no bottom margin, the heading no top one."""
    ws = make.workspace()
    make.user(ws, Role.LEAD, username="spacing.lead")
    item = make.triage_item(make.run(ws))
    page = new_page(1280, 900)
    log_in(page, "spacing.lead")
    page.goto(f"/triage/{item.id}")
    gap = page.evaluate("""() => {
        const facts = document.querySelector('#run-h ~ dl.facts');
        const heading = facts.nextElementSibling;
        return [heading.textContent, heading.getBoundingClientRect().top - facts.getBoundingClientRect().bottom];
    }""")
    assert gap[0] == "Query" and gap[1] >= 12


@pytest.mark.parametrize("width", [390, 1280])
def test_a_32_hex_run_id_stays_on_one_line_on_the_run_page(new_page, make, width):
    """The walk-through: an OTLP run's 32-hex id wrapped at 1280 px with its last
    character alone on a second line ("68a4…f56 / e"). A long id's fact takes two grid
    columns, so the whole id fits on one line at laptop and phone width."""
    from .conftest import SCREENSHOTS

    ws = make.workspace()
    make.user(ws, Role.REVIEWER, username="hex.reviewer")
    run = make.run(ws, run_id="68a4d8c74a9cf545e92b59d80097f56e",
                   session_id="f1e2d3c4b5a697887766554433221100")
    page = new_page(width, 900)
    log_in(page, "hex.reviewer")
    page.goto(f"/runs/{run.id}")
    lines = page.evaluate("""() => [...document.querySelectorAll('dl.run-facts dd > code')]
        .map(c => [c.textContent, c.getClientRects().length])""")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("dl.run-facts").screenshot(path=str(SCREENSHOTS / f"run-hex-id-{width}.png"))
    assert lines == [["68a4d8c74a9cf545e92b59d80097f56e", 1],
                     ["f1e2d3c4b5a697887766554433221100", 1]]
