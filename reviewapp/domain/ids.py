"""The one rule for the agent's identifiers (SPEC 3, 9, 10): a session id, a tool-call
id, a tool name, a step id must be seen to be told apart. Stdlib only.

An identifier is refused when it holds a control character (category Cc: NUL, tab,
newline, escape ...) or when nothing of it is visible: only whitespace and characters a
browser draws as nothing (``encoded_text.invisible``: zero-width characters, direction
marks, the BOM ...) and combining marks. New-user finding: a ``session_id`` of
zero-width spaces was accepted, a session nobody can see or type.
"""

from __future__ import annotations

import unicodedata

from .encoded_text import invisible

CONTROL = "must not hold control characters"
NOTHING_VISIBLE = "must hold a visible character (not only spaces or invisible characters)"


def id_problem(value: str) -> str | None:
    """Why ``value`` is no usable identifier (``CONTROL``, ``NOTHING_VISIBLE``), or
    ``None`` when it is one. Linear in its length."""
    visible = False
    for char in value:
        category = unicodedata.category(char)
        if category == "Cc":
            return CONTROL
        if not visible and not (char.isspace() or invisible(ord(char)) or category in ("Mn", "Me")):
            visible = True
    return None if visible else NOTHING_VISIBLE
