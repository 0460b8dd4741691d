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
TICKS = 5  # 0 %, 25 %, 50 %, 75 %, 100 % of the span


@dataclass(frozen=True)
class CallTiming:
    """What the layout needs of one call. Times are aware UTC datetimes or ``None``."""

    started_at: datetime | None
    completed_at: datetime | None


@dataclass(frozen=True)
class Bar:
    """One call's bar: ``x`` and ``width`` in axis units; ``timed`` False means the call
    has no start time and gets no bar; ``open_ended`` means no end event (the bar runs to
    the end of the axis)."""

    x: float
    width: float
    timed: bool
    open_ended: bool
    offset_ms: int | None  # start relative to the axis start


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


def layout(calls: Sequence[CallTiming], until: datetime | None = None) -> Layout:
    """Place ``calls`` (in display order) on one axis.

    The axis starts at the earliest start time and ends at the latest known time: the
    latest start or completion, or ``until`` (the run's end) when later. A call without
    an end event runs to the end of the axis, because it may still be running and
    nothing else is known about it (SPEC 4: never invent an end).
    """
    starts = [c.started_at for c in calls if c.started_at is not None]
    if not starts:
        return Layout(False, None, 0, [], [Bar(0, 0, False, False, None) for _ in calls])
    start = min(starts)
    known = starts + [c.completed_at for c in calls if c.completed_at is not None]
    if until is not None:
        known.append(until)
    end = max(known)
    span_ms = max(1, round((end - start).total_seconds() * 1000))
    scale = AXIS_WIDTH / span_ms

    bars = []
    for call in calls:
        if call.started_at is None:
            bars.append(Bar(0, 0, False, False, None))
            continue
        offset = max(0, round((call.started_at - start).total_seconds() * 1000))
        x = min(offset * scale, AXIS_WIDTH - MIN_BAR)
        if call.completed_at is None:
            width = AXIS_WIDTH - x
            open_ended = True
        else:
            length = max(0, (call.completed_at - call.started_at).total_seconds() * 1000)
            width = length * scale
            open_ended = False
        width = min(max(width, MIN_BAR), AXIS_WIDTH - x)
        bars.append(Bar(round(x, 2), round(width, 2), True, open_ended, offset))
    return Layout(True, start, span_ms, axis_ticks(span_ms), bars)


def axis_ticks(span_ms: int) -> list[str]:
    """``TICKS`` evenly spaced labels from 0 to ``span_ms``; a label equal to the one
    before it (a span of a few ms: "0 ms 0 ms 1 ms ...") is left blank ("")."""
    ticks: list[str] = []
    previous = None
    for i in range(TICKS):
        label = format_ms(span_ms * i / (TICKS - 1))
        ticks.append("" if label == previous else label)
        previous = label
    return ticks
