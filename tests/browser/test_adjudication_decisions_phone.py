"""The disputes page's "Recent decisions" table at phone width (new-user walk: at 390 px
it was clipped, its When / Run / Queue / Lead / Verdict / Note / Change columns cut off
at the card's edge, the rest only by scrolling the table sideways). On a phone its rows
stack as cards like the app's other tables (``table.cards``: each cell under its column
name), every cell and the "Decide again" form inside the screen. Screenshots at 390 and
1280 px go to test-output/screenshots."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import Message
from reviewapp.services import adjudication, feedback
from reviewapp.services import review_queues as rq

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser

COLUMNS = ["When", "Run", "Queue", "Lead", "Verdict", "Note", "Change"]


@pytest.fixture
def decided(make, session):
    ws = make.workspace(name="Payments")
    lead = make.user(ws, Role.LEAD, username="team.lead")
    ann, bob = make.user(ws, username="ann"), make.user(ws, username="bob")
    rq.create_queue(session, make.actor(lead), ws.id, "Checkout pairs", {}, reviewers_per_run=2)
    for i in range(2):
        run = make.run(ws, run_id=f"run-2026-12-03-checkout-eu-west-1-{i:04d}", query=f"Why did checkout fail {i}?")
        answer = session.scalar(select(Message.id).where(Message.run_pk == run.id, Message.role == "assistant"))
        feedback.upsert_feedback(session, make.actor(ann), "chat_message", answer, None, "positive")
        feedback.upsert_feedback(session, make.actor(bob), "chat_message", answer, None, "negative")
        adjudication.decide(session, make.actor(lead), run.id, "not_useful",
                            note="The processor timed out; the answer blamed the database.")
    return ws


def _shoot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"adjudication-decisions-{name}.png"), full_page=True)


@pytest.mark.parametrize("width", [390, 1280])
def test_recent_decisions_read_whole_at_phone_and_laptop_width(new_page, decided, width):
    page = new_page(width, 900)
    log_in(page, "team.lead")
    page.goto("/adjudication/")
    table = page.locator("#decided-h ~ .table-wrap table")
    table.scroll_into_view_if_needed()
    _shoot(page, str(width))
    fit = page.evaluate("""() => {
        const wrap = document.querySelector('#decided-h ~ .table-wrap');
        return {wrap: wrap.scrollWidth - wrap.clientWidth,
                page: document.documentElement.scrollWidth - window.innerWidth};
    }""")
    assert fit == {"wrap": 0, "page": 0}
    rows = table.locator("tbody tr")
    assert rows.count() == 2
    # Every cell of every row is inside the screen, none cut off by the card.
    cells = page.evaluate("""() => [...document.querySelectorAll('#decided-h ~ .table-wrap tbody td')]
        .map(td => { const r = td.getBoundingClientRect(); return [td.cellIndex, Math.round(r.left), Math.round(r.right)]; })""")
    assert len(cells) == 2 * len(COLUMNS)
    assert [c for c in cells if c[1] < 0 or c[2] > width] == []
    first = rows.first
    for control in (first.get_by_role("link"), first.get_by_role("combobox"),
                    first.get_by_role("button", name="Decide again")):
        box = control.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, box
    if width == 390:
        # Cards: each cell names its column, as on the app's other tables at phone width.
        labels = first.locator("td").evaluate_all(
            """tds => tds.map(td => getComputedStyle(td, '::before').content.replace(/"/g, ''))""")
        assert labels[:6] == COLUMNS[:6]
