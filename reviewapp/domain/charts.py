"""Geometry for the dashboard's server-rendered SVG charts (SPEC 8). Pure: stdlib only.

The functions turn numbers into coordinates in an SVG user space (``width`` x
``height``, origin top-left); templates only draw what they get. Scales start at zero and
step by a "nice" amount (1, 2, 2.5 or 5 times a power of ten; whole numbers for counts)
so the gridlines carry round numbers. Nothing here knows about colours: every shape carries a ``series`` name
that the template turns into a CSS class.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field


def nice_scale(value: float, target_ticks: int = 4, integer: bool = True) -> tuple[float, float]:
    """``(maximum, step)`` of an axis from 0 that holds ``value``: ``step`` is 1, 2, 2.5
    or 5 times a power of ten, near ``value / target_ticks``, at least 1 when ``integer``
    (counts), and ``maximum`` the first multiple of ``step`` >= ``value`` (one step for 0)."""
    if value <= 0:
        return (1.0, 1.0) if integer else (1.0, 0.25)
    raw = value / target_ticks
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw - 1e-12)
    if integer:
        step = max(1.0, float(math.ceil(step)) if step < 1 else step)
        if step == 2.5:
            step = 2.0
    maximum = math.ceil(value / step - 1e-9) * step
    return float(maximum), float(step)


def ticks(maximum: float, step: float) -> list[float]:
    """Tick values 0, step, 2 x step ... up to ``maximum`` inclusive."""
    count = int(round(maximum / step))
    return [round(step * i, 9) for i in range(count + 1)]


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


@dataclass(frozen=True)
class Tick:
    """A gridline at ``pos`` (y for column charts, x for row charts) labelled ``label``."""

    pos: float
    label: str


@dataclass(frozen=True)
class Column:
    """One vertical bar; ``cx`` is its centre (for the label under it)."""

    x: float
    y: float
    w: float
    h: float
    cx: float
    label: str
    value: float
    series: str


@dataclass(frozen=True)
class ColumnChart:
    """A vertical bar chart inside ``width`` x ``height``; the plot area spans
    ``left..right`` and ``top..bottom``."""

    width: int
    height: int
    left: float
    right: float
    top: float
    bottom: float
    columns: list[Column]
    ticks: list[Tick]


def column_chart(items: Sequence[tuple[str, float]], *, width: int = 560, height: int = 240,
                 series: str = "bar", left: float = 44, bottom_margin: float = 36) -> ColumnChart:
    """Columns for (label, value) pairs, equal widths with a gap of a quarter column."""
    top, right = 12.0, float(width - 8)
    bottom = float(height) - bottom_margin
    maximum, step = nice_scale(max((v for _, v in items), default=0))
    slot = (right - left) / max(1, len(items))
    bar_w = slot * 0.75
    columns = []
    for i, (label, value) in enumerate(items):
        h = (bottom - top) * (value / maximum)
        x = left + i * slot + (slot - bar_w) / 2
        columns.append(Column(round(x, 1), round(bottom - h, 1), round(bar_w, 1), round(h, 1),
                              round(x + bar_w / 2, 1), label, value, series))
    grid = [Tick(round(bottom - (bottom - top) * t / maximum, 1), _fmt(t))
            for t in ticks(maximum, step)]
    return ColumnChart(width, height, left, right, top, bottom, columns, grid)


@dataclass(frozen=True)
class Segment:
    """One piece of a horizontal bar: ``series`` names the part (e.g. a state)."""

    x: float
    w: float
    value: float
    series: str


@dataclass(frozen=True)
class BarRow:
    """One horizontal bar (its segments stacked left to right) at ``y`` with height ``h``;
    ``total`` is the sum of its segments, ``end`` the x where the bar ends."""

    label: str
    y: float
    h: float
    segments: list[Segment]
    total: float
    end: float
    note: str = ""


@dataclass(frozen=True)
class RowChart:
    """Horizontal stacked bars; labels sit left of ``left``, the scale runs to ``right``."""

    width: int
    height: int
    left: float
    right: float
    rows: list[BarRow]
    ticks: list[Tick]
    series: list[str]


def row_chart(rows: Sequence[tuple[str, Sequence[tuple[str, float]]]], *, width: int = 560,
              row_height: float = 30, left: float = 150, notes: Sequence[str] | None = None
              ) -> RowChart:
    """Horizontal bars for (label, [(series, value), ...]) rows, segments stacked."""
    right = float(width - 56)
    top = 8.0
    maximum, step = nice_scale(max((sum(v for _, v in segs) for _, segs in rows), default=0))
    scale = (right - left) / maximum
    bars = []
    seen: list[str] = []
    for i, (label, segments) in enumerate(rows):
        y = top + i * row_height
        x = left
        parts = []
        for series, value in segments:
            if series not in seen:
                seen.append(series)
            w = value * scale
            if value > 0:
                parts.append(Segment(round(x, 1), round(w, 1), value, series))
            x += w
        total = sum(v for _, v in segments)
        bars.append(BarRow(label, round(y, 1), round(row_height * 0.66, 1), parts, total,
                           round(x, 1), (notes[i] if notes else "")))
    height = int(top + len(rows) * row_height + 22)
    grid = [Tick(round(left + t * scale, 1), _fmt(t)) for t in ticks(maximum, step)]
    return RowChart(width, height, left, right, bars, grid, seen)


@dataclass(frozen=True)
class Point:
    """A point of a line chart; ``value`` is the plotted number (0..1 for rates)."""

    x: float
    y: float
    label: str
    value: float
    note: str = ""  # e.g. "3 of 4": the counts behind a rate, shown beside the marker


def axis_days(labels: Sequence[str]) -> list[str]:
    """How an x axis shows ``labels``: ISO days ("2026-12-04") as "12-04" when they all
    fall in one calendar year, whole when the range spans several (else "12-04 … 12-04"
    across a year would read as one day); any other labels as they are."""
    if not labels or not all(len(x) == 10 and x[4] == "-" and x[7] == "-" and x[:4].isdigit() for x in labels):
        return list(labels)
    if len({x[:4] for x in labels}) > 1:
        return list(labels)
    return [x[5:] for x in labels]


@dataclass(frozen=True)
class LineChart:
    """A line chart of values in [0, 1]: ``paths`` are SVG ``points`` strings (a gap where
    a value is missing breaks the line), ``bridges`` the same across such gaps (drawn
    dashed: the trend stays readable when most days have no value), ``points`` the
    markers, ``x_labels`` a thinned selection of (x, label) so the axis stays legible."""

    width: int
    height: int
    left: float
    right: float
    top: float
    bottom: float
    paths: list[str]
    points: list[Point]
    x_labels: list[tuple[float, str]]
    ticks: list[Tick]
    bridges: list[str] = field(default_factory=list)


def line_chart(items: Sequence[tuple[str, float | None] | tuple[str, float | None, str]], *,
               width: int = 560, height: int = 240, max_labels: int = 8) -> LineChart:
    """A line for (label, rate in [0, 1] or ``None``[, note]) items, y axis 0-100 %; a
    ``note`` (e.g. "3 of 4") is kept on the item's point. ISO-day labels read on the x axis
    as ``axis_days`` says (the year only when the days span several); points keep the
    whole label."""
    left, right, top = 44.0, float(width - 24), 12.0
    bottom = float(height) - 36
    n = len(items)
    step = (right - left) / (n - 1) if n > 1 else 0.0
    xs = [left + i * step if n > 1 else (left + right) / 2 for i in range(n)]
    paths: list[str] = []
    current: list[str] = []
    points = []
    indexes: list[int] = []  # the item index of each point
    for index, (x, item) in enumerate(zip(xs, items)):
        label, value = item[0], item[1]
        note = item[2] if len(item) > 2 else ""  # type: ignore[misc]
        if value is None:
            if current:
                paths.append(" ".join(current))
                current = []
            continue
        y = bottom - (bottom - top) * max(0.0, min(1.0, value))
        current.append(f"{x:.1f},{y:.1f}")
        points.append(Point(round(x, 1), round(y, 1), label, value, note))
        indexes.append(index)
    if current:
        paths.append(" ".join(current))
    axis = axis_days([item[0] for item in items])
    whole = bool(axis) and len(axis[0]) > 5  # whole dates ("2025-12-04"): twice as wide
    if whole:
        max_labels = min(max_labels, 6)
    every = max(1, math.ceil(n / max_labels))
    x_labels = [(round(xs[i], 1), axis[i]) for i in range(0, n, every)]
    if n > 1 and (n - 1) % every:
        # Always label the last day; drop the label before it when the two would collide
        # (a whole date, drawn ending at the last day, always would).
        if whole or (n - 1) % every < every * 0.6:
            x_labels.pop()
        x_labels.append((round(xs[-1], 1), axis[-1]))
    grid = [Tick(round(bottom - (bottom - top) * t, 1), f"{int(t * 100)}%")
            for t in (0, 0.25, 0.5, 0.75, 1)]
    # Dashed bridges over the gaps: from the last point before a gap to the first after it.
    bridges = [f"{a.x:.1f},{a.y:.1f} {b.x:.1f},{b.y:.1f}"
               for (i, a), (j, b) in zip(zip(indexes, points), zip(indexes[1:], points[1:]))
               if j - i > 1]
    return LineChart(width, height, left, right, top, bottom, paths, points, x_labels, grid,
                     bridges)
