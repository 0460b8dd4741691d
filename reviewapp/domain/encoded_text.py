"""A decoded view of a text, for redaction, with the way back to the text (SPEC 4).

Why: a secret sent percent-encoded (``ghp%5F...``, ``Authorization%3A%20Bearer%20...``)
or with a zero-width character inside (``ghp_\\u200b...``) has none of the shapes the
rules of ``domain.redaction`` look for, yet anyone reading the stored text can decode it.
So redaction also scans a *view* of the text: the text decoded, and maps what it finds
there back to the bytes of the text, which are then redacted as they are stored (neither
form of the secret survives).

The view (``view``), built only when the text holds something to decode:

* percent escapes ``%hh`` (either case) decoded, two levels deep: ``%253D`` (an encoded
  ``%3D``) is ``=`` in the view; a third level (``%25253D``) stays ``%3D``. A ``%`` not
  followed by two hex digits stays as it is;
* ``+`` is a space in the view of a text that holds a ``%``, as form encoding writes
  it (``urlencode``, HTML forms: ``aws_secret_access_key+V``, ``--password+V``,
  ``%22Authorization%22%3A+%22Bearer+V%22``); ``%2B`` is a ``+``. A ``%`` marks the
  text as encoded; in a text without one, ``+`` is as often a letter (base64, ``C++``)
  and stays, and the text gets no percent level at all. Where a ``+`` was a letter of a
  value (``AccountKey=Ab1+Ab2``), the scan of the text as it is still takes the whole
  value. (``Redactor.many`` joins the texts holding a ``%`` apart from the others, so a
  text reads the same alone and in a document.)
* the zero-width characters U+200B, U+200C, U+200D, U+2060 and U+FEFF removed (also when
  percent-encoded: they are removed after decoding).

Why it is linear and fast: each level decodes the text in chunks of about ``CHUNK`` bytes
with C-speed standard-library calls (``bytes.translate`` / ``replace`` and
``binascii.a2b_qp``, the quoted-printable decoder, which decodes ``=hh``: the text is
translated so that ``%`` reads as ``=``), never a Python step per escape; the chunk
starts, in the text and in the view, are kept. Mapping a position of the view back is a
binary search for its chunk and a walk of at most one chunk. A chunk never ends inside an
escape or inside a UTF-8 character.
"""

from __future__ import annotations

import binascii
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

CHUNK = 1024  # bytes of the text decoded at once; a mapped position walks at most this far
DEPTH = 2  # levels of percent-encoding decoded: %3D and %253D, not %25253D
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
_ZW = tuple(c.encode() for c in ZERO_WIDTH)  # three UTF-8 bytes each
_HEX = frozenset(b"0123456789ABCDEFabcdef")
_HEX_MARK = bytes(0xFE if c in _HEX else c for c in range(256))  # a hex digit -> 0xFE

# binascii.a2b_qp decodes "=hh" (either case). The text is translated first: "%" -> "=",
# a real "=" -> 0xFF (never in UTF-8), on the first level "+" -> " ". Its quirks are
# switched off before it runs: "=" before a newline, before "=" or at the end would be
# dropped (a soft line break, a broken escape), so such a "=" (a "%" that starts no escape)
# becomes 0xFD; escapes that would decode to 0xFD..0xFF become NUL, which no rule matches;
# "%3D" decodes to 0xFE so that it is told from a "%" left as it is. After decoding: "="
# -> "%", 0xFD -> "%", 0xFE and 0xFF -> "=".


def _table(pairs: dict[int, int]) -> bytes:
    table = bytearray(range(256))
    for old, new in pairs.items():
        table[old] = new
    return bytes(table)


_TO_QP = _table({0x25: 0x3D, 0x3D: 0xFF})
_TO_QP_PLUS = _table({0x25: 0x3D, 0x3D: 0xFF, 0x2B: 0x20})
_FROM_QP = _table({0x3D: 0x25, 0xFD: 0x25, 0xFE: 0x3D, 0xFF: 0x3D})
_QP_FIXES: tuple[tuple[bytes, bytes], ...] = (
    (b"==", b"\xfd="), (b"==", b"\xfd="),  # twice: a run of three "=" leaves one pair
    (b"=\r", b"\xfd\r"), (b"=\n", b"\xfd\n"),
    *((b"=" + f"{high}{low}".encode(), b"=00")
      for high in "Ff" for low in "DdEeFf"),
    (b"=3D", b"=FE"), (b"=3d", b"=FE"),
)


def unquote(data: bytes, plus: bool = False) -> bytes:
    """``data`` with every ``%hh`` decoded (and ``+`` read as a space when ``plus``), as
    ``urllib.parse.unquote_to_bytes`` (``unquote_plus``) would, at C speed; an escape of
    a byte UTF-8 never holds (0xFD..0xFF) becomes NUL. Bytes 0xFD..0xFF must not occur
    in ``data`` (UTF-8 has none)."""
    qp = data.translate(_TO_QP_PLUS if plus else _TO_QP)
    for old, new in _QP_FIXES:
        qp = qp.replace(old, new)
    if qp.endswith(b"="):
        qp = qp[:-1] + b"\xfd"
    return binascii.a2b_qp(qp).translate(_FROM_QP)


def _without_zero_width(data: bytes) -> bytes:
    for zw in _ZW:
        data = data.replace(zw, b"")
    return data


def _escape_at(data: bytes, i: int, end: int) -> bool:
    return data[i] == 0x25 and i + 2 < end and data[i + 1] in _HEX and data[i + 2] in _HEX


def _safe_cut(data: bytes, at: int, percent: bool) -> int:
    """The first position from ``at`` where a chunk may end: not inside an escape (an
    escape starts at none of the two bytes before it), not inside a UTF-8 character."""
    size = len(data)
    while at < size:
        inside = (0x80 <= data[at] < 0xC0) or (percent and (
            (at >= 1 and _escape_at(data, at - 1, size)) or (at >= 2 and _escape_at(data, at - 2, size))))
        if not inside:
            return at
        at += 1
    return size


@dataclass(frozen=True)
class _Level:
    """One decoding step: ``source`` -> ``data``, chunk by chunk (``starts`` in the
    source, ``view_starts`` in ``data``; both end with the lengths)."""

    source: bytes
    data: bytes
    percent: bool  # percent-decoding (else: zero-width characters removed)
    starts: Sequence[int]
    view_starts: Sequence[int]

    def source_position(self, pos: int, walks: list[int]) -> int:
        """Where the byte at ``pos`` of ``data`` comes from in ``source`` (its first byte;
        the source's length for ``pos`` at the end). In a chunk that decoding changed,
        a walk (counted in ``walks[0]``); elsewhere the same offset in the chunk."""
        if pos >= len(self.data):
            return len(self.source)
        chunk = bisect_right(self.view_starts, pos) - 1
        i, end, left = self.starts[chunk], self.starts[chunk + 1], pos - self.view_starts[chunk]
        if end - i == self.view_starts[chunk + 1] - self.view_starts[chunk]:
            return i + left  # nothing decoded in this chunk
        walks[0] += 1
        source = self.source
        while True:
            if self.percent:
                step = 3 if _escape_at(source, i, end) else 1
            elif source[i:i + 3] in _ZW:
                i += 3
                continue
            else:
                step = 1
            if not left:
                return i
            i += step
            left -= 1


def _level(source: bytes, percent: bool, plus: bool = False) -> _Level:
    starts, pieces, at = [0], [], 0
    size = len(source)
    while at < size:
        cut = _safe_cut(source, min(at + CHUNK, size), percent)
        piece = source[at:cut]
        pieces.append(unquote(piece, plus) if percent else _without_zero_width(piece))
        starts.append(cut)
        at = cut
    return _Level(source, b"".join(pieces), percent, starts, list(accumulate(map(len, pieces), initial=0)))


class View:
    """A text decoded (module doc): ``data`` is what the rules scan; ``original`` maps a
    span of it back to the text; ``walks`` counts the positions that took a walk."""

    def __init__(self, data: bytes, levels: tuple[_Level, ...]) -> None:
        self.data = data
        self.levels = levels
        self._walks = [0]

    @property
    def walks(self) -> int:
        """Positions ``original`` found by a walk of up to ``CHUNK`` bytes so far."""
        return self._walks[0]

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the text whose decoding is ``data[start:end]`` (``start < end``),
        with the zero-width characters inside it and right after it."""
        for level in reversed(self.levels):
            start, end = level.source_position(start, self._walks), level.source_position(end, self._walks)
        return start, end


def has_zero_width(data: bytes) -> bool:
    """True when ``data`` (UTF-8) holds one of ``ZERO_WIDTH``."""
    return any(zw in data for zw in _ZW)


def _may_escape(data: bytes) -> bool:
    return b"%\xfe" in data.translate(_HEX_MARK)  # a "%" before a hex digit


def view(data: bytes) -> View | None:
    """The decoded view of ``data`` (UTF-8 bytes; module doc), or ``None`` when it holds
    no percent escape and no zero-width character (nothing to decode)."""
    levels: list[_Level] = []
    current = data
    # A quick look first, so that a text that would decode to itself (runs of "%") is not
    # decoded: a "%" before a hex digit, or on the first level a "+" beside a "%". "+" is
    # a space on the first level only: one on the second came from "%2B".
    may_change = b"%" in data and (b"+" in data or _may_escape(data))
    for depth in range(DEPTH):
        if not may_change:
            break
        level = _level(current, percent=True, plus=depth == 0)
        if level.data == current:  # nothing decoded
            break
        levels.append(level)
        current = level.data
        may_change = _may_escape(current)
    if has_zero_width(current):
        levels.append(_level(current, percent=False))
        current = levels[-1].data
    return View(current, tuple(levels)) if levels else None


def replaced_spans(passes: Sequence[Sequence[tuple[int, int, int]]]) -> list[tuple[int, int]]:
    """The spans of a text that a series of passes replaced, in the text's positions.

    Each pass is a sorted list of ``(start, end, length)``: ``[start, end)`` of the text
    as the pass saw it (after the earlier passes) became ``length`` bytes. A later pass
    that replaces a part holding an earlier replacement takes all of it. Linear in the
    replacements."""
    marks: list[list[int]] = []  # [start now, end now, start in the text, end in the text]
    for edits in passes:
        if not edits:
            continue
        merged: list[list[int]] = []
        i = 0
        shift = 0  # positions of the text minus positions now, before the current point
        grow = 0  # new positions minus positions now, before the current point
        for start, end, length in edits:
            while i < len(marks) and marks[i][1] <= start:
                mark = marks[i]
                merged.append([mark[0] + grow, mark[1] + grow, mark[2], mark[3]])
                shift = mark[3] - mark[1]
                i += 1
            text_start = start + shift
            if i < len(marks) and marks[i][0] < start:
                text_start = marks[i][2]
            text_end = end + shift
            while i < len(marks) and marks[i][0] < end:
                mark = marks[i]
                shift = mark[3] - mark[1]
                text_end = max(end + shift, mark[3])
                i += 1
            merged.append([start + grow, start + grow + length, text_start, text_end])
            grow += length - (end - start)
        merged.extend([m[0] + grow, m[1] + grow, m[2], m[3]] for m in marks[i:])
        marks = merged
    return [(m[2], m[3]) for m in marks]


def _common_prefix(a: bytes, b: bytes) -> int:
    low, high = 0, min(len(a), len(b))
    while low < high:  # binary search with C-speed comparisons: O(n log n) bytes, no step each
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def changed(old: bytes, new: bytes) -> tuple[int, int]:
    """``(start, end)`` of the part of ``old`` that ``new`` replaced: ``old`` and ``new``
    share ``old[:start]`` and ``old[end:]`` (the longest such prefix, then suffix)."""
    start = _common_prefix(old, new)
    room = min(len(old), len(new)) - start
    suffix = _common_prefix(old[::-1][:room], new[::-1][:room])
    return start, len(old) - suffix
