"""On a phone the runs list's badges stay inside their own cells (new-user finding: the
"Low confidence" verifier badge ran over the "not useful" verdict beside it at 390 px).
Screenshot at 390 px."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [390, 320])
def test_no_badge_runs_out_of_its_cell(new_page, make, session, width):
    ws = make.workspace()
    make.user(ws, Role.LEAD, username="lena.lead")
    run = make.run(ws, query="How do I rotate the Redis password for the sessions cluster without downtime?",
                   self_evaluation={"verifier_evaluation": {"verdict": "LOW_CONFID"}})
    run.feedback = "not_useful"
    session.commit()
    page = new_page(width=width, height=844)
    log_in(page, "lena.lead")
    page.goto("/")
    outside = page.evaluate("""() => [...document.querySelectorAll('table.runs td .badge')].flatMap(b => {
        const cell = b.closest('td').getBoundingClientRect(), box = b.getBoundingClientRect();
        return box.right > cell.right + 0.5 || box.left < cell.left - 0.5
            ? [b.textContent.trim() + ' ' + Math.round(box.right - cell.right)] : [];
    })""")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("table.runs tbody tr").first.screenshot(
        path=str(SCREENSHOTS / f"runs-row-badges-{width}.png"))
    assert outside == [], outside
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
