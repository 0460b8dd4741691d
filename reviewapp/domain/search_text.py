"""The runs list's text search, its pure rules (SPEC 8): how a run's text is folded for
the full-text index, how a search term is folded the same way, how matches rank, and the
snippet shown around a match.

The index (``reviewapp/search_index.py``) stores each run's text already case-folded
(``fold``: Python's ``str.casefold``, the full Unicode case folding, so ``STRASSE``
finds ``straße`` and ``É`` finds ``é``) and both databases then test plain substring
containment, case-sensitively, on the folded text: SQLite FTS5 with the ``trigram``
tokenizer, PostgreSQL ``pg_trgm`` GIN. The same ``fold`` here decides the rank and the
snippet, so what the page says matched is exactly what the database matched. Trigrams
are indexed character by character, so substrings, punctuation and CJK text (no spaces
between words) are found like any other text.

A term of fewer than ``MIN_INDEXED_CHARS`` characters has no trigram: it is searched
without the index in the newest ``SHORT_TERM_RUNS`` runs only (SPEC 8, the page says so).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# Between the fields of a run's "other" text (run id, session id, each tool call's name,
# arguments, result, error): a search term never contains it (``fold`` turns it into a
# space), so no match can span two fields.
SEPARATOR = "\x1f"
# A trigram index finds terms of at least this many characters (after folding).
MIN_INDEXED_CHARS = 3
# A shorter term is looked for in this many runs, the newest of the list, without the index.
SHORT_TERM_RUNS = 10_000
# A term more runs than this hold is listed newest first instead of ranked (the rank
# would be computed for every match); the page says so.
RANKED_MATCHES = 1_000
# A term more runs than this hold is tested run by run in the list's order instead of
# reading all its matches first (the capped count then stops after a few runs).
PROBED_MATCHES = 20_000

# Ranks of a matching run: the term in the question beats the term in the answer, which
# beats a match only in the run id, the session id or a tool call. Higher is better.
RANK_QUERY = 3
RANK_ANSWER = 2
RANK_OTHER = 1

SNIPPET_CONTEXT = 60  # characters shown on each side of the match


def fold(text: str | None) -> str:
    """``text`` case-folded (``str.casefold``) with ``SEPARATOR`` turned into a space;
    ``""`` for ``None``. The form in which run text is indexed and terms are searched."""
    if not text:
        return ""
    folded = text.casefold()
    return folded.replace(SEPARATOR, " ") if SEPARATOR in folded else folded


def search_term(q: str | None) -> str:
    """The folded term of a search box value (stripped), ``""`` when blank."""
    return fold((q or "").strip())


def is_short(term: str) -> bool:
    """True for a (folded) term too short for the trigram index."""
    return 0 < len(term) < MIN_INDEXED_CHARS


def arguments_text(arguments: Any) -> str:
    """A tool call's arguments as searched: their JSON text (non-ASCII kept as is, so a
    CJK argument is found by its characters); ``""`` when there are none."""
    if arguments is None:
        return ""
    return json.dumps(arguments, ensure_ascii=False)


def other_text(run_id: str | None, session_id: str | None,
               calls: Iterable[tuple[str | None, Any, str | None, str | None]]) -> str:
    """The folded "other" text of a run: its run id, its session id, then per tool call
    (in order) its name, arguments (``arguments_text``), result and error, joined by
    ``SEPARATOR``. ``calls`` yields (name, arguments, result, error)."""
    parts = [run_id, session_id]
    for name, arguments, result, error in calls:
        parts += [name, arguments_text(arguments), result, error]
    return SEPARATOR.join(fold(part) for part in parts if part)


def call_text(name: str | None, arguments: Any, result: str | None, error: str | None) -> str:
    """The folded text of one tool call as the index holds it: its name, arguments
    (``arguments_text``), result and error, joined by ``SEPARATOR`` (empty parts left
    out). A run's "other" text is ``other_text`` of its ids and these, in call order."""
    return SEPARATOR.join(fold(part) for part in (name, arguments_text(arguments), result, error) if part)


def rank(query: str | None, answer: str | None, term: str) -> int:
    """The rank of a run that matched ``term`` (folded): ``RANK_QUERY`` when its question
    holds it, else ``RANK_ANSWER`` when its answer does, else ``RANK_OTHER``."""
    if term in fold(query):
        return RANK_QUERY
    if term in fold(answer):
        return RANK_ANSWER
    return RANK_OTHER


@dataclass(frozen=True)
class Snippet:
    """A short excerpt around the first match: ``before`` + ``match`` + ``after`` are
    the original text's characters (not folded), whitespace runs shown as one space;
    ``cut_before`` / ``cut_after`` say whether text was left out on that side. Plain
    text: the page escapes every part and marks ``match``."""

    field: str
    before: str
    match: str
    after: str
    cut_before: bool
    cut_after: bool


def _original_span(text: str, folded: str, start: int, length: int) -> tuple[int, int]:
    """The span of ``text`` whose folding is ``folded[start:start + length]`` (widened to
    whole characters when one character folds to several)."""
    if len(folded) == len(text):  # every character folded to exactly one
        return start, start + length
    position = 0
    begin = end = len(text)
    for index, char in enumerate(text):
        width = len(char.casefold())
        if begin == len(text) and position + width > start:
            begin = index
        if position + width >= start + length:
            end = index + 1
            break
        position += width
    return begin, end


def _squash(text: str) -> str:
    return " ".join(text.split())


def snippet(field: str, text: str | None, term: str, context: int = SNIPPET_CONTEXT) -> Snippet | None:
    """The excerpt of ``text`` around the first occurrence of ``term`` (folded), with
    ``context`` characters each side (cut at a space when there is one), or ``None`` when
    the term is not in it. Linear in ``len(text)``."""
    if not text or not term:
        return None
    folded = fold(text)
    at = folded.find(term)
    if at < 0:
        return None
    begin, end = _original_span(text, folded, at, len(term))
    left = max(0, begin - context)
    right = min(len(text), end + context)
    before, after = text[left:begin], text[end:right]
    if left > 0 and " " in before.strip():
        before = before[before.index(" ", 0) + 1:] if not before[0].isspace() else before
    if right < len(text) and " " in after.strip():
        after = after[:after.rindex(" ")] if not after[-1].isspace() else after
    before_s, after_s = _squash(before), _squash(after)
    return Snippet(field, before_s + (" " if before[-1:].isspace() and before_s else ""),
                   _squash(text[begin:end]) or text[begin:end],
                   (" " if after[:1].isspace() and after_s else "") + after_s,
                   left > 0, right < len(text))
