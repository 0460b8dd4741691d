"""The runs list's "Select" checkbox column on a phone (new-user finding, session 5):
its card label read "SEL / ECT", broken over two lines by the 2rem column width that
suits the laptop table."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role
from reviewapp.services import review_queues as rq

from .conftest import log_in

pytestmark = pytest.mark.browser


def test_the_select_label_stays_on_one_line_at_phone_width(new_page, make, session, tmp_path):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lena")
    make.run(ws, query="Why did checkout fail?")
    rq.create_queue(session, make.actor(lead), ws.id, "Chat answers", {"kind": "chat"})
    session.commit()

    page = new_page(390, 800)
    log_in(page, "lena")
    page.goto("/")
    cell = page.locator("table.runs td.select-col").first
    page.screenshot(path=str(tmp_path / "runs-select-390.png"), full_page=True)
    # The label is the pseudo-element before the checkbox: one line of it is its line
    # height; two lines (the bug) make the cell's content taller than a line plus the box.
    label_line = cell.evaluate(
        "el => parseFloat(getComputedStyle(el, '::before').lineHeight)")
    label_height = cell.evaluate(
        "el => el.getBoundingClientRect().height"
        " - el.querySelector('input').getBoundingClientRect().height")
    assert label_height < 2 * label_line
    assert cell.locator("input[type=checkbox]").is_visible()
