"""Pins of ``domain.encoded_text`` that ``tools/mutate.py`` found loose when it runs
against ``tests/unit/test_encoded_text.py`` alone: the invisible characters' table and
ranges, the wide spaces and the second view, what ``look_alikes_only`` reads as prose,
the bound on the decodings cache. Every expected value is worked out by hand from
Unicode's data (category, NFKC) and the module doc, not by the code under test."""

from __future__ import annotations

import unicodedata

import pytest

from reviewapp.domain import encoded_text
from reviewapp.domain.encoded_text import invisible, look_alikes_only, replaced_spans, view, views

# The default-ignorable characters that are not of category Cf, by hand (module doc):
# combining grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian free
# variation selectors, Hangul filler, half-width Hangul filler.


@pytest.fixture(autouse=True)
def _fresh_decodings():
    """Each test decodes its references itself (the module caches decodings by their text)."""
    encoded_text._REPLACEMENTS.clear()


NOT_CF_INVISIBLE = (0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F,
                    0x3164, 0xFFA0)


@pytest.mark.parametrize("code", NOT_CF_INVISIBLE)
def test_the_default_ignorables_outside_cf_are_invisible(code):
    assert invisible(code)


@pytest.mark.parametrize("code", [
    0x034E, 0x0350,  # combining marks beside the grapheme joiner (Mn, drawn)
    0x115E, 0x1161, 0x3163, 0x3165, 0xFFA1,  # Hangul letters beside the fillers (Lo)
    0x17B3, 0x17B6,  # Khmer letter / vowel sign beside the inherent vowels
    0x180A, 0x1810,  # Mongolian nirugu (Po), digit zero (Nd)
    0xFDFF, 0xFE10,  # just outside the variation selectors U+FE00..U+FE0F
    0xDFFFF, 0xE1000,  # just outside the tag block and VS 17-256 (U+E0000..U+E0FFF)
    0x41, 0x20, 0xA0,  # a letter, a space, a no-break space
])
def test_what_is_drawn_is_not_invisible(code):
    assert not invisible(code)


@pytest.mark.parametrize("code", [0x00AD, 0x200B, 0x200E, 0x202E, 0x2060, 0xFEFF, 0xE0001])
def test_a_format_character_is_invisible(code):
    # Category Cf: soft hyphen, zero-width space, LRM, RLO, word joiner, BOM, language tag.
    assert invisible(code)


def test_the_character_table_is_built_once_however_joined_is_spelt():
    # functools.cache keys on the arguments as spelt: character_table() and
    # character_table(False) were two entries, and the table was built twice a process
    # (~1.4 s of CPU each, inside whichever request first needed each spelling).
    encoded_text._character_table.cache_clear()
    plain = encoded_text.character_table()
    assert encoded_text.character_table(False) is plain
    assert encoded_text.character_table(joined=False) is plain
    assert encoded_text.character_table(joined=0) is plain
    assert encoded_text.character_table(True) is encoded_text.character_table(joined=True)
    assert encoded_text._character_table.cache_info().misses == 2


def test_the_character_table_is_the_per_character_definition_for_every_code_point():
    # Built the plain way, code point by code point, from the module doc's definition:
    # the build skips the NFKC of unassigned and private-use code points, which must
    # change nothing. (Built afresh here, so that this test is the one that runs the build.)
    encoded_text._character_table.cache_clear()
    expected: dict[int, str | None] = {}
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        if invisible(code) or unicodedata.category(char) == "Mn":
            expected[code] = None
            continue
        normal = encoded_text._LOOK_ALIKES.get(char) or unicodedata.normalize("NFKC", char)
        if normal != char:
            expected[code] = normal
    assert encoded_text.character_table() == expected


def test_the_invisible_ranges_end_where_they_end_in_the_table():
    encoded_text._character_table.cache_clear()
    table = encoded_text.character_table()
    assert table[0xFE0F] is None and table[0xE0FFF] is None  # last variation selector, last tag range
    assert table[0xFE10] == ","  # the next one: PRESENTATION FORM FOR VERTICAL COMMA, NFKC ","
    assert 0xE1000 not in table  # unassigned, after the range: its own form


def test_build_tables_builds_both_views_translations():
    encoded_text._character_table.cache_clear()
    encoded_text._translation.cache_clear()
    encoded_text.build_tables()
    assert encoded_text._translation.cache_info().currsize == 2
    assert encoded_text._character_table.cache_info().currsize == 2
    plain, joined = encoded_text._translation(False), encoded_text._translation(True)
    assert plain[0x41] == 0x41 and plain[0xA0] == " " and joined[0xA0] is None


def test_the_character_table_removes_reads_alike_and_normalises_per_character():
    # A fresh build (it is cached per process), so that what it does is seen here.
    encoded_text._character_table.cache_clear()
    table, joined = encoded_text.character_table(), encoded_text.character_table(joined=True)
    assert table[0x200B] is None and table[0x00AD] is None  # Cf: removed
    assert table[0x0301] is None  # combining acute (Mn): removed
    assert table[0x3164] is None  # Hangul filler (default-ignorable, Lo): removed
    assert table[0x0440] == "p" and table[0x03C1] == "p"  # Cyrillic er, Greek rho
    assert table[0xFF47] == "g" and table[0x212A] == "K"  # full-width g, Kelvin sign (NFKC)
    assert table[0x00A0] == " " and table[0x2003] == " "  # no-break, em space: a space
    for kept in (0x41, 0x7F, 0xE9, 0x1680, 0xD800, 0xDC80):  # their own NFKC form; surrogates
        assert kept not in table
    assert joined[0x00A0] is None and joined[0x2003] is None and joined[0x1680] is None
    assert joined[0x0440] == "p" and joined[0x200B] is None
    assert set(joined) - set(table) == {0x1680}


@pytest.mark.parametrize("code", [0xFE00, 0xFE0F, 0xE0000, 0xE0FFF, 0xE0041])
def test_both_ends_of_the_invisible_ranges_are_invisible(code):
    # U+E0000 and U+E0FFF are unassigned (Cn): only the range makes them invisible.
    assert invisible(code)


@pytest.mark.parametrize("char", ["\u3164", "\uffa0", "\u115f", "\u1160"])
def test_a_hangul_filler_inside_a_word_is_removed_in_the_view(char):
    # NFKC alone would read U+3164 and U+FFA0 as U+1160 (a filler still); the view drops them.
    assert view(f"ghp_ab{char}cd".encode()).data == b"ghp_abcd"


def test_every_listed_zero_width_character_is_removed_in_the_view():
    assert set(encoded_text.ZERO_WIDTH) == {"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}
    for char in encoded_text.ZERO_WIDTH:
        assert view(f"a{char}b".encode()).data == b"ab", repr(char)


# The spaces of category Zs but " " (module doc), by hand; U+1680 (Ogham) is the only
# one whose NFKC form is not " ".
WIDE = (0x00A0, *range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000)


@pytest.mark.parametrize("code", WIDE)
def test_a_wide_space_reads_as_a_space_and_is_removed_in_the_second_view(code):
    assert [v.data for v in views(f"a{chr(code)}b".encode())] == [b"a b", b"ab"]


def test_the_ogham_space_mark_gets_the_second_view_alone():
    # No NFKC form: the first view would be the text itself, so there is none.
    assert [v.data for v in views("a\u1680b".encode())] == [b"ab"]


@pytest.mark.parametrize(("char", "expected"), [
    ("\x9f", []), ("\u00a1", []), ("\u167f", []), ("\u1681", []), ("\u1fff", []),
    ("\u2030", []), ("\u205e", []), ("\u2fff", []), ("\u3001", []),  # drawn as themselves
    ("\u200b", [b"ab"]), ("\u202e", [b"ab"]), ("\u2060", [b"ab"]),  # invisible: first view only
])
def test_a_character_beside_the_wide_spaces_gets_no_second_view(char, expected):
    assert [v.data for v in views(f"a{char}b".encode())] == expected


def test_the_second_view_of_a_percent_encoded_text_joins_after_the_percent_level():
    data = b"ghp%5Fabc\xc2\xa0def"  # "ghp_abc<NBSP>def" with the "_" encoded
    first, second = views(data)
    assert first.data == b"ghp_abc def"
    assert second.data == b"ghp_abcdef"
    assert second.original(0, 10) == (0, 14)  # the whole text (9 + 2 + 3 bytes)
    assert second.original(3, 4) == (3, 6)  # "_" <- "%5F"
    assert second.original(7, 8) == (11, 12)  # "d" <- "d" (the NBSP before it: no part)


def test_the_second_view_of_a_text_with_references_and_an_ogham_space():
    data = "a&#95;b\u1680c".encode()  # U+1680 has no NFKC form: no character level
    only, second = views(data)
    assert only.data == "a_b\u1680c".encode()
    assert second.data == b"a_bc"
    assert second.original(1, 2) == (1, 6)  # "_" <- "&#95;"
    assert second.original(3, 4) == (10, 11)  # "c" after the 3 bytes of U+1680


def test_no_view_of_ascii_or_of_text_that_stays():
    assert views(b"plain ascii") == ()
    assert views("caf\u00e9".encode()) == ()  # é is its own NFKC form


@pytest.mark.parametrize(("text", "expected"), [
    ("хохо-хохо-хохо", True),  # Cyrillic only: prose that reads as "xoxo-..."
    ("ΑΒΕ", True),  # Greek capitals
    ("ｘｏ", False),  # full-width Latin: NFKC gives ASCII letters, no Cyrillic or Greek
    ("хохо1", False),  # a digit of its own
    ("хохоb", False),  # a Latin letter of its own
    ("хохоｂ", False),  # a full-width Latin letter is one after NFKC
    ("ghp_abc", False),  # no Cyrillic or Greek at all
    ("х-х", True),
    ("", False),
])
def test_look_alikes_only_reads_a_span_of_cyrillic_or_greek_letters_as_prose(text, expected):
    assert look_alikes_only(text.encode()) is expected


def test_the_decodings_cache_is_bounded_and_keeps_short_matches_only():
    encoded_text._REPLACEMENTS.clear()
    for n in range(5000):  # 5000 distinct references, one view
        view(f"&#{n + 1};".encode())
        assert len(encoded_text._REPLACEMENTS) <= 4096
    encoded_text._REPLACEMENTS.clear()
    ref64 = b"&#" + b"0" * 59 + b"65;"  # "A" as a decimal reference of 64 bytes
    ref65 = b"&#" + b"0" * 60 + b"65;"  # ... and of 65
    assert (len(ref64), len(ref65)) == (64, 65)
    assert view(b"x" + ref64 + b"y").data == b"xAy"
    assert view(b"x" + ref65 + b"y").data == b"xAy"
    assert ref64 in encoded_text._REPLACEMENTS
    assert ref65 not in encoded_text._REPLACEMENTS


@pytest.mark.parametrize(("reference", "expected"), [
    (b"&#x00000000005f;", b"_"),  # leading zeros of a hex reference go before the length check
    (b"&#X00000000005F;", b"_"),  # an upper-case X too
    (b"&#0000000000095;", b"_"),  # and of a decimal one
    (b"&#000;", "\ufffd".encode()),  # NUL as a reference reads as U+FFFD (html.unescape)
    (b"&#123456789;", "\ufffd".encode()),  # past U+10FFFF: U+FFFD
    (b"&#x110000;", "\ufffd".encode()),
    (b"&#" + b"1" * 5000 + b";", "\ufffd".encode()),  # past int()'s 4,300 digits: no ValueError
    (b"&#" + b"0" * 5000 + b"95;", b"_"),  # 5,000 leading zeros: still "_"
    (b"&#x" + b"0" * 5000 + b"5f;", b"_"),
    (b"&#95", b"_"), (b"&#x5F", b"_"),  # without the semicolon
    (b"&lowbar;", b"_"), (b"&amp;", b"&"), (b"&amp", b"&"),  # named: as html.unescape
])
def test_a_numeric_reference_decodes_as_html_reads_it(reference, expected):
    assert view(b"a" + reference + b" b").data == b"a" + expected + b" b"
    assert view(b"a&lowbar b") is None  # "lowbar" needs its semicolon (html.unescape)


@pytest.mark.parametrize("byte", [b"\x80", b"\xc3", b"\xff"])  # the lowest, a lead alone, the highest
def test_a_byte_that_is_no_utf8_counts_one_byte_on_the_way_back(byte):
    # The byte stays as it is, then three full-width "g" (3 bytes each).
    seen = view(byte + "\uff47\uff47\uff47".encode())
    assert seen.data == byte + b"ggg"
    assert seen.original(3, 4) == (7, 10)  # the third "g" <- bytes 7..10
    assert seen.original(1, 2) == (1, 4)


def test_walks_counts_the_positions_found_by_a_walk():
    seen = view("a\u200bb".encode())
    assert seen.walks == 0
    assert seen.original(0, 1) == (0, 4)  # "a" and the zero-width space after it
    assert seen.walks == 2  # start and end: both in the one chunk decoding changed


def test_a_position_in_a_chunk_that_decoding_left_alone_takes_no_walk():
    # 1,500 "a", a zero-width space, "b": the first chunk (1,024 bytes) decodes to itself.
    seen = view(b"a" * 1500 + "\u200b".encode() + b"b")
    assert seen.data == b"a" * 1500 + b"b"
    assert seen.original(0, 1) == (0, 1)
    assert seen.original(1000, 1010) == (1000, 1010)
    assert seen.walks == 0
    assert seen.original(1500, 1501) == (1503, 1504)  # "b", after the 3 bytes of U+200B
    assert seen.walks == 1  # its start; its end is the end of the text (no walk)


@pytest.mark.parametrize(("escape", "expected"), [
    (b"\\u005f", b"_"), (b"\\u005F", b"_"),
    (b"\\ud83d\\ude00", "\U0001f600".encode()),  # 0x10000 + (0x3D << 10) + 0x200 = U+1F600
    (b"\\uD800\\uDC00", "\U00010000".encode()),  # the first pair: U+10000
    (b"\\udbff\\udfff", "\U0010ffff".encode()),  # the last pair: U+10FFFF
    (b"\\ud7ff", "\ud7ff".encode()), (b"\\ue000", "\ue000".encode()),  # beside the surrogates
    (b"\\u0001", b"\x01"),
    (b"\\u0000", b"\\u0000"),  # NUL stays as written (it separates texts)
    (b"\\ud800", b"\\ud800"), (b"\\udfff", b"\\udfff"),  # a lone surrogate stays
])
def test_a_json_escape_decodes_to_its_character(escape, expected):
    seen = view(b"a" + escape + b" b")
    assert (seen.data if seen is not None else b"a" + escape + b" b") == b"a" + expected + b" b"


def test_a_span_ending_where_a_reference_starts_does_not_take_it():
    seen = view(b"ab&#95;c")  # view "ab_c"
    assert seen.original(0, 2) == (0, 2)  # "ab": the reference after it is not part of it
    assert seen.original(2, 3) == (2, 7)  # "_" <- "&#95;"


def test_replaced_spans_over_four_passes():
    # Text "0123456789abcdefghij". 1: "23" -> 6 bytes; 2: "89" (now at 12..14) -> 1 byte;
    # 3: "0" -> 3 bytes (the earlier replacements move on by 2); 4: now 3..5, that is the
    # "1" and the start of the first replacement: takes text 1..4.
    passes = [[(2, 4, 6)], [(12, 14, 1)], [(0, 1, 3)]]
    assert replaced_spans(passes) == [(0, 1), (2, 4), (8, 10)]
    assert replaced_spans([*passes, [(3, 5, 2)]]) == [(0, 1), (1, 4), (8, 10)]


def test_replaced_spans_of_a_pass_starting_inside_an_earlier_replacement():
    # "aa SECRET bb KEY cc": SECRET (3..9) -> [redacted] (3..13); then 5..15 of that
    # ("redacted] b") -> 1 byte: all of the first replacement and the " b" after it (9..11).
    assert replaced_spans([[(3, 9, 10)], [(5, 15, 1)]]) == [(3, 11)]
    # An edit ending where the earlier replacement starts does not take it.
    assert replaced_spans([[(3, 9, 10)], [(0, 3, 1)]]) == [(0, 3), (3, 9)]


def test_replaced_spans_when_an_earlier_replacement_lies_between_two_edits():
    # Pass 2 grows "a" (0..1) by 2 and replaces "Y" (20..22 after pass 1: text 16..18);
    # pass 3 replaces 14..16, the end of [redacted] (now 5..15) and a byte after it.
    passes = [[(3, 9, 10)], [(0, 1, 3), (20, 22, 1)]]
    assert replaced_spans(passes) == [(0, 1), (3, 9), (16, 18)]
    assert replaced_spans([*passes, [(14, 16, 1)]]) == [(0, 1), (3, 10), (16, 18)]


@pytest.mark.parametrize(("old", "new", "expected"), [
    (b"k=abc;;", b"k=X;;", (2, 5)),  # a shared suffix of two bytes
    (b"xyabcxy", b"xyQQQQxy", (2, 5)),
    (b"abc", b"abc", (3, 3)),
    (b"", b"abc", (0, 0)),
])
def test_changed_keeps_the_longest_shared_suffix(old, new, expected):
    assert encoded_text.changed(old, new) == expected


def test_the_look_alike_blocks_are_unicodes_block_bounds():
    # Blocks.txt: IPA Extensions 0250..02AF; Greek and Coptic 0370..03FF, Cyrillic
    # 0400..04FF, Cyrillic Supplement 0500..052F (ends exclusive here).
    assert encoded_text.LOOK_ALIKE_BLOCKS == ((0x250, 0x2B0), (0x370, 0x530))


@pytest.mark.parametrize(("text", "expected"), [
    ("\u0250", True), ("\u02af", True),  # the first and last letters of IPA Extensions
    ("\u0251\u0261\u0263", True),  # "ɑɡɣ": IPA look-alikes only
    ("\u024f", False),  # Latin Extended-B, before the block: not a look-alike letter
    ("\u02b0", False),  # modifier letter small h, after it (NFKC: "h", an ASCII letter)
    ("\u0261hp", False),  # script g beside letters of its own
])
def test_look_alikes_only_reads_ipa_letters_as_look_alikes(text, expected):
    assert look_alikes_only(text.encode()) is expected
