"""Runs of hex digits that encode text, for redaction (SPEC 4).

Why: ``6768705f41316232...`` is a GitHub token (``ghp_A1b2...``) anyone can decode with
``bytes.fromhex``. ``Redactor`` reads each such run as the text it encodes, scans that text
with its rules (and its base64 runs, like ``base64_text``'s), and replaces a run whose text
holds a secret, or is a ``user:password`` pair, whole.

Which runs (``PATTERN``, RE2 syntax): at least ``MIN_DIGITS`` hex digits (16 bytes of
text), optionally after ``0x``, taken only whole (no letter or digit glued before or after
it) and of even length. A run is read as text only when every decoded byte is printable
ASCII (0x20..0x7E, tab, newline, return): a digest, a key or a random id (MD5, a git SHA-1,
SHA-256, SHA-512) decodes to binary, where a byte is printable with odd 98/256, so a
16-byte run passes by chance about twice in ten million and a 20-byte git SHA far less
often; and even then the decoded text is only replaced when the rules find a secret in it.
UUIDs (dashes every 4 to 12 digits), MAC and IPv6 addresses are shorter runs than the floor.

Linear: RE2 finds the runs in one pass; each is decoded once at C speed
(``binascii.unhexlify``) and checked with one ``bytes.translate``; the texts of all runs
are scanned together in one pass (``Redactor.many``'s join).
"""

from __future__ import annotations

import binascii

from .base64_text import _TEXT  # printable ASCII: the same test as a base64 run's

MIN_DIGITS = 32  # hex digits of the shortest run read as text (16 bytes)
PATTERN = r"(?:0[xX])?[0-9A-Fa-f]{" + str(MIN_DIGITS) + ",}"
_GLUE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def text_of(data: bytes, start: int, end: int) -> bytes | None:
    """The printable ASCII that the hex run ``data[start:end]`` (``PATTERN``'s match, an
    optional ``0x`` first) encodes, or ``None``: when a letter or digit is glued before
    ``start`` or after ``end`` (the run is part of a word), when it has an odd number of
    digits, or when it encodes anything but printable ASCII."""
    if (start > 0 and data[start - 1] in _GLUE) or (end < len(data) and data[end] in _GLUE):
        return None
    run = data[start:end]
    if run[:2] in (b"0x", b"0X"):
        run = run[2:]
    if len(run) % 2:
        return None
    decoded = binascii.unhexlify(run)
    return None if decoded.translate(None, _TEXT) else decoded
