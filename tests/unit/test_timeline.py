"""Timeline layout (SPEC 4, 8): bars on one shared axis, computed without a database."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from reviewapp.domain.pagination import decode_keyset, encode_keyset
from reviewapp.domain.timeline import (
    Bar,
    CallTiming,
    Layout,
    axis_ticks,
    format_ms,
    layout,
)

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_layout_places_bars_proportionally_on_one_axis():
    # Axis 0..10 s: a call 0-2 s, one 5-10 s.
    placed = layout([CallTiming(at(0), at(2)), CallTiming(at(5), at(10))])
    assert placed.has_axis and placed.span_ms == 10_000
    first, second = placed.bars
    assert (first.x, first.width) == (0, 200)  # 2 s of 10 s on a 1000-wide axis
    assert (second.x, second.width) == (500, 500)
    assert placed.ticks == ["0 ms", "2.5 s", "5.0 s", "7.5 s", "10 s"]


def test_a_call_without_end_event_is_a_marker_at_its_start():
    """Issue 17 item 6: an open call is not drawn to the axis end as if it ran that long."""
    placed = layout([CallTiming(at(0), at(4)), CallTiming(at(1), None)])
    open_bar = placed.bars[1]
    assert open_bar.open_ended
    assert (open_bar.x, open_bar.width) == (250, 12)  # the marker: 12 wide on the 1000-wide axis
    assert placed.span_ms == 4000


def test_the_axis_is_made_from_the_calls_times_not_the_run_end():
    """Issue 17 item 6: a run that ended long after its calls does not stretch the axis."""
    placed = layout([CallTiming(at(0), at(1))], until=at(4 * 86_400))
    assert placed.span_ms == 1000
    assert placed.bars[0].width == 1000  # the whole 1000-wide axis


def test_a_lone_open_call_has_no_made_up_span():
    """Issue 17 item 6: one call with no end event: no "0 ms – 1 ms" axis, no full bar."""
    placed = layout([CallTiming(at(0), None)], until=at(4 * 86_400))
    assert placed.has_axis and placed.span_ms == 0
    assert placed.ticks == ["0 ms", "", "", "", ""]
    assert (placed.bars[0].x, placed.bars[0].width, placed.bars[0].open_ended) == (0, 12, True)


def test_a_call_that_ended_before_it_started_says_so():
    placed = layout([CallTiming(at(0), at(10)), CallTiming(at(5), at(3))])
    backwards = placed.bars[1]
    assert backwards.ended_before_start and not placed.bars[0].ended_before_start
    assert (backwards.x, backwards.width) == (500, 4)  # widened to the 4-unit minimum
    assert placed.span_ms == 10_000


def test_layout_keeps_a_zero_length_call_visible():
    # A compensated call: start == end.
    placed = layout([CallTiming(at(0), at(10)), CallTiming(at(5), at(5))])
    assert placed.bars[1].width == 4  # widened to the 4-unit minimum
    assert placed.bars[1].x == 500


def test_layout_without_any_time_has_no_axis():
    placed = layout([CallTiming(None, None), CallTiming(None, None)])
    assert not placed.has_axis
    assert [b.timed for b in placed.bars] == [False, False]


def test_layout_mixes_timed_and_untimed_calls():
    placed = layout([CallTiming(None, None), CallTiming(at(0), at(1))])
    assert placed.has_axis
    assert [b.timed for b in placed.bars] == [False, True]


def test_layout_never_draws_past_the_axis_for_a_clock_running_backwards():
    placed = layout([CallTiming(at(5), at(3)), CallTiming(at(0), at(5))])
    bar = placed.bars[0]
    assert bar.x + bar.width <= 1000 and bar.width >= 4


@pytest.mark.parametrize("ms, text", [
    (0, "0 ms"), (999, "999 ms"), (1000, "1.0 s"), (2449, "2.4 s"), (12_400, "12 s"),
    (65_000, "1 min 5 s"), (3_720_000, "1 h 2 min"),
])
def test_format_ms(ms, text):
    assert format_ms(ms) == text


def test_keyset_cursor_round_trips_and_refuses_another_sort():
    cursor = encode_keyset("score_desc", [42, 7])
    assert decode_keyset(cursor, "score_desc", 2) == [42, 7]
    with pytest.raises(ValueError):
        decode_keyset(cursor, "newest", 2)
    with pytest.raises(ValueError):
        decode_keyset(cursor, "score_desc", 3)
    with pytest.raises(ValueError):
        decode_keyset("not-a-cursor!", "score_desc", 2)
    with pytest.raises(ValueError):
        decode_keyset(encode_keyset("newest", [{"x": 1}, 2]), "newest", 2)


@pytest.mark.parametrize(("span", "ticks"), [
    (1, ["0 ms", "", "", "1 ms", ""]),           # 0, .25, .5 -> 0 ms; .75, 1 -> 1 ms
    (4, ["0 ms", "1 ms", "2 ms", "3 ms", "4 ms"]),
    (10_000, ["0 ms", "2.5 s", "5.0 s", "7.5 s", "10 s"]),
])
def test_axis_ticks_never_repeat_a_label(span, ticks):
    assert axis_ticks(span) == ticks


# The axis runs 0..1000 and a bar is at least 4 wide (module docstring; the template's
# viewBox): written out below rather than read from the module.

def test_completed_calls_are_not_open_ended_and_carry_their_offset():
    placed = layout([CallTiming(at(0), at(2)), CallTiming(at(5), at(10))])
    assert placed.bars == [Bar(0, 200, True, False, 0), Bar(500, 500, True, False, 5000)]
    assert (placed.start, placed.has_axis) == (T0, True)


def test_a_single_zero_length_call():
    placed = layout([CallTiming(at(3), at(3))])
    # A span of 0 is one instant: a single "0 ms" tick (no made-up "1 ms"); the bar is
    # widened to 4.
    assert placed == Layout(True, at(3), 0, ["0 ms", "", "", "", ""],
                            [Bar(0, 4, True, False, 0)])


def test_a_call_at_the_very_end_of_the_axis_keeps_a_visible_bar_inside_it():
    placed = layout([CallTiming(at(0), at(10)), CallTiming(at(10), at(10)),
                     CallTiming(at(10), None)])
    assert placed.bars[1:] == [Bar(996, 4, True, False, 10_000),
                               Bar(988, 12, True, True, 10_000)]  # 1000 - 12: inside


def test_the_run_end_only_extends_the_axis_never_shortens_it():
    placed = layout([CallTiming(at(0), at(4))], until=at(1))
    assert placed.span_ms == 4000 and placed.bars[0].width == 1000


def test_positions_are_rounded_to_two_decimals():
    placed = layout([CallTiming(at(0), at(3)), CallTiming(at(1), at(2))])
    assert placed.bars[1] == Bar(333.33, 333.33, True, False, 1000)


def test_untimed_calls_get_no_bar_and_no_axis():
    assert layout([CallTiming(None, at(1))]) == Layout(
        False, None, 0, [], [Bar(0, 0, False, False, None)])
    assert layout([]) == Layout(False, None, 0, [], [])


@pytest.mark.parametrize("ms, text", [
    (-5, "0 ms"), (0.4, "0 ms"), (999.4, "999 ms"), (9_949, "9.9 s"), (9_999, "10.0 s"),
    (10_000, "10 s"), (59_999, "60 s"), (60_000, "1 min 0 s"), (3_599_999, "59 min 59 s"),
    (3_600_000, "1 h 0 min"), (7_199_999, "1 h 59 min"),
])
def test_format_ms_at_each_unit_boundary(ms, text):
    assert format_ms(ms) == text


def test_an_untimed_call_among_timed_ones_gets_an_empty_bar():
    placed = layout([CallTiming(None, None), CallTiming(at(0), at(1))])
    assert placed.bars == [Bar(0, 0, False, False, None), Bar(0, 1000, True, False, 0)]


def test_the_layout_values_are_immutable():
    placed = layout([CallTiming(at(0), at(1))])
    for value, name in ((placed, "span_ms"), (placed.bars[0], "x"), (CallTiming(None, None),
                                                                      "started_at")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, name, 1)


def test_an_open_marker_is_placed_to_two_decimals():
    # Axis 0..3 s on 1000 units: a start at 1 s is at 333.33.
    placed = layout([CallTiming(at(0), at(3)), CallTiming(at(1), None)])
    assert placed.bars[1] == Bar(333.33, 12, True, True, 1000)


def test_a_backwards_call_has_no_length_even_on_a_short_axis():
    # Axis 0..100 ms (10 units per ms): the call that "ended" before it started is drawn at
    # the 4-unit minimum, not as one millisecond (10 units) of work.
    placed = layout([CallTiming(at(0), at(0.1)), CallTiming(at(0.05), at(0.01))])
    assert placed.bars[1] == Bar(500, 4, True, False, 50, True)


def test_a_chunk_of_calls_is_placed_on_the_axis_it_is_given():
    # The run's calls span 0..10 s; this chunk holds only the call 5-6 s: 500..600 of 1000.
    placed = layout([CallTiming(at(5), at(6))], bounds=(at(0), at(10)))
    assert (placed.start, placed.span_ms) == (at(0), 10_000)
    assert placed.bars == [Bar(500, 100, True, False, 5000)]


@pytest.mark.parametrize("bounds", [(T0, None), (None, T0), (None, None)])
def test_an_axis_known_at_one_end_only_is_no_axis(bounds):
    # Call order only, as when no call has a time: no span is made up from one end.
    assert layout([CallTiming(at(0), at(1))], bounds=bounds) == Layout(
        False, None, 0, [], [Bar(0, 0, False, False, None)])
