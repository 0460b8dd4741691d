"""Durations for people (domain/times.py), formerly a template macro: one rule, tested
on plain values."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reviewapp.domain.times import duration_ms, format_duration

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("ms", "text"), [
    (None, "—"), (0, "0 ms"), (999, "999 ms"), (1000, "1.0 s"), (12_345, "12.3 s"),
    (59_999, "60.0 s"), (60_000, "1 min 0 s"), (61_999, "1 min 1 s"), (3_723_000, "62 min 3 s"),
])
def test_format_duration_picks_the_unit_by_size(ms, text):
    assert format_duration(ms) == text


def test_duration_between_two_times_never_goes_negative():
    assert duration_ms(T0, T0 + timedelta(seconds=2, milliseconds=5)) == 2005
    assert duration_ms(T0 + timedelta(seconds=1), T0) == 0
    assert duration_ms(None, T0) is None
