"""Runs of base64 that encode text (domain/base64_text.py, SPEC 4), read directly: which
runs the pattern takes, what ``text_of`` decodes (whole runs only, printable ASCII only,
base64 of base64 peeled three levels, padding dropped or not, base64url) and where
``after_slash`` starts the second reading of a run in a URL's path. Every expected value
is the text the test encoded itself, or a position counted by hand."""

from __future__ import annotations

import base64
import re

import pytest

from reviewapp.domain.base64_text import PATTERN, after_slash, text_of

PAIR = b"user:hunter2 hunter2"  # not base64 itself (':' and ' '), so never peeled further


def b64(data: bytes, times: int = 1) -> bytes:
    for _ in range(times):
        data = base64.b64encode(data)
    return data


def whole(run: bytes) -> bytes | None:
    return text_of(run, 0, len(run))


def test_the_pattern_takes_base64_of_text_whole_and_not_binary_nor_hex():
    run = b64(b"user:hunter2hunter2")
    assert re.fullmatch(PATTERN.encode(), run)
    assert re.fullmatch(PATTERN.encode(), run.rstrip(b"="))  # padding dropped
    assert re.match(PATTERN.encode(), b64(bytes(range(0x80, 0xC0)))) is None  # high bytes
    assert re.search(PATTERN.encode(), b"0123456789abcdef" * 4) is None  # a hex digest


@pytest.mark.parametrize("text", [
    PAIR,
    b"a space, a tilde ~ and a tab\there",  # 0x20 and 0x7E are the ends of printable ASCII
    b"lines\r\nend ~",
])
def test_a_whole_run_decodes_to_its_printable_text(text):
    assert whole(b64(text)) == text


@pytest.mark.parametrize("byte", [b"\x1f", b"\x7f", b"\x00", b"\x80", b"\xe9"])
def test_a_run_that_encodes_anything_but_printable_ascii_is_no_text(byte):
    assert whole(b64(b"user:hunter2" + byte + b"hunter2")) is None


@pytest.mark.parametrize("length", range(12, 24))
def test_dropped_padding_is_restored_whatever_the_length(length):
    text = (b"pw:" + b"Secret-value-1234567890")[:length]
    run = b64(text)
    assert whole(run.rstrip(b"=")) == text
    assert whole(run) == text


def test_a_run_ending_in_x_keeps_its_last_character():
    text = b"user:hunterW"  # 12 bytes, no padding; 'W' = 0x57, low six bits 23 = 'X'
    run = b64(text)
    assert run.endswith(b"X") and not run.endswith(b"=")
    assert whole(run) == text


def test_base64url_reads_as_the_standard_alphabet():
    text = b"key:>>>???~~~ ok"  # '>' '?' '~' give 62 and 63 in base64
    standard = b64(text)
    assert b"+" in standard and b"/" in standard
    url = base64.urlsafe_b64encode(text)
    assert (b"-" in url, b"_" in url, whole(url), whole(url.rstrip(b"="))) == (True, True, text, text)


def test_a_run_with_a_character_outside_base64_is_no_valid_base64():
    text = PAIR[:18]
    run = b64(text)  # 24 characters, no padding: with one more, 3 '=' are added
    assert len(run) == 24 and whole(run) == text
    for odd in (b".", b"!", b" "):
        assert whole(run[:4] + odd + run[4:]) is None  # not skipped over


def test_base64_of_base64_is_peeled_three_levels_and_no_more():
    assert whole(b64(PAIR, 2)) == PAIR
    assert whole(b64(PAIR, 3)) == PAIR
    assert whole(b64(PAIR, 4)) == b64(PAIR)  # the fourth level is left to the caller's scan


def test_a_token_of_letters_and_digits_is_kept_when_its_own_decoding_is_no_text():
    token = b"AbCdEfGh12345678"
    assert base64.b64decode(token).translate(None, bytes(range(0x20, 0x7F))) != b""  # binary
    assert whole(b64(token)) == token


def test_binary_base64_is_no_text():
    assert whole(b64(bytes(range(0x80, 0x98)))) is None


def test_a_run_is_taken_only_whole():
    run = b64(PAIR)
    n = len(run)
    assert text_of(b" " + run, 1, n + 1) == PAIR
    assert text_of(b"A " + run, 2, n + 2) == PAIR  # only the character just before counts
    assert text_of(run + b" ", 0, n) == PAIR
    assert text_of(run + b"-", 0, n) == PAIR  # '-' and '_' glue nothing: base64url only
    assert text_of(b"A" + run, 1, n + 1) is None  # a base64 character before it
    assert text_of(b"A " + run + b"A", 2, n + 2) is None  # ... or after it
    assert text_of(run + b"=", 0, n) is None  # padding after it
    assert text_of(b"AAAA" + run[4:], 4, n) is None  # a match starting inside a longer run


def test_a_run_with_nothing_after_it_ends_the_data():
    run = b64(b"user:hunter2hunter2!")  # 28 characters, ends in 'IQ=='
    assert text_of(run, 0, len(run)) == b"user:hunter2hunter2!"


def test_a_slash_before_a_run_glues_it_unless_the_caller_reads_it_as_a_path():
    run = b64(PAIR)
    data = b"https://x.example/" + run
    start = len(b"https://x.example/")
    assert text_of(data, start, len(data)) is None
    assert text_of(data, start, len(data), slash_before=False) is None
    assert text_of(data, start, len(data), slash_before=True) == PAIR
    assert text_of(b"x0" + run, 2, len(run) + 2, slash_before=True) is None  # '0' is no slash
    assert text_of(b"x." + run, 2, len(run) + 2, slash_before=True) == PAIR  # '.' glues nothing
    assert text_of(b"x." + run, 2, len(run) + 2) == PAIR


@pytest.mark.parametrize(("data", "start", "end", "expected"), [
    (b"/AAAABBBB", 1, 9, 1),  # a '/' just before the run: read the run as it is
    (b"https://x.example/AAAABBBB", 18, 26, 18),
    (b"/ AAAABBBB", 2, 10, None),  # the '/' is not just before it
    (b"AAAA/BBBB/", 0, 9, 5),  # the first '/' inside the run (the data's last byte is none of it)
    (b" AAAA/BBBB", 1, 10, 6),
    (b"/AAAA", 0, 5, 1),  # a run starting with '/'
    (b"AAAA/B", 0, 6, 5),
    (b"AAAA/", 0, 5, None),  # nothing of the run left after it
    (b"AAAABBBB", 0, 8, None),  # no '/'
    (b"AAAA/BBBB", 0, 4, None),  # a '/' after the run is not inside it
    (b"0AAAABBBB", 1, 9, None),
    (b".AAAABBBB", 1, 9, None),
])
def test_after_slash_starts_the_second_reading_after_the_first_slash(data, start, end, expected):
    assert after_slash(data, start, end) == expected
