"""Timestamp parsing at the edges (SPEC 10): aware UTC datetimes only."""

from __future__ import annotations

from datetime import UTC, datetime

# The years an agent's clock can sensibly report (SPEC 10): anything outside is a unit
# mix-up (seconds read as ms, a zero epoch) or garbage, and would draw a timeline decades
# wide, so it is refused rather than stored.
MIN_YEAR = 2000
MAX_YEAR = 2100


class TimestampError(ValueError):
    """A value that is no timestamp of the years ``MIN_YEAR``-``MAX_YEAR``: ``field`` and
    ``reason`` apart (so no caller cuts the message), ``str()`` is ``"<field>: <reason>"``."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def parse_timestamp(value: object, field: str) -> datetime | None:
    """Parse an ISO 8601 string (``Z`` allowed) or epoch seconds / milliseconds into an
    aware UTC datetime. A value without an offset is read as UTC. ``None`` passes through.

    Raises ``TimestampError`` (a ``ValueError``) naming ``field`` for anything else, and for a time outside the
    years ``MIN_YEAR``-``MAX_YEAR`` (2000-2100, UTC).
    """
    parsed = _parse(value, field)
    if parsed is not None and not MIN_YEAR <= parsed.year <= MAX_YEAR:
        raise TimestampError(field, f"timestamp out of range (years {MIN_YEAR}-{MAX_YEAR})")
    return parsed


def _parse(value: object, field: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise TimestampError(field, "expected an ISO 8601 timestamp")
    if isinstance(value, (int, float)):
        seconds = value / 1000.0 if value > 10_000_000_000 else float(value)
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise TimestampError(field, "timestamp out of range") from None
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise TimestampError(field, f"expected an ISO 8601 timestamp, got {value[:40]!r}") from None
    else:
        raise TimestampError(field, "expected an ISO 8601 timestamp")
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def duration_ms(started_at: datetime | None, completed_at: datetime | None) -> int | None:
    """``max(0, round((completed_at - started_at) in ms))``; ``None`` if either is missing
    (SPEC 4: a clock running backwards never yields a negative duration)."""
    if started_at is None or completed_at is None:
        return None
    return max(0, round((completed_at - started_at).total_seconds() * 1000))


def format_duration(ms: int | None) -> str:
    """A duration for people: "—" when unknown, "<1 ms" for 0 (``duration_ms`` rounds a
    call of under half a millisecond to 0: it took some time, not none), "850 ms" under a
    second, "12.3 s" under a minute, else "4 min 5 s" (whole minutes and seconds, cut,
    not rounded)."""
    if ms is None:
        return "—"
    if ms < 1:
        return "<1 ms"
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60000:
        return f"{ms / 1000:.1f} s"
    return f"{ms // 60000} min {(ms % 60000) // 1000} s"
