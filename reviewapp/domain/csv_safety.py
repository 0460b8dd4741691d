"""Spreadsheet formula-injection neutralisation for CSV export cells (SPEC 8).

A spreadsheet (Excel, LibreOffice, Google Sheets) that opens a CSV runs any cell whose
text starts with ``=``, ``+``, ``-`` or ``@`` as a formula — ``=HYPERLINK(...)`` or
``=cmd|' /C calc'!A0`` in a reviewer's comment would execute on an admin's machine. A
leading tab or carriage return is stripped by some importers and exposes the next
character, so they count as dangerous too (OWASP "CSV Injection"). Spreadsheets also
skip leading spaces, tabs and line breaks, read the full-width forms ``＝ ＋ － ＠`` as
their ASCII twins (Excel with East Asian input), and ignore zero-width characters and a
byte-order mark in front: a formula character after any run of those is dangerous too.

The fix is the one OWASP recommends: put a single quote in front of such a cell. The
spreadsheet then shows the text, quote hidden, and never evaluates it. Only *text* is
touched: real numbers (``int`` / ``float`` values such as an evidence score) are written
as they are, so ``-5`` as a number stays a number while ``"-5"`` typed by a person gains
the quote. JSONL exports are not neutralised: they are the exact format.
"""

from __future__ import annotations

from typing import Any

DANGEROUS_PREFIXES: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
"""Leading characters that make a spreadsheet evaluate (or re-parse) a cell."""

FORMULA_CHARACTERS: frozenset[str] = frozenset("=+-@\uff1d\uff0b\uff0d\uff20")
"""Characters that start a formula: ``= + - @`` and their full-width forms ``＝ ＋ － ＠``."""

IGNORED_IN_FRONT = (
    " \t\r\n\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"  # every Unicode blank (str.isspace)
    "\u180e\u200b\u200c\u200d\u200e\u200f\u2060\ufeff"  # zero-width, direction marks, BOM
)
"""What a spreadsheet skips before a formula: spaces, tabs, line breaks and every other
Unicode blank (no-break, the ideographic - full-width - space ...), zero-width space /
non-joiner / joiner, the left-to-right / right-to-left marks, word joiner and the
byte-order mark."""

ESCAPE = "'"
_DANGEROUS_FIRST = frozenset(DANGEROUS_PREFIXES) | FORMULA_CHARACTERS | frozenset(IGNORED_IN_FRONT)


def is_dangerous(text: str) -> bool:
    """True when ``text`` starts with one of ``DANGEROUS_PREFIXES``, or with a formula
    character (``FORMULA_CHARACTERS``) after characters in ``IGNORED_IN_FRONT``."""
    if not text or text[0] not in _DANGEROUS_FIRST:
        return False
    if text.startswith(DANGEROUS_PREFIXES):
        return True
    rest = text.lstrip(IGNORED_IN_FRONT)
    return bool(rest) and rest[0] in FORMULA_CHARACTERS


def neutralise_cell(value: Any) -> Any:
    """The CSV-safe form of one cell value.

    ``None`` -> ``""``; ``bool`` -> ``"true"`` / ``"false"``; ``int`` / ``float`` unchanged;
    any other value is turned into text and, when it starts with a dangerous prefix, gets a
    leading ``'``. Never raises.
    """
    if value.__class__ is str:  # the common case first: exports are mostly text
        return ESCAPE + value if value and value[0] in _DANGEROUS_FIRST and is_dangerous(value) else value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return value
    text = value if isinstance(value, str) else str(value)
    if is_dangerous(text):
        return ESCAPE + text
    return text


def neutralise_row(values: list[Any]) -> list[Any]:
    """``neutralise_cell`` applied to every value of a row."""
    return [neutralise_cell(v) for v in values]
