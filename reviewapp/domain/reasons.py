"""Feedback reasons (SPEC 6.1): why a reviewer rated a part so, one row per code.

``DEFAULT_REASONS`` is the list every workspace starts from; a workspace's own list
(``settings["feedback_reasons"]``) derives from it (``workspace_reasons``): an entry is a
default code (that row), another code (a row of its own: its label from the code, any
rating), or a full row ``{"code", "label", "polarity"}`` — the shape an editor of the
list writes. Each row says which ratings it may accompany (``polarity``): the rating
form offers it only there and the feedback service refuses it elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .vocabulary import Registry

NEGATIVE: tuple[str, ...] = ("negative",)
EITHER: tuple[str, ...] = ("positive", "negative")
POLARITIES: dict[str, tuple[str, ...]] = {"negative": NEGATIVE, "positive": ("positive",),
                                          "either": EITHER}


@dataclass(frozen=True)
class ReasonRow:
    """``code`` as stored in ``user_feedback.reason``; ``label`` as shown; ``polarity``
    the ratings it may accompany."""

    code: str
    label: str
    polarity: tuple[str, ...] = NEGATIVE

    def allows(self, rating: str) -> bool:
        """Whether this reason may accompany ``rating``."""
        return rating in self.polarity


DEFAULT_REASONS: Registry[ReasonRow] = Registry("reason", (
    ReasonRow("incorrect", "Incorrect"),
    ReasonRow("incomplete", "Incomplete"),
    ReasonRow("citation", "Citation"),
    ReasonRow("unsafe", "Unsafe"),
    ReasonRow("other", "Other", EITHER),
))


def _label_of(code: str) -> str:
    return code.replace("_", " ").capitalize()


def _row(entry: Any) -> ReasonRow | None:
    if isinstance(entry, str):
        return DEFAULT_REASONS.get(entry) if entry in DEFAULT_REASONS \
            else ReasonRow(entry, _label_of(entry), EITHER)
    if isinstance(entry, Mapping) and isinstance(entry.get("code"), str):
        polarity = POLARITIES.get(entry.get("polarity"), EITHER)  # type: ignore[arg-type]
        label = entry.get("label")
        return ReasonRow(entry["code"], label if isinstance(label, str) and label
                         else _label_of(entry["code"]), polarity)
    return None


def workspace_reasons(settings: Mapping[str, Any] | None) -> Registry[ReasonRow]:
    """The workspace's reasons: ``settings["feedback_reasons"]`` when it is a non-empty
    list whose entries are all codes or rows, else ``DEFAULT_REASONS``."""
    configured = (settings or {}).get("feedback_reasons")
    if isinstance(configured, (list, tuple)) and configured:
        rows = [_row(entry) for entry in configured]
        if all(row is not None for row in rows):
            return Registry("reason", _dedupe(rows))  # type: ignore[arg-type]
    return DEFAULT_REASONS


def label_of(registry: Registry[ReasonRow], code: str) -> str:
    """How a saved reason ``code`` reads: its row's label in the workspace's ``registry``,
    or the code with ``_`` as spaces once the workspace no longer lists it."""
    return registry.label(code) if code in registry else code.replace("_", " ")


def _dedupe(rows: Iterable[ReasonRow]) -> list[ReasonRow]:
    seen: dict[str, ReasonRow] = {}
    for row in rows:
        seen.setdefault(row.code, row)
    return list(seen.values())
