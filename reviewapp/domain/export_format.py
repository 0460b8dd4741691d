"""Serialise export rows as CSV or JSONL text chunks (SPEC 8). Pure: stdlib only.

Both the HTTP download (``web/exports.py``) and the CLI (``flask export``) feed the dict
rows of ``services/exports.py`` through these generators, so the bytes are the same
whichever way an admin exports.

* CSV: the standard library's ``csv`` writer (RFC 4180 quoting, ``\\r\\n`` line ends,
  newlines inside fields kept inside quotes), every text cell through
  ``csv_safety.neutralise_cell``; an optional UTF-8 byte-order mark (U+FEFF) first, which
  Excel needs to read UTF-8 (CJK, emoji, RTL) correctly.
* JSONL: one ``json.dumps(row, ensure_ascii=False)`` per line; newlines inside values
  are escaped by JSON, so a line is always one row. Values are exact (no neutralisation).

Chunks are joined up to ``chunk_chars`` characters before they are yielded: a socket
write per row would make a 300,000-row download crawl.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from .csv_safety import neutralise_cell

BOM = "\ufeff"
CHUNK_CHARS = 64 * 1024
FORMATS = ("csv", "jsonl")


def csv_chunks(
    columns: Sequence[str], rows: Iterable[Mapping[str, Any]], *, bom: bool = False,
    chunk_chars: int = CHUNK_CHARS,
) -> Iterator[str]:
    """Yield CSV text: the header row ``columns`` then one line per row (missing keys are
    empty cells). Text cells are formula-neutralised. ``bom`` prefixes U+FEFF."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    if bom:
        buffer.write(BOM)
    writer.writerow(columns)
    writerow, tell = writer.writerow, buffer.tell
    for row in rows:
        writerow(map(neutralise_cell, map(row.get, columns)))
        if tell() >= chunk_chars:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue()


def jsonl_chunks(
    rows: Iterable[Mapping[str, Any]], *, chunk_chars: int = CHUNK_CHARS
) -> Iterator[str]:
    """Yield JSON Lines text: one compact JSON object per row, UTF-8 characters unescaped."""
    parts: list[str] = []
    size = 0
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    for row in rows:
        line = dumps(row) + "\n"
        parts.append(line)
        size += len(line)
        if size >= chunk_chars:
            yield "".join(parts)
            parts.clear()
            size = 0
    if parts:
        yield "".join(parts)


def chunks(
    fmt: str, columns: Sequence[str], rows: Iterable[Mapping[str, Any]], *, bom: bool = False
) -> Iterator[str]:
    """``csv_chunks`` or ``jsonl_chunks`` by ``fmt`` (one of ``FORMATS``); the BOM applies
    to CSV only. Raises ``ValueError`` for another format."""
    if fmt == "csv":
        return csv_chunks(columns, rows, bom=bom)
    if fmt == "jsonl":
        return jsonl_chunks(rows)
    raise ValueError(f"format must be one of {', '.join(FORMATS)}")
