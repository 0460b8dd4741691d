"""TEMPORARY: re-exports the interim feedback services until issue 5's module replaces
this file (on merge: take issue 5's ``feedback.py`` and delete ``feedback_interim.py``)."""

from .feedback_interim import (  # noqa: F401
    TargetSummary,
    delete_feedback,
    feedback_summary,
    list_my_feedback,
    upsert_feedback,
)
