"""Pure feedback rules (SPEC 6.1, 6.2): limits, text clean-up, reason lists, verdicts.

Standard library only. The services validate with these before any database access.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .reasons import DEFAULT_REASONS, workspace_reasons
from .target_types import TARGET_TYPES as TARGET_TYPE_REGISTRY
from .verdicts import VERDICTS as VERDICT_REGISTRY
from .verdicts import verdict_for_rating

# The codes of the registries (domain/target_types.py, verdicts.py, reasons.py), for
# validation with ``check_choice``.
TARGET_TYPES: tuple[str, ...] = TARGET_TYPE_REGISTRY.codes()
RATINGS: tuple[str, ...] = ("positive", "negative")
VERDICTS: tuple[str, ...] = VERDICT_REGISTRY.codes()

# The reason codes a workspace offers unless its settings say otherwise (SPEC 6.1).
# ``Config.FEEDBACK_REASONS`` refers to this tuple; services cannot read Flask config.
DEFAULT_FEEDBACK_REASONS: tuple[str, ...] = DEFAULT_REASONS.codes()

# Maximum lengths in characters (Unicode code points, as Python's ``len`` and
# PostgreSQL's ``varchar(n)`` count them: one CJK ideograph or one emoji code point is 1).
SUBJECT_MAX = 160
REASON_MAX = 80
COMMENT_MAX = 2000
CORRECTION_MAX = 4000

RATING_FIELDS: tuple[str, ...] = ("rating", "reason", "comment", "correction")


# Every character ``str.isspace`` holds for (what ``str.strip()`` removes): the blanks the
# SQL form of ``has_answer_text`` trims (``services/answer.py``), so a database and Python
# agree on which message is the answer.
ANSWER_BLANKS = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003"
                 "\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def has_answer_text(content: str | None) -> bool:
    """Whether an assistant message's text counts as an answer: something left after
    removing ``ANSWER_BLANKS`` from both ends.

    A chat run's answer message (the target of its answer thumbs, SPEC 6.1 / 6.2) is the
    last assistant message for which this holds; assistant messages that only carry
    tool calls do not count. The one definition: the run page (``answer_message_index``),
    the feedback service and, in SQL, ``services/answer.py`` (verdict, agreement, queues,
    blind review, adjudication) all follow it.
    """
    return bool((content or "").strip(ANSWER_BLANKS))


def answer_message_index(messages: Sequence[tuple[str, str | None]]) -> int | None:
    """Index of the answer message among ``(role, content)`` pairs in order, else None."""
    for index in range(len(messages) - 1, -1, -1):
        role, content = messages[index]
        if role == "assistant" and has_answer_text(content):
            return index
    return None


def answer_text(answer: str | None, messages: Sequence[tuple[str, str | None]]) -> str:
    """A run's answer text, the one rule of the run page, its case (SPEC 7) and the
    exports: its ``answer`` field when that has text (``has_answer_text``), else the
    content of its answer message (``answer_message_index`` over ``(role, content)``
    pairs in order: a chat agent that keeps its answer in its messages), else ""."""
    if has_answer_text(answer):
        return answer or ""
    index = answer_message_index(messages)
    return (messages[index][1] or "") if index is not None else ""


class InvalidFeedback(ValueError):
    """A rule was broken; ``field`` names the input field, ``message`` says how."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def clean_text(value: Any, field: str, max_chars: int, *, strip: bool = False) -> str | None:
    """``value`` as stored: ``None`` for None / "" / whitespace-only, else the string.

    ``strip=True`` (codes and ids) also trims surrounding whitespace; free text (comment,
    correction) is kept exactly as typed, so indentation in a suggested correction
    survives. Raises ``InvalidFeedback`` for a non-string, more than ``max_chars``
    characters, a NUL character (PostgreSQL text cannot hold it) or a lone surrogate
    (not valid Unicode, SPEC 10).
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidFeedback(field, "must be a string")
    if not value.strip():
        return None
    if strip:
        value = value.strip()
    if len(value) > max_chars:
        raise InvalidFeedback(field, f"at most {max_chars} characters (got {len(value)})")
    if "\x00" in value:
        raise InvalidFeedback(field, "must not contain NUL characters")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        raise InvalidFeedback(field, "contains a lone surrogate; text must be valid Unicode")
    return value


def check_choice(value: Any, field: str, allowed: Sequence[str]) -> str:
    """``value`` if it is one of ``allowed``, else ``InvalidFeedback`` listing them."""
    if not isinstance(value, str) or value not in allowed:
        raise InvalidFeedback(field, f"must be one of {', '.join(allowed)}")
    return value


def reasons_from_settings(settings: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The workspace's reason codes (``reasons.workspace_reasons``): its
    ``settings["feedback_reasons"]`` when usable, else ``DEFAULT_FEEDBACK_REASONS``."""
    return workspace_reasons(settings).codes()


def latest_verdict(ratings: Iterable[tuple[Any, int, str]]) -> str | None:
    """The verdict of the latest answer-level rating, or ``None`` when there is none.

    ``ratings``: (updated_at, feedback id, rating) triples in any order; the latest
    ``updated_at`` wins and the higher id breaks a tie (SPEC 6.2: the run's ``feedback``
    follows the latest answer-level rating).
    """
    latest = max(ratings, key=lambda r: (r[0], r[1]), default=None)
    return None if latest is None else verdict_for_rating(latest[2])


def rating_state(values: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The part of a feedback row its history records: {rating, reason, comment,
    correction}, or ``None`` when there is no row."""
    if values is None:
        return None
    return {name: values.get(name) for name in RATING_FIELDS}


def switched(before: Mapping[str, Any], rating: str, reasons: Any) -> dict[str, Any]:
    """The rating fields after the reviewer switched the thumb of an existing rating
    ``before`` ({rating, reason, comment, correction}) to ``rating`` (SPEC 6.1): the
    comment and correction stay until the reviewer clears them; the reason stays only
    when it may accompany the new rating (``reasons``: the workspace's reason registry,
    ``domain.reasons.workspace_reasons``), else it is dropped (None) — the thumb, not the
    stale reason, is what the reviewer asked for."""
    reason = before.get("reason")
    if reason is not None and (reason not in reasons or not reasons.get(reason).allows(rating)):
        reason = None
    return {"rating": rating, "reason": reason, "comment": before.get("comment"),
            "correction": before.get("correction")}


def initials(username: str) -> str:
    """Two upper-case letters for a reviewer badge: the first letters of the first two
    parts of ``username`` split on ``. _ - @`` and spaces ("ada.lovelace" -> "AL"), or its
    first two characters when it has one part ("grace" -> "GR")."""
    parts = [p for p in _split_name(username) if p]
    if len(parts) >= 2:
        return (parts[0][0] + parts[1][0]).upper()
    if parts:
        return parts[0][:2].upper()
    return "?"


BADGE_NAME_CHARS = 12  # a username shown in place of initials is cut here, with "…"


def reviewer_badges(names: Sequence[str]) -> tuple[str, ...]:
    """What stands beside a thumb for each of ``names`` (the reviewers of one target, in
    order): their ``initials``, except that names whose initials another name shares
    show themselves, cut at ``BADGE_NAME_CHARS`` characters with "…" ("reviewer" and
    "reviewer2" both read "RE": first new-user walk). Full names stay in the page's
    title and screen-reader text."""
    letters = [initials(name) for name in names]
    owners: dict[str, set[str]] = {}
    for name, badge in zip(names, letters, strict=True):
        owners.setdefault(badge, set()).add(name)
    return tuple(
        badge if len(owners[badge]) == 1
        else name if len(name) <= BADGE_NAME_CHARS else name[:BADGE_NAME_CHARS] + "…"
        for name, badge in zip(names, letters, strict=True))


def _split_name(name: str) -> list[str]:
    out, current = [], []
    for ch in name or "":
        if ch in "._-@ ":
            out.append("".join(current))
            current = []
        else:
            current.append(ch)
    out.append("".join(current))
    return out
