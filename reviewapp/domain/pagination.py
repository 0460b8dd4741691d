"""Opaque keyset cursors: (timestamp, id) encoded as URL-safe text."""

from __future__ import annotations

import base64
from datetime import datetime, timezone


def encode_cursor(at: datetime, row_id: int | str) -> str:
    """Encode the sort key of the last row of a page."""
    raw = f"{at.astimezone(timezone.utc).isoformat()}|{row_id}"
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
