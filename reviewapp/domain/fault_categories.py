"""The one fault-category vocabulary of triage items and cases (SPEC 7: "the workspace's
one fault-category vocabulary (shared with triage)"). Pure: stdlib only.

Before, triage offered why-the-agent-failed codes (``NO_EVIDENCE`` ... ``OTHER``), cases
offered incident codes (``DATABASE``, ``GENERAL`` ...) and free text was upper-cased into
a third list. Now both use ``FAULT_CATEGORIES`` — or the workspace's own list
(``settings["fault_categories"]``, edited on the settings page) — and a value outside it
is refused with the list (``UnknownValue``), never upper-cased into a new code.

``group`` tells the two kinds apart on pages: ``incident`` (what broke in the operated
system, the case library's view) and ``agent`` (what the agent did wrong, triage's view).
``LEGACY`` maps the codes of the old lists that the merged list does not keep
(``OTHER`` → ``GENERAL``); the migration that merged the lists applied it to stored rows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .vocabulary import Registry

INCIDENT = "incident"
AGENT = "agent"
GROUPS: dict[str, str] = {INCIDENT: "Incident (what broke)", AGENT: "Agent (what the agent got wrong)"}

CODE_RE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
DEFAULT_CATEGORY = "GENERAL"


@dataclass(frozen=True)
class FaultCategory:
    """``code`` as stored in ``case_library.fault_category`` / ``triage_item.fault_category``."""

    code: str
    label: str
    group: str = INCIDENT


FAULT_CATEGORIES: Registry[FaultCategory] = Registry("fault_category", (
    FaultCategory("GENERAL", "General / other"),
    FaultCategory("RESOURCE_EXHAUSTION", "Resource exhaustion"),
    FaultCategory("DATABASE", "Database"),
    FaultCategory("NETWORK", "Network"),
    FaultCategory("DEPLOYMENT", "Deployment"),
    FaultCategory("DEPENDENCY", "Dependency"),
    FaultCategory("AUTH", "Authentication / authorisation"),
    FaultCategory("CONFIGURATION", "Configuration"),
    FaultCategory("CAPACITY", "Capacity"),
    FaultCategory("NO_EVIDENCE", "No evidence", AGENT),
    FaultCategory("RETRIEVAL_MISS", "Retrieval miss", AGENT),
    FaultCategory("TOOL_FAILURE", "Tool failure", AGENT),
    FaultCategory("UNGROUNDED_CLAIM", "Ungrounded claim", AGENT),
    FaultCategory("WRONG_ROOT_CAUSE", "Wrong root cause", AGENT),
    FaultCategory("INCOMPLETE_ANSWER", "Incomplete answer", AGENT),
    FaultCategory("UNSAFE_ADVICE", "Unsafe advice", AGENT),
    FaultCategory("CITATION_PROBLEM", "Citation problem", AGENT),
    FaultCategory("KNOWLEDGE_GAP", "Knowledge gap", AGENT),
))

# Codes of the two old lists that the merged list does not keep, and their new code.
LEGACY: dict[str, str] = {"OTHER": DEFAULT_CATEGORY}


def _label_of(code: str) -> str:
    return code.replace("_", " ").capitalize()


def _row(entry: Any) -> FaultCategory | None:
    if isinstance(entry, str) and CODE_RE.match(entry):
        return FAULT_CATEGORIES.get(entry) if entry in FAULT_CATEGORIES \
            else FaultCategory(entry, _label_of(entry))
    if isinstance(entry, Mapping) and isinstance(entry.get("code"), str) \
            and CODE_RE.match(entry["code"]):
        label = entry.get("label")
        group = entry.get("group") if entry.get("group") in GROUPS else INCIDENT
        return FaultCategory(entry["code"], label if isinstance(label, str) and label
                             else _label_of(entry["code"]), group)
    return None


def workspace_categories(settings: Mapping[str, Any] | None) -> Registry[FaultCategory]:
    """The workspace's categories: ``settings["fault_categories"]`` when it is a non-empty
    list whose entries are all codes or ``{"code", "label", "group"}`` rows (``GENERAL``
    is always kept, first, as the default), else ``FAULT_CATEGORIES``."""
    configured = (settings or {}).get("fault_categories")
    if isinstance(configured, (list, tuple)) and configured:
        rows = [_row(entry) for entry in configured]
        if all(row is not None for row in rows):
            seen: dict[str, FaultCategory] = {}
            if not any(row.code == DEFAULT_CATEGORY for row in rows):  # type: ignore[union-attr]
                seen[DEFAULT_CATEGORY] = FAULT_CATEGORIES.get(DEFAULT_CATEGORY)
            for row in rows:
                seen.setdefault(row.code, row)  # type: ignore[union-attr]
            return Registry("fault_category", seen.values())
    return FAULT_CATEGORIES


def grouped(categories: Registry[FaultCategory]) -> tuple[tuple[str, tuple[FaultCategory, ...]], ...]:
    """``categories`` split by kind for a select's option groups: (the group's label in
    ``GROUPS``, its rows in ``categories``' order) in ``GROUPS`` order, empty groups left out."""
    return tuple((label, rows) for group, label in GROUPS.items()
                 if (rows := tuple(row for row in categories if row.group == group)))


def normalise(code: str | None) -> str | None:
    """The stored form of an old value: ``LEGACY`` mapped, else unchanged."""
    return LEGACY.get(code, code) if code else code


def category_named(categories: Registry[FaultCategory], typed: str) -> str | None:
    """The code of ``categories`` that ``typed`` (already trimmed) names: the code itself,
    else the one whose code or label equals it ignoring case (``str.casefold``: "database",
    "Resource exhaustion" -> ``DATABASE``, ``RESOURCE_EXHAUSTION``); ``None`` when none does
    (SPEC 7; second new-user walk: the case form took only the exact code)."""
    if typed in categories:
        return typed
    wanted = typed.casefold()
    for row in categories:
        if wanted in (row.code.casefold(), row.label.casefold()):
            return row.code
    return None
