"""Layout of the tool-call timeline: bars on one shared time axis (SPEC 4, 8).

Pure: takes the calls' times and states, returns numbers a template draws as SVG
attributes (the page's CSP forbids inline ``style``). Coordinates run from 0 to
``AXIS_WIDTH`` along the axis; a bar narrower than ``MIN_BAR`` is widened so a
zero-length call (e.g. a compensated one) stays visible.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

AXIS_WIDTH = 1000
MIN_BAR = 4
OPEN_MARKER = 12  # an open call's marker: its start, not a length
TICKS = 5  # 0 %, 25 %, 50 %, 75 %, 100 % of the span


@dataclass(frozen=True)
class CallTiming:
    """What the layout needs of one call. Times are aware UTC datetimes or ``None``."""

    started_at: datetime | None
    completed_at: datetime | None


@dataclass(frozen=True)
class Bar:
    """One call's bar: ``x`` and ``width`` in axis units; ``timed`` False means the call
    has no start time and gets no bar; ``open_ended`` means no end event: the call is
    drawn as a marker at its start (``OPEN_MARKER`` wide), never as a bar of a length
    nothing says it had (SPEC 4); ``ended_before_start`` means its end time is before
    its start time (a clock that ran backwards: drawn as a zero-length call)."""

    x: float
    width: float
    timed: bool
    open_ended: bool
    offset_ms: int | None  # start relative to the axis start
    ended_before_start: bool = False


@dataclass(frozen=True)
class Layout:
    """The whole timeline: ``has_axis`` False when no call has a time (call order only)."""

    has_axis: bool
    start: datetime | None
    span_ms: int
    ticks: list[str]
    bars: list[Bar]


def format_ms(ms: float) -> str:
    """A short human duration: ``850 ms``, ``2.4 s``, ``3 min 5 s``, ``1 h 2 min``."""
    ms = max(0, round(ms))
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        seconds = ms / 1000
        return f"{seconds:.1f} s" if seconds < 10 else f"{round(seconds)} s"
    if ms < 3_600_000:
        return f"{ms // 60_000} min {(ms % 60_000) // 1000} s"
    return f"{ms // 3_600_000} h {(ms % 3_600_000) // 60_000} min"


def axis_bounds(calls: Sequence[CallTiming]) -> tuple[datetime | None, datetime | None]:
    """The axis of ``calls``: (earliest start, latest start or end), ``(None, None)``
    when no call has a start. An end before its call's start, or a call without an end,
    does not stretch it (``layout``)."""
    starts = [c.started_at for c in calls if c.started_at is not None]
    if not starts:
        return None, None
    ends = [c.completed_at for c in calls
            if c.started_at is not None and c.completed_at is not None
            and c.completed_at >= c.started_at]
    return min(starts), max(starts + ends)


def layout(calls: Sequence[CallTiming], until: datetime | None = None,
           bounds: tuple[datetime | None, datetime | None] | None = None) -> Layout:
    """Place ``calls`` (in display order) on one axis.

    The axis is made from the calls' own times: it starts at the earliest start and
    ends at the latest start or end of a call (``axis_bounds``). ``bounds`` gives that
    axis when ``calls`` are only some of the run's calls (the timeline shows them in
    chunks, each on the axis of all of them); the database computes it then. A call
    without an end event is a marker at its start (``open_ended``): it may still be
    running or its end was lost, and nothing else is known (SPEC 4: never invent an
    end), so it neither stretches the axis nor is drawn to its end. ``until`` (the run's
    end) is accepted for callers but no longer widens the axis: a run that ended long
    after its last call would squeeze every bar into a corner. A span of zero (one
    instant) has a single "0 ms" tick.
    """
    del until  # the axis is the calls' own (issue 17 item 6)
    start, end = axis_bounds(calls) if bounds is None else bounds
    if start is None or end is None:
        return Layout(False, None, 0, [], [Bar(0, 0, False, False, None) for _ in calls])
    span_ms = max(0, round((end - start).total_seconds() * 1000))
    scale = AXIS_WIDTH / span_ms if span_ms else 0.0

    bars = []
    for call in calls:
        if call.started_at is None:
            bars.append(Bar(0, 0, False, False, None))
            continue
        offset = max(0, round((call.started_at - start).total_seconds() * 1000))
        backwards = call.completed_at is not None and call.completed_at < call.started_at
        if call.completed_at is None:
            x = min(offset * scale, AXIS_WIDTH - OPEN_MARKER)
            bars.append(Bar(round(x, 2), OPEN_MARKER, True, True, offset))
            continue
        x = min(offset * scale, AXIS_WIDTH - MIN_BAR)
        length = 0.0 if backwards else (call.completed_at - call.started_at).total_seconds() * 1000
        width = min(max(length * scale, MIN_BAR), AXIS_WIDTH - x)
        bars.append(Bar(round(x, 2), round(width, 2), True, False, offset, backwards))
    return Layout(True, start, span_ms, axis_ticks(span_ms), bars)


def axis_ticks(span_ms: int) -> list[str]:
    """``TICKS`` evenly spaced labels from 0 to ``span_ms``; a label equal to the one
    before it (a span of a few ms: "0 ms 0 ms 1 ms ...") is left blank (""); a span of
    zero gives "0 ms" and blanks."""
    if span_ms <= 0:
        return ["0 ms"] + [""] * (TICKS - 1)
    ticks: list[str] = []
    previous = None
    for i in range(TICKS):
        label = format_ms(span_ms * i / (TICKS - 1))
        ticks.append("" if label == previous else label)
        previous = label
    return ticks
