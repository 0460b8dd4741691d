"""The main navigation by role (SPEC 1, 8): what each role may open."""

from __future__ import annotations

from typing import Any

from flask import request, url_for

# (minimum role, label, endpoint, endpoints that mark the item as the current page)
_ITEMS: tuple[tuple[str, str, str, str], ...] = (
    ("lead", "Triage", "triage.index", "triage."),
    ("lead", "Disputes", "adjudication.index", "adjudication."),
    ("reviewer", "Cases", "cases.index", "cases."),
    ("lead", "Dashboard", "dashboard.index", "dashboard."),
    ("admin", "Exports", "exports.index", "exports."),
    ("admin", "Admin", "admin.index", "admin."),
)
_RANK = {"reviewer": 1, "lead": 2, "admin": 3}
_LABELS = {target: label for _, label, target, _ in _ITEMS}


def nav_label(endpoint: str) -> str:
    """The navigation's name of the page at ``endpoint`` ("Disputes" for
    ``adjudication.index``), for hints that point there, so they say what the nav says.
    Raises ``KeyError`` for a page the navigation does not list."""
    return _LABELS[endpoint]


def nav_items(role: str | None) -> list[dict[str, Any]]:
    """``[{label, url, active}]`` for a user whose highest role is ``role`` (none: [])."""
    if role is None:
        return []
    endpoint = request.endpoint or ""
    return [
        {"label": label, "url": url_for(target), "active": endpoint.startswith(prefix)}
        for needed, label, target, prefix in _ITEMS
        if _RANK[role] >= _RANK[needed]
    ]
