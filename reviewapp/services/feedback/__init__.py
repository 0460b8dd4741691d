"""Feedback (SPEC 6), split by concern:

- ``ratings``: owner-checked ratings of a run's parts with their history (``_targets``
  holds the checks that come before any write); ``reads``: the reads behind the thumbs
  (own ratings, everybody's summary, history, reason codes);
- ``verdict``: everything a verdict changes — the run's ``feedback``, its case, its triage
  item, the automatic notes — and ``POST /api/feedback``.

``services/review.py`` is the run page's companion: it composes these with the state
one thumbs control shows. Every public name stays importable from
``reviewapp.services.feedback``.
"""

from __future__ import annotations

from .ratings import delete_feedback, rating_version, upsert_feedback
from .reads import (
    TargetSummary,
    earlier_version_ids,
    feedback_history,
    feedback_reasons,
    feedback_summary,
    list_my_feedback,
    list_my_feedback_for_target,
    my_feedback_of_visible_run,
    my_ratings_of_visible_run,
    summary_of_visible_run,
)
from .verdict import VerdictResult, set_run_verdict

__all__ = [
    "TargetSummary", "VerdictResult", "delete_feedback", "earlier_version_ids", "feedback_history", "feedback_reasons",
    "feedback_summary", "list_my_feedback", "list_my_feedback_for_target",
    "my_feedback_of_visible_run", "my_ratings_of_visible_run", "rating_version", "set_run_verdict", "summary_of_visible_run", "upsert_feedback",
]
