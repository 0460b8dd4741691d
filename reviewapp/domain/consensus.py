"""The verdict from several reviewers (issue 16 "Verdict from several reviewers"). Pure,
standard library only.

With N > 1 reviewers per run (a review queue's ``reviewers_per_run``), a run's verdict
(SPEC 6.2) is not the latest answer-level rating but the **majority** of the answer-level
ratings, once at least N reviewers have given one. A tie — or, when the queue's lead
asked for it (``any_split``), any disagreement at all — is **disputed**: no verdict
follows from the ratings; a lead's decision (adjudication) sets it.

``DISPUTE_RULES`` is the registry of what a lead may configure as "needs a decision".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .verdicts import verdict_for_rating
from .vocabulary import Registry, UnknownValue

PENDING = "pending"
DECIDED = "verdict"
DISPUTED = "disputed"

POSITIVE, NEGATIVE = "positive", "negative"


@dataclass(frozen=True)
class DisputeRule:
    """``code`` as stored on the queue (``review_queue.dispute_rule``); ``label`` as
    shown in the queue's form."""

    code: str
    label: str


DISPUTE_RULES: Registry[DisputeRule] = Registry("dispute_rule", (
    DisputeRule("tie", "A tie needs a decision (otherwise the majority decides)"),
    DisputeRule("any_split", "Any disagreement needs a decision"),
))
DEFAULT_DISPUTE_RULE = "tie"


@dataclass(frozen=True)
class Consensus:
    """What the ratings of one run say. ``outcome``: ``pending`` (fewer than N ratings),
    ``verdict`` (``verdict`` holds useful / not_useful) or ``disputed`` (a lead decides);
    ``positive`` / ``negative``: how many ratings of each."""

    outcome: str
    verdict: str | None
    positive: int
    negative: int


def consensus(ratings: Iterable[str], needed: int, rule: str = DEFAULT_DISPUTE_RULE) -> Consensus:
    """The consensus of ``ratings`` (one answer-level rating per reviewer, ``positive``
    or ``negative``) for a run that needs ``needed`` (>= 1) of them, under dispute
    ``rule`` (``DISPUTE_RULES``).

    Fewer than ``needed`` ratings: ``pending``. Otherwise every rating counts (a run
    rated by more reviewers than needed uses them all): equal counts are ``disputed``;
    with ``any_split``, both kinds present is ``disputed``; else the majority's verdict.

    Raises ``ValueError`` for ``needed`` < 1 and ``UnknownValue`` for a rating or rule
    outside its vocabulary."""
    if needed < 1:
        raise ValueError("needed must be at least 1")
    if rule not in DISPUTE_RULES:
        raise UnknownValue("dispute_rule", rule, DISPUTE_RULES.codes())
    positive = negative = 0
    for rating in ratings:
        if rating == POSITIVE:
            positive += 1
        elif rating == NEGATIVE:
            negative += 1
        else:
            raise UnknownValue("rating", rating, (POSITIVE, NEGATIVE))
    if positive + negative < needed:
        return Consensus(PENDING, None, positive, negative)
    if positive == negative or (rule == "any_split" and positive and negative):
        return Consensus(DISPUTED, None, positive, negative)
    majority = POSITIVE if positive > negative else NEGATIVE
    return Consensus(DECIDED, verdict_for_rating(majority), positive, negative)
