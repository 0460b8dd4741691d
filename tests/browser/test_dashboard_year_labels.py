"""A dashboard range over two calendar years labels the chart's days with the year
(new-user walk, 2026-12-04); screenshots at 1280 and 390 px in test-output/screenshots/."""

from __future__ import annotations

import pytest

from reviewapp.actors import Actor, Role
from reviewapp.services import dashboard

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1280, 390])
def test_the_axis_says_the_year(new_page, make, session, width):
    ws = make.workspace()
    make.user(ws, Role.LEAD, username="lyra")
    for day, verdict in (("2025-12-04", "useful"), ("2026-11-30", "not_useful"), ("2026-12-03", "useful")):
        make.run(ws, started_at=f"{day}T08:00:00Z").feedback = verdict
    session.commit()
    dashboard.rebuild(session, Actor.system_actor())
    page = new_page(width=width, height=900)
    log_in(page, "lyra")
    page.goto("/dashboard/")
    axis = page.locator("#ch-useful ~ div text.axis").all_text_contents()
    assert axis[0] == "2025-12-04" and axis[-1] == "2026-12-03"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#ch-useful").locator("..").screenshot(path=str(SCREENSHOTS / f"dashboard-years-{width}.png"))
