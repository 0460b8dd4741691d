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
* then the reference level (one level, after the percent levels, so an encoded
  reference ``%26%2395%3B`` is read too): HTML character references decoded as
  ``html.unescape`` reads them (``&#95;``, ``&#x5f;``, ``&lowbar;``, semicolon optional),
  Markdown backslash escapes of ASCII punctuation (``\\_`` -> ``_``) and JSON escapes
  ``\\u005f`` (a surrogate pair as one character). The run page renders answers as
  Markdown, which decodes the first two: ``ghp\\_...`` was shown as ``ghp_...``. A
  reference of a reference (``&amp;#95;``) is one level: it renders as ``&#95;``;
* then the character level, per character: every character a browser draws as nothing
  inside a word removed (``invisible``: category Cf, such as the soft hyphen, the
  zero-width characters U+200B..U+200D, U+2060, U+FEFF, direction marks and overrides,
  invisible operators, tag characters; variation selectors; the combining grapheme
  joiner ...) and every combining mark (category Mn: ``ghp_ab\u0301c`` is ``ghp_abc``)
  removed, every Cyrillic or Greek letter that Unicode's confusables (TR39) give an
  ASCII letter as look-alike replaced by it (``ghр_`` with a Cyrillic ``р`` is ``ghp_``;
  ``_LOOK_ALIKES``), every other one replaced by its NFKC form (full-width ``ｇｈｐ＿``
  is ``ghp_``, the Kelvin sign is ``K``, a no-break space is a space). Per character,
  so a position maps back to the character it came from (NFKC of a whole text may
  compose characters across).

A text holding a space of category Zs other than " " (no-break, thin, ideographic ...)
gets a second view (``views``), the same but for those spaces, removed: ``ghp_abc<NBSP>def``
is read ``ghp_abcdef`` there, while ``token<NBSP>V`` still reads ``token V`` in the first.

Why it is linear and fast: the percent and character levels decode the text in chunks of
about ``CHUNK`` bytes with C-speed standard-library calls (``bytes.translate`` /
``replace`` and ``binascii.a2b_qp``, the quoted-printable decoder, which decodes ``=hh``:
the text is translated so that ``%`` reads as ``=``; ``str.translate`` with a table of
the characters that change, built once), never a Python step per escape or character;
the chunk starts, in the text and in the view, are kept. Mapping a position of the view
back is a binary search for its chunk and a walk of at most one chunk. A chunk never ends
inside an escape or inside a UTF-8 character. The reference level is one ``re.sub``
over the text (patterns without nested repetition: linear) with one cached Python call
per reference (about 0.2 us; 1.7 million references in 8 MiB cost ~0.4 s), and keeps a
mark every ``CHUNK`` bytes of text for the way back. A text with nothing to decode
(no ``%``, ``&`` or backslash, only ASCII or characters that stay) gets no level.
"""

from __future__ import annotations

import binascii
import html
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import accumulate

CHUNK = 1024  # bytes of the text decoded at once; a mapped position walks at most this far
DEPTH = 2  # levels of percent-encoding decoded: %3D and %253D, not %25253D
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")  # some of ``invisible``
# Drawn as nothing but not of category Cf (Unicode's Default_Ignorable_Code_Point, which
# ``unicodedata`` does not expose): the combining grapheme joiner, the Hangul fillers,
# the Khmer inherent vowels, the Mongolian free variation selectors; the variation
# selectors and the tag block are ranges below.
_INVISIBLE_OTHER = (0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F,
                    0x3164, 0xFFA0)
_INVISIBLE_RANGES = ((0xFE00, 0xFE0F), (0xE0000, 0xE0FFF))  # variation selectors 1-16; tags, VS 17-256
# Cyrillic and Greek letters and the ASCII letter Unicode's confusables (TR39,
# confusables.txt) give as their look-alike: every letter of U+0370..U+052F whose
# prototype is one ASCII letter, a capital whose prototype is "l" read as "I" (TR39 maps
# "I" to "l"; the rules are written in real letters). Not other scripts' (Armenian,
# Cherokee ...): their look-alikes are rarer, and every mapped letter is one more way for
# prose to read as a secret. ``tests/unit/test_redaction_look_alikes.py`` derives the
# table again from the pinned ``confusable-homoglyphs`` package's copy of the data.
#
# Also the letters of the IPA Extensions block (U+0250..U+02AF) that TR39 gives one ASCII
# letter as look-alike: ``ɡ`` (script g, U+0261) in ``ɡhp_`` reads as ``ghp_``; the block
# is phonetic notation, where no secret's shape turns up.
_LOOK_ALIKES = dict(zip(
    "ͺͿΑΒΕΖΗΙΚΜΝΟΡΤΥΧαγινορσυϒϜϱϲϳϹϺЅІЈАВЕКМНОРСТУХЬагеорсухѕіјѡѴѵҮүһҽӀӏԁԌԛԜԝ"
    "ɑɡɣɩɪɯʋʏ",
    "iJABEZHIKMNOPTYXayivopouYFpcjCMSIJABEKMHOPCTYXbareopcyxsijwVvYyheIidGqWw"
    "agyiiwuy", strict=True))
LOOK_ALIKE_BLOCKS = ((0x250, 0x2B0), (0x370, 0x530))  # [start, end): IPA Extensions; Greek .. Cyrillic Supplement
# Spaces of category Zs but " ": no-break, Ogham, en / em / thin / hair ..., narrow
# no-break, medium mathematical, ideographic (UTF-8; ``views`` looks for them).
WIDE_SPACES = tuple(chr(c) for c in (0xA0, 0x1680, *range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000))
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


def invisible(code: int) -> bool:
    """True for a code point a browser draws as nothing inside a word: category Cf
    (format: soft hyphen, zero-width characters, direction marks and embeddings, word
    joiner, invisible operators, tags ...), variation selectors, the combining grapheme
    joiner and the other default-ignorable characters of ``_INVISIBLE_OTHER``."""
    return (unicodedata.category(chr(code)) == "Cf" or code in _INVISIBLE_OTHER
            or any(low <= code <= high for low, high in _INVISIBLE_RANGES))


def character_table(joined: bool = False) -> dict[int, str | None]:
    """``str.translate`` table of the character level (module doc): an invisible
    character or a combining mark (Mn) -> ``None`` (removed), a Cyrillic or Greek
    look-alike -> its ASCII letter (``р`` -> ``p``), any other whose NFKC form differs ->
    that form (``ｇ`` -> ``g``, ``＿`` -> ``_``, U+00A0 -> a space), per character; for
    ``joined`` (the second view), the ``WIDE_SPACES`` -> ``None``. Built once per
    process, whichever way ``joined`` is spelt (``build_tables`` builds it at start)."""
    return _character_table(bool(joined))


@cache
def _character_table(joined: bool) -> dict[int, str | None]:
    if joined:
        return {**_character_table(False), **dict.fromkeys(map(ord, WIDE_SPACES))}
    hidden = set(_INVISIBLE_OTHER).union(*(range(low, high + 1) for low, high in _INVISIBLE_RANGES))
    table: dict[int, str | None] = {}
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue  # surrogates: what ``surrogateescape`` makes of bytes that are no UTF-8
        char = chr(code)
        category = unicodedata.category(char)
        if category in ("Cf", "Mn") or code in hidden:  # ``invisible``, or a combining mark
            table[code] = None
        elif category not in ("Cn", "Co"):
            # Unassigned and private-use code points (most of the 1.1 M) are no look-alike
            # and their own NFKC form: only the others are normalised (a third of the time).
            normal = _LOOK_ALIKES.get(char) or unicodedata.normalize("NFKC", char)
            if normal != char:
                table[code] = normal
    return table


@cache
def _translation(joined: bool) -> dict[int, str | int | None]:
    # ``character_table`` with ASCII mapped to itself: ``str.translate`` finds those in
    # the dict instead of raising and catching a KeyError for each (twice the speed).
    return {**character_table(joined), **{code: code for code in range(0x80)}}


def build_tables() -> None:
    """Build the character level's tables (``character_table`` and its translation, for
    both views) now: about half a second of CPU, once per process. The serving entry point
    (``app.py``) calls it at start, so no request pays for it (the first request of a
    worker that redacted non-ASCII text did, session 14)."""
    for joined in (False, True):
        _translation(joined)


def _characters(data: bytes, joined: bool = False) -> bytes:
    text = data.decode("utf-8", "surrogateescape")  # any bytes round-trip
    return text.translate(_translation(joined)).encode("utf-8", "surrogateescape")


_NON_ASCII = re.compile(rb"[\x80-\xff]+")


def _character_walk(chunk: bytes, left: int, at_end: bool = False, joined: bool = False) -> int:
    """The offset in ``chunk`` of byte ``left`` of the chunk's character-level output:
    the same byte of a character kept as it is, the first byte of one normalised (its
    end for ``at_end`` when the byte is not its first); characters removed before it are
    passed over. Runs of ASCII (kept as they are) are stepped over whole."""
    table, i = character_table(joined), 0
    for run in _NON_ASCII.finditer(chunk):
        if left < run.start() - i:
            return i + left
        left -= run.start() - i
        i = run.start()
        for char in run.group().decode("utf-8", "surrogateescape"):
            code = ord(char)
            size = 1 if 0xDC80 <= code <= 0xDCFF else len(char.encode("utf-8", "surrogatepass"))
            out = table.get(code, char)
            length = 0 if out is None else size if out is char else len(out.encode())
            if left < length:
                if out is char:
                    return i + left
                return i + size if at_end and left else i
            left -= length
            i += size
    return min(i + left, len(chunk))


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
    percent: bool  # percent-decoding (else: the character level, ``_characters``)
    starts: Sequence[int]
    view_starts: Sequence[int]
    joined: bool = False  # the character level of the second view (``views``)

    def source_position(self, pos: int, walks: list[int], at_end: bool = False) -> int:
        """Where the byte at ``pos`` of ``data`` comes from in ``source`` (its first byte,
        or for ``at_end`` past the unit it is inside; the source's length for ``pos`` at the
        end). In a chunk that decoding changed,
        a walk (counted in ``walks[0]``); elsewhere the same offset in the chunk."""
        if pos >= len(self.data):
            return len(self.source)
        chunk = bisect_right(self.view_starts, pos) - 1
        i, end, left = self.starts[chunk], self.starts[chunk + 1], pos - self.view_starts[chunk]
        if end - i == self.view_starts[chunk + 1] - self.view_starts[chunk]:
            return i + left  # nothing decoded in this chunk
        walks[0] += 1
        source = self.source
        if not self.percent:
            return i + _character_walk(source[i:end], left, at_end, self.joined)
        while True:
            step = 3 if _escape_at(source, i, end) else 1
            if not left:
                return i
            i += step
            left -= 1


def _level(source: bytes, percent: bool, plus: bool = False, joined: bool = False) -> _Level:
    starts, pieces, at = [0], [], 0
    size = len(source)
    while at < size:
        cut = _safe_cut(source, min(at + CHUNK, size), percent)
        piece = source[at:cut]
        pieces.append(unquote(piece, plus) if percent else _characters(piece, joined))
        starts.append(cut)
        at = cut
    return _Level(source, b"".join(pieces), percent, starts, list(accumulate(map(len, pieces), initial=0)),
                  joined)


# The reference level (module doc): an HTML character reference (decimal, hex, named; as
# ``html.unescape`` reads them, semicolon optional), a JSON ``\uXXXX`` escape (a surrogate
# pair as one), a Markdown backslash escape of ASCII punctuation. Each alternative is a
# fixed start and one run of a character class, so ``re`` never backtracks more than
# the match it is in (linear; the timing tests hold it).
_REFERENCE = re.compile(
    rb"&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]{0,31};?)"
    rb"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}"
    rb"|(?:\\[!-/:-@\[-`{-~])+")  # a run of Markdown escapes is one match (every second byte)
_REPLACEMENTS: dict[bytes, bytes] = {}  # a match -> its decoding (bounded: ``_decode``)
_REPLACEMENTS_MAX = 4096


def _decode_reference(raw: bytes) -> bytes:
    if raw[:2] == b"&#":
        digits = raw[2:].rstrip(b";")
        hexa = digits[:1] in (b"x", b"X")
        digits = (digits[1:] if hexa else digits).lstrip(b"0") or b"0"
        if len(digits) > 8:  # past U+10FFFF (html.unescape: U+FFFD; int() of it is slow)
            return "\ufffd".encode()
        return html.unescape(f"&#{'x' if hexa else ''}{digits.decode()};").encode()
    if raw[:1] == b"&":
        return html.unescape(raw.decode()).encode()
    if raw[1:2] == b"u":
        code = int(raw[2:6], 16)
        if len(raw) == 12:  # a surrogate pair
            code = 0x10000 + ((code - 0xD800) << 10) + int(raw[8:12], 16) - 0xDC00
        if code == 0 or 0xD800 <= code <= 0xDFFF:
            return raw  # NUL separates texts (redaction.many); a lone surrogate stays
        return chr(code).encode()
    return raw[1::2]  # Markdown escapes: the punctuation itself (C speed however long the run)


def _decode(raw: bytes) -> bytes:
    new = _REPLACEMENTS.get(raw)
    if new is None:
        new = _decode_reference(raw)
        if len(raw) <= 64:  # runs of escapes can be long: kept only short ones
            if len(_REPLACEMENTS) >= _REPLACEMENTS_MAX:
                _REPLACEMENTS.clear()
            _REPLACEMENTS[raw] = new
    return new


@dataclass(frozen=True)
class _References:
    """The reference level: ``source`` -> ``data``, decoded in one ``re.sub`` pass (a
    Python call per reference, cached by its text). ``marks`` / ``view_marks``: the start
    of a reference in ``source`` / ``data``, one at least ``CHUNK`` bytes of source after
    the one before (so mapping a position back walks at most ``CHUNK`` bytes of matches)."""

    source: bytes
    data: bytes
    marks: Sequence[int]
    view_marks: Sequence[int]

    def source_position(self, pos: int, walks: list[int], at_end: bool = False) -> int:
        """As ``_Level.source_position``: a byte of a reference's decoding comes from the
        reference's first byte (for ``at_end``, a byte after the first: from its end)."""
        if pos >= len(self.data):
            return len(self.source)
        mark = bisect_right(self.view_marks, pos) - 1
        src, at = self.marks[mark], self.view_marks[mark]
        walks[0] += 1
        for match in _REFERENCE.finditer(self.source, src):
            start = match.start()
            if pos < at + start - src:
                break
            at += start - src
            raw = match.group()
            new = _decode(raw)
            if pos < at + len(new):
                # In a run of Markdown escapes each byte comes from the two of its escape.
                if raw[:1] == b"\\" and raw[1:2] != b"u":
                    return start + 2 * (pos - at)
                return match.end() if at_end and pos > at else start
            at += len(new)
            src = match.end()
        return src + pos - at


def _references(source: bytes) -> _References | None:
    marks, view_marks = [0], [0]
    grow = [0]  # bytes the decoding gained (negative: lost) before the current match

    def replace(match: re.Match[bytes]) -> bytes:
        raw = match.group()
        new = _decode(raw)
        start = match.start()
        if start - marks[-1] >= CHUNK:
            marks.append(start)
            view_marks.append(start + grow[0])
        grow[0] += len(new) - len(raw)
        return new

    data = _REFERENCE.sub(replace, source)
    return None if data == source else _References(source, data, marks, view_marks)


class View:
    """A text decoded (module doc): ``data`` is what the rules scan; ``original`` maps a
    span of it back to the text; ``walks`` counts the positions that took a walk."""

    def __init__(self, data: bytes, levels: tuple[_Level | _References, ...]) -> None:
        self.data = data
        self.levels = levels
        self._walks = [0]

    @property
    def walks(self) -> int:
        """Positions ``original`` found by a walk of up to ``CHUNK`` bytes so far."""
        return self._walks[0]

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the text whose decoding is ``data[start:end]`` (``start < end``),
        with the invisible characters inside it and right after it."""
        for level in reversed(self.levels):
            start, end = level.source_position(start, self._walks), level.source_position(end, self._walks, True)
        return start, end


def _may_escape(data: bytes) -> bool:
    return b"%\xfe" in data.translate(_HEX_MARK)  # a "%" before a hex digit


# UTF-8 of U+0340..U+053F (Greek, Cyrillic) and U+0250..U+02AF (IPA Extensions).
_CYRILLIC_GREEK = re.compile(rb"[\xcd-\xd4][\x80-\xbf]|\xc9[\x90-\xbf]|\xca[\x80-\xaf]")
_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")


def look_alikes_only(span: bytes) -> bool:
    """True when whatever reads as a letter or digit in ``span`` (a part of a text that a
    view's scan took for a secret) is a Cyrillic, Greek or IPA look-alike: the span holds
    such a letter and, NFKC-normalised, no ASCII letter or digit. Such a
    match is prose ("хохо-хохо-хохо", a Russian laugh, reads as a Slack token's
    ``xoxo-...``): a disguised secret keeps letters or digits of its own. Linear."""
    if _CYRILLIC_GREEK.search(span) is None:
        return False
    return _ASCII_ALNUM.search(unicodedata.normalize("NFKC", span.decode("utf-8", "surrogateescape"))) is None


def _holds_wide_space(source: bytes) -> bool:
    # Looked for in the decoded text: a character search is a C scan per space, while a
    # search for their UTF-8 bytes slows down on text dense with other U+2000..U+206F
    # characters that share their first two bytes (zero-width runs: 0.15 s for 8 MiB
    # against 0.02 s here).
    text = source.decode("utf-8", "surrogateescape")
    return any(space in text for space in WIDE_SPACES)


def views(data: bytes) -> tuple[View, ...]:
    """The decoded views of ``data`` (UTF-8 bytes; module doc): none when nothing decodes,
    ``view(data)``, and when the text to the character level holds one of the
    ``WIDE_SPACES``, the same with those removed instead of read as spaces."""
    first = view(data)
    levels = first.levels if first is not None else ()
    if levels and isinstance(levels[-1], _Level) and not levels[-1].percent:
        levels = levels[:-1]  # the character level: the joined one takes its place
    source = levels[-1].data if levels else data
    found = () if first is None else (first,)
    if source.isascii() or not _holds_wide_space(source):
        return found
    joined = _level(source, percent=False, joined=True)
    return (*found, View(joined.data, (*levels, joined)))


def view(data: bytes) -> View | None:
    """The decoded view of ``data`` (UTF-8 bytes; module doc), or ``None`` when no level
    changes it (nothing to decode)."""
    levels: list[_Level | _References] = []
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
    if b"&" in current or b"\\" in current:
        references = _references(current)
        if references is not None:
            levels.append(references)
            current = references.data
    if not current.isascii() and _characters(current) != current:
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
