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
