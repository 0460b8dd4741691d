"""Two vocabularies of judgement, one registry each:

- ``VERDICTS``: a run's verdict given by people (``run.feedback``, SPEC 6.2), with the
  rating an answer-level rating stands for;
- ``VERIFIER_VERDICTS``: the agent's own verifier's verdict
  (``verifier_evaluation.verdict``, SPEC 5).

Every other place derives from these: the ``diagnosis_run.feedback`` CHECK constraint,
validation of ``POST /api/feedback``, the runs list's filters and form choices, the
dashboard's verdict counts, the badges' labels and the OpenAPI enums (a test compares).
"""

from __future__ import annotations

from dataclasses import dataclass

from .vocabulary import Registry, UnknownValue


@dataclass(frozen=True)
class VerdictRow:
    """``code`` as stored; ``label`` as shown; ``rating`` the answer-level rating that
    stands for this verdict (positive -> useful, negative -> not_useful)."""

    code: str
    label: str
    rating: str


@dataclass(frozen=True)
class VerifierVerdictRow:
    """``code`` as the agent's verifier sends it; ``label`` as shown."""

    code: str
    label: str


VERDICTS: Registry[VerdictRow] = Registry("feedback", (
    VerdictRow("useful", "Useful", "positive"),
    VerdictRow("not_useful", "Not useful", "negative"),
))

VERIFIER_VERDICTS: Registry[VerifierVerdictRow] = Registry("verdict", (
    VerifierVerdictRow("PASS", "Pass"),
    VerifierVerdictRow("LOW_CONFID", "Low confidence"),
    VerifierVerdictRow("REJECT", "Reject"),
))


def verdict_for_rating(rating: str) -> str:
    """The run verdict an answer-level rating stands for (SPEC 6.2). Raises
    ``UnknownValue`` for a rating no verdict stands for."""
    for row in VERDICTS:
        if row.rating == rating:
            return row.code
    raise UnknownValue("rating", rating, tuple(row.rating for row in VERDICTS))
