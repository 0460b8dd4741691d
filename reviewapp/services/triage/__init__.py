"""The not-useful queue (SPEC 3, 8, 10), split by concern:

- ``listing``: filters, per-state counts and keyset pages of the queue;
- ``detail``: one item's page (ratings of its run, history);
- ``actions``: assign, categorise, note, state moves, bulk actions;
- ``_rows``: the row read model the three share.

Every function here is for leads and admins of the item's workspace (``Role.LEAD``);
anybody else, and any item that does not exist, gets the same ``Forbidden``. Every write
carries the ``version`` the caller's page showed: the UPDATE matches on it, so a change
sent from an out-of-date page raises ``Conflict`` with the item's current state in
``details`` — never a silent overwrite. A triage item never touches its run's ``status``.

Items are opened and auto-resolved by the verdict (``services/feedback/verdict.py``),
which never touches the run's ``status`` either (S000, S001 10.3). Every public name
stays importable from ``reviewapp.services.triage``.
"""

from __future__ import annotations

from ._rows import ASSIGNEE_ROLES, TriageRow, reason_options
from .actions import (
    BULK_MAX,
    NOTE_MAX,
    BulkOutcome,
    assign,
    bulk_assign,
    bulk_move,
    move,
    parse_item_tokens,
    set_fault_category,
    set_note,
)
from .detail import HistoryEntry, RatingView, TriageDetail, get_item
from .listing import TriageFilters, TriagePage, filter_choices, list_items, read_filters

__all__ = [
    "reason_options",
    "ASSIGNEE_ROLES", "BULK_MAX", "NOTE_MAX", "BulkOutcome", "HistoryEntry", "RatingView",
    "TriageDetail", "TriageFilters", "TriagePage", "TriageRow", "assign", "bulk_assign",
    "bulk_move", "filter_choices", "get_item", "list_items", "move", "parse_item_tokens", "read_filters",
    "set_fault_category", "set_note",
]
