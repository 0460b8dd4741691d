"""When a review-queue item is complete (issue 16 "Review queues"): stored, not counted.

An item is **complete** when ``reviewers_per_run`` different reviewers have rated its
run's answer-level target (``answer.answer_rating_condition``: a chat run's answer
message, an AIOps run's report, or its answer when it has no report). Each item keeps
``ratings_count`` (those reviewers) and ``completed_at`` (UTC, since when the count
reaches the queue's N; null below it). The services keep both:

- the feedback services (``feedback.ratings.upsert_feedback`` / ``delete_feedback``)
  call ``refresh_run`` after writing an answer-level rating or deleting any rating, in
  the same transaction, after the run row lock that serialises a run's rating writers
  (PostgreSQL; SQLite serialises writers anyway), so two reviewers rating one run at
  once cannot both write a stale count;
- ``runs.queue_fill`` calls ``refresh_runs`` for items it adds (a run rated before it
  entered the queue) and ``refresh_run`` when a run is re-ingested (its answer may have
  changed);
- ``recount_queue`` after a queue's ``reviewers_per_run`` changed.

``completed_at`` keeps its first time while the item stays complete; a deleted rating
that takes the count below N clears it. Nothing here checks access or commits: the
callers did and do.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import case, distinct, func, select, update
from sqlalchemy.orm import Session

from ..models import Feedback, QueueItem, ReviewQueue, Run
from ..models.base import utcnow
from .answer import answer_rating_condition

BATCH = 1000


@dataclass(frozen=True)
class ItemCompletion:
    """``count`` different reviewers rated the answer, ``needed`` (the queue's N) make it
    ``complete``; ``completed_at`` (UTC) when it became so, else ``None``."""

    count: int
    needed: int
    complete: bool
    completed_at: datetime | None


def raters(session: Session, run_pks: Sequence[int]) -> dict[int, int]:
    """``{run id: different reviewers who rated its answer-level target}`` for the runs
    that have any (runs without are absent)."""
    counts: dict[int, int] = {}
    for start in range(0, len(run_pks), BATCH):
        chunk = list(run_pks[start:start + BATCH])
        counts.update(session.execute(
            select(Feedback.run_pk, func.count(distinct(Feedback.author_id)))
            .join(Run, Run.id == Feedback.run_pk)
            .where(Feedback.run_pk.in_(chunk), answer_rating_condition())
            .group_by(Feedback.run_pk)).all())
    return counts


def rater_sets(session: Session, run_pks: Sequence[int]) -> dict[int, set[int]]:
    """``{run id: user ids of the reviewers who rated its answer-level target}`` for the
    runs that have any (runs without are absent): who ``raters`` counts, one statement
    per ``BATCH`` runs."""
    found: dict[int, set[int]] = {}
    for start in range(0, len(run_pks), BATCH):
        chunk = list(run_pks[start:start + BATCH])
        for run_pk, author_id in session.execute(
                select(Feedback.run_pk, Feedback.author_id).distinct()
                .join(Run, Run.id == Feedback.run_pk)
                .where(Feedback.run_pk.in_(chunk), answer_rating_condition())):
            found.setdefault(run_pk, set()).add(author_id)
    return found


def _needed() -> Any:
    """Correlated: the item's queue's ``reviewers_per_run``."""
    return (select(ReviewQueue.reviewers_per_run)
            .where(ReviewQueue.id == QueueItem.queue_id).scalar_subquery())


def _store(session: Session, where: Iterable[Any], count: int, now: datetime) -> None:
    session.execute(
        update(QueueItem).where(*where).values(
            ratings_count=count,
            completed_at=case((_needed() <= count, func.coalesce(QueueItem.completed_at, now)),
                              else_=None))
        .execution_options(synchronize_session=False))


def refresh_run(session: Session, run_pk: int, now: datetime | None = None) -> list[int]:
    """Store the run's rater count on each of its queue items and their completion;
    returns the ids of the items that became complete by it (for whatever follows a
    completion). One indexed query when the run is in no queue."""
    before = session.execute(
        select(QueueItem.id, QueueItem.completed_at).where(QueueItem.run_pk == run_pk)).all()
    if not before:
        return []
    count = raters(session, [run_pk]).get(run_pk, 0)
    _store(session, [QueueItem.run_pk == run_pk], count, now or utcnow())
    was_open = {item_id for item_id, completed in before if completed is None}
    return sorted(session.scalars(select(QueueItem.id).where(
        QueueItem.id.in_(was_open), QueueItem.completed_at.is_not(None))))


def refresh_runs(session: Session, queue_id: int, run_pks: Sequence[int],
                 now: datetime | None = None) -> dict[int, set[int]]:
    """``refresh_run`` for these runs' items in one queue (items just added). Returns who
    rated each run (``rater_sets``: runs without ratings are absent), for the deal."""
    now = now or utcnow()
    who = rater_sets(session, run_pks)
    by_count: dict[int, list[int]] = {}
    for pk, people in who.items():
        by_count.setdefault(len(people), []).append(pk)
    for count, pks in by_count.items():
        for start in range(0, len(pks), BATCH):
            _store(session, [QueueItem.queue_id == queue_id,
                             QueueItem.run_pk.in_(pks[start:start + BATCH])], count, now)
    return who


def recount_queue(session: Session, queue_id: int, now: datetime | None = None) -> None:
    """Re-derive ``completed_at`` of every item of the queue from its stored count (after
    the queue's ``reviewers_per_run`` changed): complete items keep their time."""
    session.execute(
        update(QueueItem).where(QueueItem.queue_id == queue_id).values(
            completed_at=case((_needed() <= QueueItem.ratings_count,
                               func.coalesce(QueueItem.completed_at, now or utcnow())),
                              else_=None))
        .execution_options(synchronize_session=False))


def item_completion(session: Session, item: QueueItem) -> ItemCompletion:
    """The item's stored completion (``ItemCompletion``). No access check."""
    needed = session.scalar(select(ReviewQueue.reviewers_per_run)
                            .where(ReviewQueue.id == item.queue_id))
    row = session.execute(select(QueueItem.ratings_count, QueueItem.completed_at)
                          .where(QueueItem.id == item.id)).one()
    return ItemCompletion(count=row.ratings_count, needed=int(needed or 1),
                          complete=row.completed_at is not None, completed_at=row.completed_at)
