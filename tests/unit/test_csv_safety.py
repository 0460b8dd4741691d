"""Spreadsheet formula injection is neutralised in CSV cells (SPEC 8)."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from reviewapp.domain.csv_safety import (
    DANGEROUS_PREFIXES,
    is_dangerous,
    neutralise_cell,
    neutralise_row,
)
from reviewapp.domain.export_format import csv_chunks

# (cell as stored, cell as a spreadsheet must receive it): one row per dangerous prefix.
FORMULA_TABLE = [
    ("=HYPERLINK(\"http://evil.example\",\"click\")", "'=HYPERLINK(\"http://evil.example\",\"click\")"),
    ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
    ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
    ("@SUM(1+9)*cmd|' /C calc'!A0", "'@SUM(1+9)*cmd|' /C calc'!A0"),
    ("\t=1+1", "'\t=1+1"),
    ("\r=1+1", "'\r=1+1"),
]


def test_formula_table_covers_every_dangerous_prefix():
    assert sorted(cell[0] for cell, _ in FORMULA_TABLE) == sorted(DANGEROUS_PREFIXES)


@pytest.mark.parametrize("stored, expected", FORMULA_TABLE)
def test_dangerous_cell_gets_a_leading_apostrophe(stored, expected):
    assert neutralise_cell(stored) == expected


@pytest.mark.parametrize("stored, expected", FORMULA_TABLE)
def test_dangerous_cell_is_neutralised_in_the_written_csv(stored, expected):
    text = "".join(csv_chunks(["comment", "n"], [{"comment": stored, "n": 1}]))
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows == [["comment", "n"], [expected, "1"]]


@pytest.mark.parametrize("safe", [
    "plain text", "a = b", "mid-dash", "user@example.com", "'already quoted", "", "数据库 = 慢",
    " leading space then text", "\u200bzero-width then text", "\ufeffBOM then text", "  \n  ",
    "a ＝ in the middle", "x＋1", "\u3000全角 text", "\xa0no-break then text",
])
def test_safe_text_is_left_alone(safe):
    assert neutralise_cell(safe) == safe


@pytest.mark.parametrize("value, expected", [
    (None, ""), (True, "true"), (False, "false"), (-5, -5), (0, 0), (-1.5, -1.5), (42, 42),
])
def test_non_text_values(value, expected):
    assert neutralise_cell(value) == expected


def test_text_that_looks_like_a_negative_number_is_still_quoted():
    """Only real numbers stay numbers; "-5" typed by a person is text and gets the quote."""
    assert neutralise_cell("-5") == "'-5"


# Issue 11: a formula character after what spreadsheets skip in front, and the
# full-width forms, are formulas too. (" =..." was listed as safe before: it is not.)
@pytest.mark.parametrize("stored", [
    " =1+1", "   +SUM(A1)", "\n=1+1", "\r\n@SUM(1)", " \t -2+3", "\u200b=1+1", "\ufeff=1+1",
    "\u200c\u200d\u2060=HYPERLINK(\"x\")", "＝1+1", "＋cmd", "－2+3", "＠SUM(1)", " ＝1", "\ufeff＠x",
    # Any other blank (no-break, ideographic - the full-width space - thin, line separator)
    # and the direction marks are skipped in front as well.
    "\u3000＝1+1", "\u3000=cmd", "\xa0=1+1", "\u2009+1", "\u2028=1", "\u200e=1", "\u200f＠x", "\u180e=1",
])
def test_formula_after_ignored_characters_or_full_width_is_neutralised(stored):
    assert neutralise_cell(stored) == "'" + stored


@pytest.mark.parametrize("stored", [" =1+1", "＝1+1", "\ufeff@x"])
def test_neutralised_in_the_written_csv_too(stored):
    text = "".join(csv_chunks(["comment"], [{"comment": stored}]))
    assert list(csv.reader(io.StringIO(text, newline=""))) == [["comment"], ["'" + stored]]


def test_is_dangerous_on_its_own():
    assert [is_dangerous(t) for t in ["", "abc", "=1", " =1", " abc", "＋1", "\t"]] == [
        False, False, True, True, False, True, True]


@pytest.mark.parametrize("safe", ["X=1", "XX", "Xmas = 25", "Total: =5"])
def test_a_letter_in_front_makes_any_formula_character_harmless(safe):
    assert neutralise_cell(safe) == safe


class _Text(str):
    """A str subclass (an enum member, markupsafe's Markup ...) takes the general path."""


@pytest.mark.parametrize("value, expected", [
    (Decimal("-5"), "'-5"), (Decimal("2.50"), "2.50"),
    (datetime(2026, 12, 1, 16, 5, tzinfo=UTC), "2026-12-01 16:05:00+00:00"),
    (_Text("=SUM(A1)"), "'=SUM(A1)"), (_Text(" @x"), "' @x"), (_Text("plain"), "plain"),
    (_Text(""), ""), (["=1"], "['=1']"),
])
def test_values_of_other_types_are_turned_into_text_and_neutralised(value, expected):
    assert neutralise_cell(value) == expected


def test_neutralise_row_neutralises_every_cell_in_order():
    assert neutralise_row(["=1", None, 7, "ok", True, _Text("-x")]) == [
        "'=1", "", 7, "ok", "true", "'-x"]
