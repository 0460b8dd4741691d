"""Opaque keyset cursors: a sort order's name and a row's key values, as URL-safe text
(``services/keyset.py`` is the one recipe that uses them)."""

from __future__ import annotations

import base64
import json


def encode_keyset(sort: str, values: list[object]) -> str:
    """Encode the sort key of the last row of a page for any sort order.

    ``values`` are the row's sort values in order (JSON-able: int, str, ISO datetimes as
    text, None); ``sort`` names the order so a cursor from one order is refused by another.
    """
    raw = json.dumps([sort, values], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_keyset(cursor: str, sort: str, arity: int) -> list[object]:
    """Decode ``encode_keyset`` output made for ``sort`` with ``arity`` values.

    Raises ``ValueError`` on anything malformed, on a cursor of another sort order and on
    values that are not int / float / str / None.
    """
    padded = cursor + "=" * (-len(cursor) % 4)
    try:
        raw = base64.urlsafe_b64decode(padded.encode()).decode()
        decoded = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError("malformed cursor") from exc
    if (not isinstance(decoded, list) or len(decoded) != 2 or decoded[0] != sort
            or not isinstance(decoded[1], list) or len(decoded[1]) != arity):
        raise ValueError("malformed cursor")
    values = decoded[1]
    for value in values:
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float, str))):
            raise ValueError("malformed cursor")
    return values
