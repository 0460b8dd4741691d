"""The triage state machine of the not-useful queue (SPEC 3, 8). Pure: stdlib only.

``new -> triaged -> resolved | wont_fix``, and *reopen*: ``resolved | wont_fix -> triaged``.
A lead may also close a new item at once (``new -> resolved | wont_fix``) — an obvious
duplicate needs no separate "triaged" click. A reopened item goes back to ``triaged``,
not ``new``: somebody has already looked at it. Nothing here touches the run's ``status``.
"""

from __future__ import annotations

NEW, TRIAGED, RESOLVED, WONT_FIX = "new", "triaged", "resolved", "wont_fix"
STATES: tuple[str, ...] = (NEW, TRIAGED, RESOLVED, WONT_FIX)
OPEN_STATES: tuple[str, ...] = (NEW, TRIAGED)
CLOSED_STATES: tuple[str, ...] = (RESOLVED, WONT_FIX)

TRANSITIONS: dict[str, tuple[str, ...]] = {
    NEW: (TRIAGED, RESOLVED, WONT_FIX),
    TRIAGED: (RESOLVED, WONT_FIX),
    RESOLVED: (TRIAGED,),
    WONT_FIX: (TRIAGED,),
}

# Why an item was opened: the run's not_useful verdict, or a negative rating of a
# citation / step / report when the workspace asks (SPEC 3, 6.2).
OPENED_NOT_USEFUL = "not_useful"
OPENED_NEGATIVE_TARGET = "negative_target"
OPENED_REASONS: tuple[str, ...] = (OPENED_NOT_USEFUL, OPENED_NEGATIVE_TARGET)

STATE_LABELS: dict[str, str] = {
    NEW: "New", TRIAGED: "Triaged", RESOLVED: "Resolved", WONT_FIX: "Won't fix",
}


def can_move(current: str, target: str) -> bool:
    """True when ``current -> target`` is an allowed move (``TRANSITIONS``)."""
    return target in TRANSITIONS.get(current, ())


def action_label(current: str, target: str) -> str:
    """The button wording for ``current -> target``: "Reopen" for a closed item, else
    "Mark triaged" / "Resolve" / "Won't fix"."""
    if current in CLOSED_STATES and target == TRIAGED:
        return "Reopen"
    return {TRIAGED: "Mark triaged", RESOLVED: "Resolve", WONT_FIX: "Won't fix"}.get(target, target)
