"""Runs, which ones a reviewer can rate (SPEC 2, 6.1, 8): the rule, and the copy of it
that each run keeps in ``diagnosis_run.rateable`` so the review queue reads an index of
rateable runs (``ix_diagnosis_run_workspace_rateable``) instead of probing every run's
messages, steps and report (issue 18).

The copy is written where a run's status or parts change, and only there: ``runs.ingest``
(a new or re-ingested run, ``finish_run``) calls ``refresh`` after its writes and
before the review queues' rules read it (``queue_fill.offer_run``); the migration
that added the column (``9c1f4e7b2a60``) filled it for existing runs with the same rule.
Ratings do not change it: "not rated by me" is read from the ratings themselves; a
change of it moves the run in the raters' counts of rated rateable runs (``rated_runs``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import exists, or_, select, true
from sqlalchemy.orm import Session

from ...models import DiagnosticReport, DiagnosticStep, Message, MessageRole, Run, RunStatus
from .. import rated_runs
from ..answer import has_text


def rateable_rule() -> Any:
    """SQL, from the run's own rows: the run is finished (not RUNNING) and has a part a
    reviewer can rate: an assistant message with text (the answer and its citations), a
    diagnostic step or a diagnostic report (SPEC 6.1 targets). What ``Run.rateable``
    holds; for ``refresh`` and its tests, never for a list (it probes three tables per
    run)."""
    return (Run.status != RunStatus.RUNNING.value) & or_(
        exists().where(Message.run_pk == Run.id, Message.role == MessageRole.ASSISTANT.value,
                       has_text(Message.content)),
        exists().where(DiagnosticStep.run_pk == Run.id),
        exists().where(DiagnosticReport.run_pk == Run.id),
    )


def rateable_run() -> Any:
    """Condition: the run is rateable (``rateable_rule``, as the run keeps it): the
    review queue offers only such runs, so it never stops on a run nobody can rate
    (SPEC 8); a review queue's rule asks for an answer-level target too
    (``queue_fill.takes_in``). A column test, which the queue's index holds."""
    return Run.rateable == true()


def refresh(session: Session, run: Run, *, rated: bool = True) -> bool:
    """Bring ``run.rateable`` in line with the run's status and parts as they are now
    (pending writes flushed first; one SELECT, and an UPDATE when it changed), and the
    counts of rated rateable runs of those who rated it (``rated_runs``; one more UPDATE
    when it changed, unless ``rated`` is False: the run was created in this transaction
    and holds no rating). Call it under the run's lock. No commit. Returns whether it
    changed."""
    session.flush()
    now = bool(session.scalar(select(rateable_rule()).where(Run.id == run.id)))
    if run.rateable == now:
        return False
    run.rateable = now
    session.flush()
    if rated:
        rated_runs.rateability_changed(session, run.id, run.workspace_id, now)
    return True
