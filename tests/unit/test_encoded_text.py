"""The decoded view of a text and the way back (module doc of ``domain.encoded_text``):
the percent decoding agrees with ``urllib.parse``, every span of the view maps to the
bytes it came from, and the spans a series of passes replaced are found in the text's
positions (worked out by hand)."""

from __future__ import annotations

from urllib.parse import unquote_plus, unquote_to_bytes

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reviewapp.domain import encoded_text
from reviewapp.domain.encoded_text import changed, replaced_spans, unquote, view

ZW = "\u200b"
# Texts of the characters that matter: escapes (whole, broken, nested), "=", "+",
# newlines, zero-width characters and other UTF-8.
PIECES = st.sampled_from(["%", "%2", "%25", "%3D", "%3d", "%41", "%E2%80%8B", "%fd", "%FF", "=", "==",
                          "+", "\n", "\r", "a", "Z", "X", "0", "f", ZW, "\u2060", "\u200d", "\ufeff", "é", "飞", " "])
TEXTS = st.lists(PIECES, max_size=60).map("".join)


@given(TEXTS)
@settings(max_examples=400, deadline=None)
def test_unquote_agrees_with_urllib(text):
    data = text.encode()
    expected = unquote_to_bytes(data)
    for high in (b"\xfd", b"\xfe", b"\xff"):  # escapes of bytes UTF-8 never holds: NUL
        expected = expected.replace(high, b"\x00")
    assert unquote(data) == expected
    assert unquote(data, plus=True) == expected.replace(b"+", b" ") or "%2B" in text.upper()


def test_unquote_reads_plus_as_a_space_only_when_asked():
    assert unquote(b"a+b%2Bc") == b"a+b+c"
    assert unquote(b"a+b%2Bc", plus=True) == b"a b+c"
    assert unquote_plus("a+b%2Bc") == "a b+c"


@given(TEXTS, st.integers(0, 3))
@example("%41bc", 1)  # a chunk of 2 would end inside the escape at 0 (its cut is at 2)
@example("a%41%%4%25%3D\ufeffb", 0)
@settings(max_examples=400, deadline=None)
def test_the_view_decodes_two_levels_and_each_span_maps_to_its_source(text, chunk):
    data = text.encode()
    saved = encoded_text.CHUNK
    encoded_text.CHUNK = (1, 2, 5, 1024)[chunk]  # chunk edges everywhere, or none
    try:
        seen = view(data)
    finally:
        encoded_text.CHUNK = saved
    plus = b"%" in data
    once = unquote(data, plus) if plus else data
    twice = unquote(once) if b"%" in once and once != data else once
    expected = twice
    for zw in encoded_text.ZERO_WIDTH:
        expected = expected.replace(zw.encode(), b"")
    if seen is None:
        assert expected == data
        return
    assert seen.data == expected
    for start in range(len(seen.data)):
        for end in range(start + 1, min(len(seen.data), start + 4) + 1):
            s, e = seen.original(start, end)
            source = data[s:e]
            decoded = unquote(source, plus)
            decoded = unquote(decoded) if twice is not once else decoded
            for zw in ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"):
                decoded = decoded.replace(zw.encode(), b"")
            assert decoded == seen.data[start:end], (text, start, end, s, e)


def test_no_view_without_an_escape_a_percent_or_a_zero_width_character():
    assert view(b"plain text + more") is None
    assert view(b"50% off") is None                      # a "%" alone decodes nothing
    assert view(b"50% off a+b").data == b"50% off a b"  # ... but "+" is a space beside it
    assert view(f"a{ZW}b".encode()).data == b"ab"
    assert view(b"%25253D").data == b"%3D"               # two levels, not three
    assert view(b"%2B+").data == b"+ "


def test_a_span_maps_back_over_escapes_and_zero_width_characters():
    seen = view(f"x%2541{ZW}y%3D".encode())             # view: "xA" "y="
    assert seen.data == b"xAy="
    assert seen.original(1, 2) == (1, 9)                 # "A" <- "%2541" and the U+200B after it
    assert seen.original(1, 3) == (1, 10)                # "Ay" <- "%2541\u200by"
    assert seen.original(3, 4) == (10, 13)               # "=" <- "%3D"
    assert seen.original(0, 4) == (0, 13)


@pytest.mark.parametrize(("old", "new", "expected"), [
    (b"password=abc", b"password=[redacted]", (9, 12)),
    (b"abc", b"[redacted]", (0, 3)),
    (b"k=abc;", b"k=[redacted];", (2, 5)),
    (b"same", b"same", (4, 4)),
    (b"[x", b"[redacted]", (1, 2)),                     # a shared "[" is kept
])
def test_changed_is_the_part_between_the_shared_prefix_and_suffix(old, new, expected):
    assert changed(old, new) == expected


def test_replaced_spans_follow_each_pass_back_to_the_text():
    # Text "aa SECRET bb KEY cc" (positions: SECRET 3..9, KEY 13..16).
    first = [(3, 9, 10)]                      # SECRET -> [redacted]; KEY now at 17..20
    second = [(17, 20, 10)]                   # KEY -> [redacted]
    assert replaced_spans([first, second]) == [(3, 9), (13, 16)]
    # A later pass taking "aa [redacted]" whole: the earlier span is inside the new one.
    assert replaced_spans([first, [(0, 13, 10)]]) == [(0, 9)]
    # A later pass ending inside the earlier replacement takes all of it.
    assert replaced_spans([first, [(1, 5, 10)]]) == [(1, 9)]
    assert replaced_spans([first, [], [(20, 22, 10)]]) == [(3, 9), (16, 18)]  # " c" after KEY
    assert replaced_spans([]) == [] and replaced_spans([[]]) == []


# Pieces of the reference and character levels: references (whole, broken, nested),
# Markdown and JSON escapes (runs, a lone backslash), invisible and full-width characters.
DISGUISE_PIECES = st.sampled_from(["&#95;", "&#x5F", "&lowbar;", "&amp;", "&amp", "&#", "&", "#95;", "\\",
                                   "\\_", "\\\\", "\\*\\_", "\\u005f", "\\ud83d\\ude00", "u005f", "\u00ad",
                                   "\u202e", "\ufe0f", "\U000e0041", "ｇ", "＿", "ﬁ", "é", "飞", "a", "_", " "])


@given(st.lists(DISGUISE_PIECES, max_size=40).map("".join), st.integers(0, 2))
@settings(max_examples=400, deadline=None)
def test_each_span_of_a_disguise_view_maps_to_source_that_decodes_to_it(text, chunk):
    """Every span of the view maps back to bytes of the text whose own view holds it (a
    span's end inside a reference maps to the reference's start: the source may read
    more, never less)."""
    data = text.encode("utf-8", "surrogatepass")
    saved = encoded_text.CHUNK
    encoded_text.CHUNK = (1, 5, 1024)[chunk]  # marks and chunk edges everywhere, or none
    try:
        seen = view(data)
        if seen is None:
            return
        for start in range(len(seen.data)):
            for end in range(start + 1, min(len(seen.data), start + 4) + 1):
                s, e = seen.original(start, end)
                assert 0 <= s <= e <= len(data)
                source = view(data[s:e])
                decoded = data[s:e] if source is None else source.data
                assert seen.data[start:end] in decoded or e == len(data) and s == len(data), (text, start, end, s, e)
    finally:
        encoded_text.CHUNK = saved


def test_a_span_maps_back_over_references_and_runs_of_escapes():
    seen = view(b"a\\_b\\*\\\\c &#95; \\u005f \xc2\xad\xef\xbd\x87")  # soft hyphen, full-width g
    assert seen.data == b"a_b*\\c _ _ g"
    assert seen.original(1, 2) == (1, 3)            # "_" <- "\_"
    assert seen.original(4, 5) == (6, 8)            # "\" <- "\\" (in the run "\*\\")
    assert seen.original(7, 8) == (10, 15)          # "_" <- "&#95;"
    assert seen.original(9, 10) == (16, 22)         # "_" <- "\u005f"
    assert seen.original(11, 12) == (25, 28)        # "g" <- "ｇ" (the soft hyphen before it: no part)
    assert seen.original(10, 12) == (22, 28)        # " g" <- " ", soft hyphen, "ｇ"
