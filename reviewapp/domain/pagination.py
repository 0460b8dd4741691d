"""Opaque keyset cursors: (timestamp, id) encoded as URL-safe text."""

from __future__ import annotations

import base64
from datetime import UTC, datetime


def encode_cursor(at: datetime, row_id: int | str) -> str:
    """Encode the sort key of the last row of a page."""
    raw = f"{at.astimezone(UTC).isoformat()}|{row_id}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, int]:
    """Decode ``encode_cursor`` output. Raises ``ValueError`` on anything malformed."""
    padded = cursor + "=" * (-len(cursor) % 4)
    try:
        raw = base64.urlsafe_b64decode(padded.encode()).decode()
        at_text, _, id_text = raw.partition("|")
        at = datetime.fromisoformat(at_text)
        return at, int(id_text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError("malformed cursor") from exc


def decode_text_cursor(cursor: str) -> tuple[datetime, str]:
    """Decode ``encode_cursor`` output whose row id is text (e.g. a case UUID).
    Raises ``ValueError`` on anything malformed."""
    padded = cursor + "=" * (-len(cursor) % 4)
    try:
        raw = base64.urlsafe_b64decode(padded.encode()).decode()
        at_text, sep, id_text = raw.partition("|")
        if not sep or not id_text:
            raise ValueError("malformed cursor")
        return datetime.fromisoformat(at_text), id_text
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError("malformed cursor") from exc


def encode_keyset(sort: str, values: list[object]) -> str:
    """Encode the sort key of the last row of a page for any sort order.

    ``values`` are the row's sort values in order (JSON-able: int, str, ISO datetimes as
    text, None); ``sort`` names the order so a cursor from one order is refused by another.
    """
    import json

    raw = json.dumps([sort, values], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_keyset(cursor: str, sort: str, arity: int) -> list[object]:
    """Decode ``encode_keyset`` output made for ``sort`` with ``arity`` values.

    Raises ``ValueError`` on anything malformed, on a cursor of another sort order and on
    values that are not int / float / str / None.
    """
    import json

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
