"""The triage state machine of the not-useful queue (SPEC 3, 8). Pure: stdlib only.

``new -> triaged -> resolved | wont_fix``, and *reopen*: ``resolved | wont_fix -> triaged``.
A lead may also close a new item at once (``new -> resolved | wont_fix``) — an obvious
duplicate needs no separate "triaged" click. A reopened item goes back to ``triaged``,
not ``new``: somebody has already looked at it. Nothing here touches the run's ``status``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .vocabulary import Registry

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

# The states an item can be moved to (a bulk move's choices): every transition's target.
MOVE_TARGETS: tuple[str, ...] = tuple(s for s in STATES if any(s in t for t in TRANSITIONS.values()))

# Why an item was opened: the run's not_useful verdict, or a negative rating of a
# citation / step / report when the workspace asks (SPEC 3, 6.2).
OPENED_NOT_USEFUL = "not_useful"
OPENED_NEGATIVE_TARGET = "negative_target"


@dataclass(frozen=True)
class OpenedReason:
    """``code`` as stored in ``triage_item.opened_reason``; ``label`` the queue filter's
    option; ``why`` how the item page says it; ``row_note`` what the queue's row adds
    (None: nothing, the usual reason)."""

    code: str
    label: str
    why: str
    row_note: str | None = None


OPENED: Registry[OpenedReason] = Registry("opened", (
    OpenedReason(OPENED_NOT_USEFUL, "not useful verdict", "the run was judged not useful"),
    OpenedReason(OPENED_NEGATIVE_TARGET, "negative rating of a part",
                 "a part of the run was rated not helpful",
                 "opened because a part was rated not helpful"),
))
OPENED_REASONS: tuple[str, ...] = OPENED.codes()

STATE_LABELS: dict[str, str] = {
    NEW: "New", TRIAGED: "Triaged", RESOLVED: "Resolved", WONT_FIX: "Won't fix",
}


def state_choices() -> list[tuple[str, str]]:
    """``[(state, label)]`` in ``STATES`` order (the queue's tabs and filters)."""
    return [(state, STATE_LABELS[state]) for state in STATES]


def can_move(current: str, target: str) -> bool:
    """True when ``current -> target`` is an allowed move (``TRANSITIONS``)."""
    return target in TRANSITIONS.get(current, ())


def action_label(current: str, target: str, *, short: bool = False) -> str:
    """The button wording for ``current -> target``: "Reopen" for a closed item, else
    "Mark triaged" / "Resolve" / "Won't fix"; ``short`` (the queue's compact row): the
    state's label "Triaged" instead of "Mark triaged"."""
    if current in CLOSED_STATES and target == TRIAGED:
        return "Reopen"
    if short and target == TRIAGED:
        return STATE_LABELS[TRIAGED]
    return {TRIAGED: "Mark triaged", RESOLVED: "Resolve", WONT_FIX: "Won't fix"}.get(target, target)

# What a triage item's history records (``triage_event.action``), with how it is told.
# Automatic changes (no person acting) carry their sentence in ``triage_event.detail``;
# they never write the lead's ``note`` (issue 17).
EVENT_AUTO_RESOLVED = "auto_resolved"
EVENT_AUTO_REOPENED = "auto_reopened"
EVENT_MOVED = "moved"
EVENT_ASSIGNED = "assigned"
EVENT_CATEGORISED = "categorised"
EVENT_NOTE = "note"
EVENT_LABELS: dict[str, str] = {
    EVENT_AUTO_RESOLVED: "Resolved automatically",
    EVENT_AUTO_REOPENED: "Reopened automatically",
    EVENT_MOVED: "State changed",
    EVENT_ASSIGNED: "Assignee changed",
    EVENT_CATEGORISED: "Fault category changed",
    EVENT_NOTE: "Note changed",
}
RESOLVED_USEFUL = "the run's verdict became useful"
RESOLVED_NO_NEGATIVE = "the run's last negative rating was withdrawn, so nothing is left to triage"
RESOLVED_DISPUTED = "the run is disputed: waiting for a lead's decision"
REOPENED_NOT_USEFUL = "the run was judged not useful again"
# The history entries that change an item's state (its latest one says how it got there).
STATE_EVENTS: tuple[str, ...] = (EVENT_MOVED, EVENT_AUTO_RESOLVED, EVENT_AUTO_REOPENED)


@dataclass(frozen=True)
class AutoResolve:
    """Why the app resolved an item on its own: ``code`` the sentence its history records
    (``triage_event.detail`` of ``EVENT_AUTO_RESOLVED``), ``label`` what the state badge adds
    after "Resolved — ", so a lead tells it from one a person closed (second new-user walk)."""

    code: str
    label: str


# Every reason the app resolves an item for, each with its label: one registry
# (``verdict_triage.close_item_automatically`` refuses a reason it does not hold).
AUTO_RESOLVE_REASONS: Registry[AutoResolve] = Registry("auto_resolved", (
    AutoResolve(RESOLVED_USEFUL, "run judged useful"),
    AutoResolve(RESOLVED_NO_NEGATIVE, "no negative rating left"),
    AutoResolve(RESOLVED_DISPUTED, "run disputed"),
))
# How the state of an item the app resolved reads, by the sentence its history recorded.
AUTO_RESOLVED_NOTES: dict[str, str] = {reason.code: reason.label for reason in AUTO_RESOLVE_REASONS}
