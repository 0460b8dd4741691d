"""The identifier rule (``domain.ids.id_problem``), values worked out by hand: an id
must hold a visible character and no control character (SPEC 3, 9, 10)."""

from __future__ import annotations

import pytest

from reviewapp.domain.ids import CONTROL, NOTHING_VISIBLE, id_problem


@pytest.mark.parametrize("value", ["a", "run-1", " a ", "\u200ba", "a\u0301", "é", "日本", "..", "x y"])
def test_an_id_with_a_visible_character_and_no_control_character_passes(value):
    assert id_problem(value) is None


@pytest.mark.parametrize("value", ["", " ", "\u200b", "\u200b\u200b", "\u2060\ufeff", "\u200e",
                                   "\u0301", "\u20dd", " \u200b \u00a0"])
def test_nothing_visible_is_refused(value):
    assert id_problem(value) == NOTHING_VISIBLE


@pytest.mark.parametrize("value", ["a\x07b", "a\nb", "\t ", "\x00", "ab\x7f", "\x1b[31m", "\u0085x"])
def test_a_control_character_is_refused_wherever_it_stands(value):
    assert id_problem(value) == CONTROL


def test_a_control_character_after_the_visible_one_is_still_found():
    # The scan does not stop at the first visible character.
    assert id_problem("abc\x01") == CONTROL
    assert id_problem("\u200b\x01") == CONTROL  # control wins over "nothing visible"


def test_the_reasons_read_as_the_api_sends_them():
    # The 400's message is "<field>: <reason>" (api/test_ingest reads it whole).
    assert CONTROL == "must not hold control characters"
    assert NOTHING_VISIBLE == "must hold a visible character (not only spaces or invisible characters)"
