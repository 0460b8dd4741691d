"""Chart geometry for the dashboard SVGs."""

from __future__ import annotations

import pytest

from reviewapp.domain import charts


@pytest.mark.parametrize("value, maximum, step", [
    (0, 1, 1), (1, 1, 1), (3, 3, 1), (7, 8, 2), (29, 30, 10), (89, 100, 25), (101, 150, 50),
    (1234, 1500, 500),
])
def test_nice_scale(value, maximum, step):
    assert charts.nice_scale(value) == (maximum, step)


def test_column_heights_are_proportional_and_share_the_baseline():
    chart = charts.column_chart([("a", 10), ("b", 5), ("c", 0)], height=240)
    a, b, c = chart.columns
    assert a.h == pytest.approx(2 * b.h, abs=0.2)
    assert c.h == 0
    assert a.y + a.h == pytest.approx(chart.bottom) and b.y + b.h == pytest.approx(chart.bottom)
    assert [t.label for t in chart.ticks] == ["0", "2", "4", "6", "8", "10"]


def test_row_segments_stack_left_to_right():
    chart = charts.row_chart([("tool", [("failed", 3), ("ok", 1)])], width=560, left=150)
    row = chart.rows[0]
    failed, ok = row.segments
    assert failed.x == 150 and ok.x == pytest.approx(failed.x + failed.w, abs=0.2)
    assert failed.w == pytest.approx(3 * ok.w, abs=0.2)
    assert row.total == 4


def test_line_chart_breaks_at_missing_days():
    chart = charts.line_chart([("d1", 0.5), ("d2", None), ("d3", 1.0), ("d4", 0.0)])
    assert len(chart.paths) == 2
    assert [p.label for p in chart.points] == ["d1", "d3", "d4"]
    top = [p for p in chart.points if p.label == "d3"][0]
    bottom = [p for p in chart.points if p.label == "d4"][0]
    assert top.y == chart.top and bottom.y == chart.bottom


def test_line_chart_bridges_missing_days_and_keeps_notes():
    """Issue 17: usefulness per day is a line, not loose dots, and says its counts."""
    chart = charts.line_chart([("d1", 0.5, "1 of 2"), ("d2", None, ""), ("d3", None, ""),
                               ("d4", 1.0, "3 of 3"), ("d5", 0.0, "0 of 1")])
    d1, d4, d5 = chart.points
    assert chart.bridges == [f"{d1.x:.1f},{d1.y:.1f} {d4.x:.1f},{d4.y:.1f}"]
    assert chart.paths == [f"{d1.x:.1f},{d1.y:.1f}", f"{d4.x:.1f},{d4.y:.1f} {d5.x:.1f},{d5.y:.1f}"]
    assert [p.note for p in chart.points] == ["1 of 2", "3 of 3", "0 of 1"]
