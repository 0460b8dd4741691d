"""``domain.hex_text``: which runs of hex digits are read as the text they encode."""

from __future__ import annotations

import hashlib

import pytest

from reviewapp.domain import hex_text

NOTE = b"a note of 16+ chars"


def _run(data: bytes) -> bytes | None:
    start = data.index(b"<") + 1
    end = data.index(b">")
    data = data.replace(b"<", b" ").replace(b">", b" ")
    return hex_text.text_of(data, start, end)


@pytest.mark.parametrize(("data", "expected"), [
    (b"x <" + NOTE.hex().encode() + b"> y", NOTE),
    (b"x <" + NOTE.hex().upper().encode() + b"> y", NOTE),
    (b"x <0x" + NOTE.hex().encode() + b"> y", NOTE),
    (b"x <" + b"tab\there\nline\r!!!!!".hex().encode() + b"> y", b"tab\there\nline\r!!!!!"),
    (b"x <" + NOTE.hex().encode()[1:] + b"> y", None),  # odd number of digits
    (b"x <" + hashlib.sha256(b"x").hexdigest().encode() + b"> y", None),  # binary
    (b"x <" + (NOTE + b"\x00").hex().encode() + b"> y", None),  # NUL is no text
    (b"x <" + (NOTE + b"\x7f").hex().encode() + b"> y", None),  # DEL neither
    (b"x <" + "é is not ascii!!!".encode().hex().encode() + b"> y", None),
])
def test_a_run_is_text_only_when_every_byte_is_printable_ascii(data, expected):
    assert _run(data) == expected


def test_a_run_glued_to_a_letter_or_digit_is_part_of_a_word():
    digits = NOTE.hex().encode()
    for glued in (b"g" + digits, digits + b"z", b"Z" + digits, digits + b"9", b"_" + digits):
        start = glued.index(digits)
        expected = NOTE if glued.startswith(b"_") else None  # "_" glues nothing
        assert hex_text.text_of(glued, start, start + len(digits)) == expected, glued
    assert hex_text.text_of(digits, 0, len(digits)) == NOTE  # the whole text


def test_the_floor_is_sixteen_bytes():
    assert hex_text.MIN_DIGITS == 32
    assert hex_text.PATTERN == r"(?:0[xX])?[0-9A-Fa-f]{32,}"


def test_the_printable_bounds_and_the_capital_prefix():
    """Mutation pins, by hand: 0x1f (unit separator) is no text, 0x7e (~) is; '0X' is a
    prefix like '0x'."""
    from reviewapp.domain.hex_text import text_of

    tilde = b"7e" * 16  # 16 x '~'
    assert text_of(tilde, 0, len(tilde)) == b"~" * 16
    separator = b"1f" + b"41" * 15  # one 0x1f, then 15 x 'A'
    assert text_of(separator, 0, len(separator)) is None
    prefixed = b"0X" + b"41" * 16
    assert text_of(prefixed, 0, len(prefixed)) == b"A" * 16
