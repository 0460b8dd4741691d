"""Runs of base64 that encode text, for redaction (SPEC 4).

Why: ``Z2hwX0FiM2RFNWdIN2pLOW1OMXBRM3NUNXZYN3pBOWNFMWdJM2tNNQ==`` is a GitHub token
anyone can decode, and ``dXNlcjpodW50ZXIyaHVudGVyMg==`` a ``user:password`` pair outside
any ``Authorization: Basic`` header. ``Redactor`` scans the text each run encodes with
its rules and replaces a run whose text holds a secret, or is a ``user:password`` pair.

Which runs (``PATTERN``, RE2 syntax): base64 of *text* only. Each group of four base64
characters of printable ASCII (bytes 0x20..0x7E, tab, newline, return) draws its first
three characters from smaller sets (the high bit of each byte is 0, the first byte is no
control character), so the pattern asks for at least four such groups (12 bytes of
text) from the start of the run. Image data, hashes and keys in base64 (binary) fail it
almost at once and are never decoded, and nor are hex digests (``[0-9a-f]`` fits the
second character's set only through ``0-3``). The standard alphabet (``+ /``) and
base64url's (``- _``, read as ``+ /``; padding dropped or not): base64url of a line
holding a token has ``_`` or ``-`` wherever a group's last character is 62 or 63, and
split there its pieces decode to nothing or to half the secret.

A ``/`` is a base64 character, but also a URL path's separator: ``x.example/<base64>``.
A run that does not read as text whole is read once more from just after the first ``/``
before or inside it (``after_slash``), so base64 in a URL's path is decoded too: at most
two readings of each run, still linear.

``text_of`` takes a run only whole (no base64 character glued before or after it: a
match that starts inside a longer run is no run) and only when it decodes to printable
ASCII, peeling base64 of base64 up to three levels; the caller then scans the texts
with its rules, their base64 runs in turn one level more (base64 of YAML holding
base64: two levels of text; a third is not decoded). Linear: RE2 finds the runs; each
is decoded at most three times (C speed, each level 3/4 of the one above) and the texts
of a level are scanned in one pass (``Redactor.many``'s join), so the whole costs less
than three scans.
"""

from __future__ import annotations

import base64
import binascii

PATTERN = (r"(?:[CDI-Za-f][0-3AC-HQS-Xgi-nwyz][014589ABEFIJMNQRUVYZcdghklopstwx][A-Za-z0-9+/_-]){4,}"
           r"[A-Za-z0-9+/_-]{0,3}={0,2}")
_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_ALPHABET_BYTES = bytes(sorted(_ALPHABET)) + b"-_"  # base64 or base64url
_URLSAFE = bytes.maketrans(b"-_", b"+/")
_TEXT = bytes(range(0x20, 0x7F)) + b"\t\n\r"
DEPTH = 3  # levels of base64 peeled: base64 of base64 of base64 of a secret
SLASH = 0x2F


def _decoded(run: bytes) -> bytes | None:
    run = run.rstrip(b"=").translate(_URLSAFE)
    try:
        decoded = base64.b64decode(run + b"=" * (-len(run) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    return None if decoded.translate(None, _TEXT) else decoded


def text_of(data: bytes, start: int, end: int, *, slash_before: bool = False) -> bytes | None:
    """The printable ASCII that the base64 run ``data[start:end]`` encodes, or ``None``:
    when the run continues before ``start`` or after ``end``, is no valid base64 (its
    padding restored when it was dropped), or encodes anything else. ``slash_before``:
    a ``/`` just before ``start`` ends a URL path's segment rather than continuing the run
    (the caller's second reading of a run that read as glued, ``after_slash``). Base64 of base64 is
    peeled (``DEPTH`` levels in all, ``b64(b64(b64(token)))``) while the text is nothing
    but base64 that decodes to text in turn; a token of letters and digits (which is
    such a run) is kept when its decoding is no text."""
    if start > 0 and data[start - 1] in _ALPHABET and not (slash_before and data[start - 1] == 0x2F):
        return None
    if end < len(data) and (data[end] in _ALPHABET or data[end] == 0x3D):
        return None
    decoded = _decoded(data[start:end])
    for _ in range(DEPTH - 1):
        if decoded is None or decoded.rstrip(b"=").translate(None, _ALPHABET_BYTES):
            return decoded  # not a run of base64 itself
        inner = _decoded(decoded)
        if inner is None:
            return decoded  # letters and digits, but no base64 of text: a token itself
        decoded = inner
    return decoded


def after_slash(data: bytes, start: int, end: int) -> int | None:
    """Where the second reading of the run ``data[start:end]`` starts: just after a ``/``
    right before ``start``, else just after the first ``/`` inside the run (``None``
    when there is none, or nothing of the run is left after it). Read the run from there
    with ``text_of(..., slash_before=True)``."""
    if start > 0 and data[start - 1] == SLASH:
        return start
    inside = data.find(b"/", start, end)
    return inside + 1 if 0 <= inside < end - 1 else None
