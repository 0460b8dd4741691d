"""Opaque keyset cursors (domain/pagination.py): URL-safe base64 of ``[sort, values]``
JSON without padding; anything else is refused with ``ValueError``."""

from __future__ import annotations

import pytest

from reviewapp.domain.pagination import decode_keyset, encode_keyset


@pytest.mark.parametrize("sort, values, cursor", [
    # base64 of the compact JSON, worked out by hand: no padding, no "+" or "/"
    ("newest", [5, "a"], "WyJuZXdlc3QiLFs1LCJhIl1d"),   # 24 characters: none to drop
    ("s", [], "WyJzIixbXV0"),                           # one "=" dropped
    ("s", [12], "WyJzIixbMTJdXQ"),                      # two "=" dropped
])
def test_a_cursor_is_compact_json_in_unpadded_url_safe_base64(sort, values, cursor):
    assert encode_keyset(sort, values) == cursor
    assert decode_keyset(cursor, sort, len(values)) == values


def test_a_cursor_stays_url_safe_for_any_text():
    cursor = encode_keyset("s", ["??>>~"])  # plain base64: WyJzIixbIj8/Pj5+Il1d
    assert cursor == "WyJzIixbIj8_Pj5-Il1d"
    assert decode_keyset(cursor, "s", 1) == ["??>>~"]
    assert decode_keyset(encode_keyset("s", ["é"]), "s", 1) == ["é"]


@pytest.mark.parametrize("values", [[None], [1.5], [-3], [""], [None, 7, "2026-12-01T00:00:00"]])
def test_plain_values_round_trip(values):
    assert decode_keyset(encode_keyset("k", values), "k", len(values)) == values


@pytest.mark.parametrize("cursor", [
    "not-a-cursor!", "__4",                        # not base64; base64 of bytes that are not UTF-8
    "e30",                                         # {}: not a list
    "WyJzIl0",                                     # ["s"]: one element
    "WyJzIixbMV0sMl0",                             # ["s",[1],2]: three elements
    "WyJzIiwxXQ",                                  # ["s",1]: values not a list
    "WyJ0IixbMV1d",                                # ["t",[1]]: another sort order
    "WyJzIixbMSwyXV0",                             # ["s",[1,2]]: two values, one expected
    "WyJzIixbdHJ1ZV1d", "WyJzIixbe31dXQ", "WyJzIixbW11dXQ",  # true, {}, [] as the value
])
def test_anything_else_is_refused(cursor):
    with pytest.raises(ValueError, match="^malformed cursor$"):
        decode_keyset(cursor, "s", 1)
