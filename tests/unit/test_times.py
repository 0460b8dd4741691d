"""Timestamps at the edges and durations for people (domain/times.py), on plain values.

The accepted years (2000-2100, UTC) and "epoch seconds or milliseconds" are the contract of
the ingest API (README "Sending runs", openapi.yaml), written out here, not read from the
module's constants."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from reviewapp.domain.times import TimestampError, duration_ms, format_duration, parse_timestamp

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("ms", "text"), [
    (None, "—"), (0, "<1 ms"), (1, "1 ms"), (999, "999 ms"), (1000, "1.0 s"), (12_345, "12.3 s"),
    (59_999, "60.0 s"), (60_000, "1 min 0 s"), (61_999, "1 min 1 s"), (3_723_000, "62 min 3 s"),
    (3_599_999, "59 min 59 s"), (3_600_059, "60 min 0 s"),
])
def test_format_duration_picks_the_unit_by_size(ms, text):
    assert format_duration(ms) == text


def test_duration_between_two_times_never_goes_negative():
    assert duration_ms(T0, T0 + timedelta(seconds=2, milliseconds=5)) == 2005
    assert duration_ms(T0 + timedelta(seconds=1), T0) == 0
    assert duration_ms(None, T0) is None


@pytest.mark.parametrize(("value", "expected"), [
    ("2026-11-20T12:00:00Z", T0), ("2026-11-20T12:00:00z", T0), ("  2026-11-20T12:00:00Z ", T0),
    ("2026-11-20T12:00:00", T0),  # no offset: read as UTC
    ("2026-11-20T13:30:00+01:30", T0), ("2026-11-20T07:00:00-05:00", T0),
    (datetime(2026, 11, 20, 12, 0), T0), (datetime(2026, 11, 20, 14, 0, tzinfo=timezone(
        timedelta(hours=2))), T0),
    (1_764_547_200, datetime(2025, 12, 1, tzinfo=UTC)),  # epoch seconds
    (1_764_547_200.5, datetime(2025, 12, 1, 0, 0, 0, 500_000, tzinfo=UTC)),
    (1_764_547_200_123, datetime(2025, 12, 1, 0, 0, 0, 123_000, tzinfo=UTC)),  # epoch ms
    (None, None),
])
def test_parse_timestamp_reads_iso_8601_and_epoch_seconds_or_milliseconds(value, expected):
    parsed = parse_timestamp(value, "started_at")
    assert parsed == expected
    if parsed is not None:
        assert parsed.utcoffset() == timedelta(0)


@pytest.mark.parametrize("value", [
    "2000-01-01T00:00:00Z", "2100-12-31T23:59:59Z", 946_684_800, 4_133_980_799,
    946_684_800_000, 4_133_980_799_999,
])
def test_the_first_and_last_instants_of_the_years_2000_to_2100_are_accepted(value):
    assert parse_timestamp(value, "t").year in (2000, 2100)


@pytest.mark.parametrize("value", [
    "1999-12-31T23:59:59Z", "2101-01-01T00:00:00Z", "2000-01-01T00:30:00+01:00",
    946_684_799, 4_133_980_800, 946_684_799_999, 5, 0, -1,
    10_000_000_000,  # 2286 read as seconds, 1970 as milliseconds: wrong either way
])
def test_times_outside_the_years_2000_to_2100_are_refused_naming_the_field(value):
    with pytest.raises(ValueError) as caught:
        parse_timestamp(value, "completed_at")
    assert str(caught.value) == "completed_at: timestamp out of range (years 2000-2100)"


@pytest.mark.parametrize(("value", "message"), [
    (True, "t: expected an ISO 8601 timestamp"),
    (["2026-11-20"], "t: expected an ISO 8601 timestamp"),
    ("yesterday", "t: expected an ISO 8601 timestamp, got 'yesterday'"),
    ("x" * 50, "t: expected an ISO 8601 timestamp, got '" + "x" * 40 + "'"),
    (1e300, "t: timestamp out of range"), (float("nan"), "t: timestamp out of range"),
])
def test_anything_else_is_refused_naming_the_field(value, message):
    with pytest.raises(ValueError) as caught:
        parse_timestamp(value, "t")
    assert str(caught.value) == message


def test_the_refusal_carries_field_and_reason_apart():
    """Callers name their own path and show the reason alone: nobody cuts the message."""
    with pytest.raises(TimestampError) as caught:
        parse_timestamp("a: b", "steps[0].started_at")
    assert (caught.value.field, caught.value.reason) == (
        "steps[0].started_at", "expected an ISO 8601 timestamp, got 'a: b'")


def test_a_duration_is_rounded_to_the_nearest_millisecond():
    assert duration_ms(T0, T0 + timedelta(microseconds=1_600)) == 2
    assert duration_ms(T0, T0 + timedelta(microseconds=1_400)) == 1
    assert duration_ms(T0, None) is None
    assert duration_ms(T0, T0) == 0
