"""The usefulness chart's day labels say the year when the range spans more than one
calendar year (new-user walk, 2026-12-04: one run dated 2025 stretched the range over
366 days and the axis read "12-04 … 12-04"); within one year they stay "MM-DD"."""

from __future__ import annotations

import re

from reviewapp.actors import Actor, Role
from reviewapp.domain import charts
from reviewapp.services import dashboard


def _axis(html: str) -> list[str]:
    chart = html.split('id="ch-useful"', 1)[1].split("</figure>", 1)[0]
    return re.findall(r'<text class="axis"[^>]*>([^<]*)</text>', chart)


def test_a_range_over_two_years_labels_its_days_with_the_year(client, login, make, session):
    ws = make.workspace()
    login(make.user(ws, Role.LEAD))
    old, new = make.run(ws, started_at="2025-12-04T08:00:00Z"), make.run(ws, started_at="2026-12-04T08:00:00Z")
    old.feedback, new.feedback = "useful", "not_useful"
    session.commit()
    dashboard.rebuild(session, Actor.system_actor())
    axis = _axis(client.get(f"/dashboard/?workspace={ws.id}").get_data(as_text=True))
    assert axis[0] == "2025-12-04" and axis[-1] == "2026-12-04"
    assert all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", label) for label in axis), axis
    assert len(axis) <= 7  # whole dates are wider: about 6 of them (the last day always), not 8


def test_days_of_one_year_keep_the_short_label():
    chart = charts.line_chart([("2026-03-01", 0.5), ("2026-03-02", None), ("2026-03-03", 1.0)])
    assert [label for _, label in chart.x_labels] == ["03-01", "03-02", "03-03"]
    assert [p.label for p in chart.points] == ["2026-03-01", "2026-03-03"]  # the marker's title keeps the year
    assert [label for _, label in charts.line_chart([("d1", 0.5), ("d2", 1.0)]).x_labels] == ["d1", "d2"]
