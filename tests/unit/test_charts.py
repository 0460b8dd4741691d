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


# Exact geometry, worked out by hand from the documented layout (plot area 44..width-8 by
# 12..height-36 for columns; bars 3/4 of their slot; rows 30 high, bars 0.66 of that).

@pytest.mark.parametrize("value, integer, expected", [
    (0, False, (1.0, 0.25)), (0.9, False, (1.0, 0.25)), (5, True, (6.0, 2.0)), (4, True, (4.0, 1.0)),
    (20, True, (20.0, 5.0)), (2, True, (2.0, 1.0)), (10, True, (10.0, 2.0)),
])
def test_nice_scale_exact(value, integer, expected):
    assert charts.nice_scale(value, integer=integer) == expected


def test_nice_scale_with_more_ticks():
    assert charts.nice_scale(10, target_ticks=5) == (10.0, 2.0)
    assert charts.nice_scale(10, target_ticks=2) == (10.0, 5.0)


def test_ticks_and_labels():
    assert charts.ticks(1.0, 0.25) == [0, 0.25, 0.5, 0.75, 1.0]
    assert charts.ticks(6.0, 2.0) == [0, 2, 4, 6]
    chart = charts.column_chart([("a", 0.9)])
    assert [t.label for t in chart.ticks] == ["0", "1"]


def test_column_chart_exact_geometry():
    chart = charts.column_chart([("a", 10), ("b", 5), ("c", 0)], width=560, height=240)
    assert (chart.width, chart.height, chart.left, chart.right, chart.top, chart.bottom) == (
        560, 240, 44, 552.0, 12.0, 204.0)
    # slot 508 / 3, bar 127 wide, centred in its slot
    assert chart.columns == [
        charts.Column(65.2, 12.0, 127.0, 192.0, 128.7, "a", 10, "bar"),
        charts.Column(234.5, 108.0, 127.0, 96.0, 298.0, "b", 5, "bar"),
        charts.Column(403.8, 204.0, 127.0, 0.0, 467.3, "c", 0, "bar"),
    ]
    assert chart.ticks == [charts.Tick(204.0, "0"), charts.Tick(165.6, "2"), charts.Tick(127.2, "4"),
                           charts.Tick(88.8, "6"), charts.Tick(50.4, "8"), charts.Tick(12.0, "10")]


def test_column_chart_of_nothing_has_one_step_of_axis():
    chart = charts.column_chart([], width=100, height=100, series="x", left=10, bottom_margin=20)
    assert chart.columns == [] and (chart.left, chart.right, chart.bottom) == (10, 92.0, 80.0)
    assert chart.ticks == [charts.Tick(80.0, "0"), charts.Tick(12.0, "1")]


def test_row_chart_exact_geometry():
    chart = charts.row_chart([("tool", [("failed", 3), ("ok", 1)]), ("db", [("ok", 2), ("failed", 0)])],
                             width=560, left=150, notes=["n1", "n2"])
    # scale: (504 - 150) / 4 = 88.5 per unit
    assert (chart.width, chart.height, chart.left, chart.right) == (560, 90, 150, 504.0)
    assert chart.rows == [
        charts.BarRow("tool", 8.0, 19.8, [charts.Segment(150.0, 265.5, 3, "failed"),
                                          charts.Segment(415.5, 88.5, 1, "ok")], 4, 504.0, "n1"),
        charts.BarRow("db", 38.0, 19.8, [charts.Segment(150.0, 177.0, 2, "ok")], 2, 327.0, "n2"),
    ]
    assert chart.ticks == [charts.Tick(150.0, "0"), charts.Tick(238.5, "1"), charts.Tick(327.0, "2"),
                           charts.Tick(415.5, "3"), charts.Tick(504.0, "4")]
    assert chart.series == ["failed", "ok"]
    assert charts.row_chart([("a", [("s", 1)])]).rows[0].note == ""


def test_line_chart_exact_geometry():
    chart = charts.line_chart([("d1", 0.5), ("d2", None), ("d3", 1.0), ("d4", 0.0)])
    assert (chart.left, chart.right, chart.top, chart.bottom) == (44.0, 536.0, 12.0, 204.0)
    assert chart.paths == ["44.0,108.0", "372.0,12.0 536.0,204.0"]
    assert chart.points == [charts.Point(44.0, 108.0, "d1", 0.5), charts.Point(372.0, 12.0, "d3", 1.0),
                            charts.Point(536.0, 204.0, "d4", 0.0)]
    assert chart.x_labels == [(44.0, "d1"), (208.0, "d2"), (372.0, "d3"), (536.0, "d4")]
    assert chart.ticks == [charts.Tick(204.0, "0%"), charts.Tick(156.0, "25%"), charts.Tick(108.0, "50%"),
                           charts.Tick(60.0, "75%"), charts.Tick(12.0, "100%")]
    assert chart.bridges == ["44.0,108.0 372.0,12.0"]


def test_line_chart_clamps_rates_and_centres_a_single_point():
    chart = charts.line_chart([("only", 1.5)])
    assert chart.points == [charts.Point(290.0, 12.0, "only", 1.5)] and chart.x_labels == [(290.0, "only")]
    assert charts.line_chart([("low", -0.5)]).points[0].y == 204.0
    assert charts.line_chart([]).paths == [] and charts.line_chart([]).x_labels == []


def test_line_chart_thins_labels_and_always_labels_the_last_day():
    # 20 days, at most 8 labels: every 3rd (0, 3, ... 18); day 19 is 1 after 18, too close
    # (under 0.6 of a step), so 18 gives way to it.
    twenty = charts.line_chart([(f"d{i}", 0.5) for i in range(20)])
    assert [label for _, label in twenty.x_labels] == ["d0", "d3", "d6", "d9", "d12", "d15", "d19"]
    assert twenty.x_labels[-1][0] == 536.0
    # 21 days: day 20 is 2 after 18, far enough: both stay.
    twenty_one = charts.line_chart([(f"d{i}", 0.5) for i in range(21)])
    assert [label for _, label in twenty_one.x_labels] == [
        "d0", "d3", "d6", "d9", "d12", "d15", "d18", "d20"]
    # 8 days fit 8 labels: all of them, none added.
    assert len(charts.line_chart([(f"d{i}", 0.5) for i in range(8)]).x_labels) == 8
    # 9 days: every 2nd (0 .. 8) ends on the last day already.
    nine = charts.line_chart([(f"d{i}", 0.5) for i in range(9)])
    assert [label for _, label in nine.x_labels] == ["d0", "d2", "d4", "d6", "d8"]


def test_column_chart_rounds_to_one_decimal():
    # width 562: plot 44..554, three slots of 170, bars 127.5 wide starting 21.25 into their
    # slot; height 241: plot 12..205 (193 high), scale 0..8.
    chart = charts.column_chart([("a", 7), ("b", 3), ("c", 1)], width=562, height=241, series="s")
    assert chart.columns == [
        charts.Column(65.2, 36.1, 127.5, 168.9, 129.0, "a", 7, "s"),     # x 65.25, h 168.875
        charts.Column(235.2, 132.6, 127.5, 72.4, 299.0, "b", 3, "s"),    # x 235.25, h 72.375
        charts.Column(405.2, 180.9, 127.5, 24.1, 469.0, "c", 1, "s"),    # x 405.25, h 24.125
    ]
    assert chart.ticks == [charts.Tick(205.0, "0"), charts.Tick(156.8, "2"), charts.Tick(108.5, "4"),
                           charts.Tick(60.2, "6"), charts.Tick(12.0, "8")]


def test_a_single_column_takes_the_whole_plot_width():
    # plot 10..93: one slot of 83, a bar of 62.25 starting 10.375 in
    chart = charts.column_chart([("only", 1)], width=101, height=100, left=10, bottom_margin=20)
    assert chart.columns == [charts.Column(20.4, 12.0, 62.2, 68.0, 51.5, "only", 1, "bar")]


def test_chart_defaults():
    column = charts.column_chart([("a", 1)])
    assert (column.width, column.height, column.left, column.right, column.bottom) == (560, 240, 44, 552.0, 204.0)
    row = charts.row_chart([("a", [("s", 1)])])
    assert (row.width, row.height, row.left, row.right, row.rows[0].h) == (560, 60, 150, 504.0, 19.8)
    assert charts.BarRow("a", 0, 0, [], 0, 0).note == ""
    assert charts.Point(0, 0, "a", 0).note == ""
    assert charts.LineChart(1, 1, 0, 1, 0, 1, [], [], [], []).bridges == []


def test_row_chart_rounds_to_one_decimal():
    # width 561: scale 150..505 for 0..3, 118.33 per unit; rows 30.25 apart, bars 19.965 high.
    chart = charts.row_chart([("a", [("x", 1), ("y", 2)]), ("b", [("y", 0), ("x", 2)])],
                             width=561, row_height=30.25)
    assert chart.rows == [
        charts.BarRow("a", 8.0, 20.0, [charts.Segment(150.0, 118.3, 1, "x"),
                                       charts.Segment(268.3, 236.7, 2, "y")], 3, 505.0),
        charts.BarRow("b", 38.2, 20.0, [charts.Segment(150.0, 236.7, 2, "x")], 2, 386.7),
    ]
    assert chart.height == 90  # 8 + 2 x 30.25 + 22 = 90.5, whole pixels
    assert chart.ticks == [charts.Tick(150.0, "0"), charts.Tick(268.3, "1"), charts.Tick(386.7, "2"),
                           charts.Tick(505.0, "3")]
    assert chart.series == ["x", "y"]


def test_line_chart_of_two_points_spans_the_plot():
    chart = charts.line_chart([("a", 0.5), ("b", 0.25)])
    assert chart.points == [charts.Point(44.0, 108.0, "a", 0.5), charts.Point(536.0, 156.0, "b", 0.25)]
    assert chart.x_labels == [(44.0, "a"), (536.0, "b")] and chart.paths == ["44.0,108.0 536.0,156.0"]


def test_line_chart_path_before_a_gap_joins_its_points_with_spaces():
    chart = charts.line_chart([("a", 0.5), ("b", 0.25), ("c", None)])
    assert chart.paths == ["44.0,108.0 290.0,156.0"] and chart.bridges == []


@pytest.mark.parametrize("make", [
    lambda: charts.Tick(0, "0"), lambda: charts.Column(0, 0, 0, 0, 0, "a", 0, "s"),
    lambda: charts.column_chart([]), lambda: charts.Segment(0, 0, 0, "s"),
    lambda: charts.BarRow("a", 0, 0, [], 0, 0), lambda: charts.row_chart([]),
    lambda: charts.Point(0, 0, "a", 0), lambda: charts.line_chart([]),
])
def test_chart_shapes_cannot_be_changed(make):
    import dataclasses

    shape = make()
    with pytest.raises(dataclasses.FrozenInstanceError):
        shape.label = "changed"


def test_line_chart_rounds_to_one_decimal():
    # width 561, height 241: plot 44..537 by 12..205; four days 164.33 apart; 1/3 -> 140.67.
    chart = charts.line_chart([("a", 1 / 3), ("b", None), ("c", 0.5), ("d", 1.0)], width=561, height=241)
    assert chart.points == [charts.Point(44.0, 140.7, "a", 1 / 3), charts.Point(372.7, 108.5, "c", 0.5),
                            charts.Point(537.0, 12.0, "d", 1.0)]
    assert chart.x_labels == [(44.0, "a"), (208.3, "b"), (372.7, "c"), (537.0, "d")]
    assert chart.paths == ["44.0,140.7", "372.7,108.5 537.0,12.0"]
    assert chart.bridges == ["44.0,140.7 372.7,108.5"]
    assert chart.ticks == [charts.Tick(205.0, "0%"), charts.Tick(156.8, "25%"), charts.Tick(108.5, "50%"),
                           charts.Tick(60.2, "75%"), charts.Tick(12.0, "100%")]


def test_line_chart_last_label_at_exactly_six_tenths_of_a_step_keeps_the_one_before():
    # 34 days, at most 8 labels: every 5th (0 .. 30); day 33 is 3 after 30, exactly 0.6 of a
    # step: not closer than that, so both stay.
    chart = charts.line_chart([(f"d{i}", 0.5) for i in range(34)])
    assert [label for _, label in chart.x_labels] == ["d0", "d5", "d10", "d15", "d20", "d25", "d30", "d33"]


def test_nice_scale_for_rates_and_float_noise():
    # rates: 0.5 in steps of 0.2 (1, 2, 2.5, 5 x 10^-1 nearest 0.125 from above) up to 0.6
    assert charts.nice_scale(0.5, integer=False) == pytest.approx((0.6, 0.2))
    assert charts.nice_scale(7, integer=False) == (8.0, 2.0)   # 1.75 -> 2, not 2.5
    # a value off by float noise from 4 still gets the round scale of 4
    assert charts.nice_scale(4 + 4e-12) == (4.0, 1.0)


def test_ticks_are_cleaned_of_float_noise_to_nine_decimals():
    assert charts.ticks(1.0, 0.1) == [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    assert charts.ticks(4e-9, 1e-9) == [0, 1e-9, 2e-9, 3e-9, 4e-9]


def test_a_bridge_runs_from_the_last_point_before_a_gap():
    chart = charts.line_chart([("a", 0.0), ("b", 0.0), ("c", None), ("d", 0.0)])
    # four days 164 apart on 44..536; y 204 for 0
    assert chart.bridges == ["208.0,204.0 536.0,204.0"]
