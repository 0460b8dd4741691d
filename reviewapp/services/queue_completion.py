"""When a review-queue item is complete (issue 16 "Review queues"): stored, not counted.

An item is **complete** when ``reviewers_per_run`` different reviewers **of the queue**
have rated its run's answer-level target (``answer.answer_rating_condition``: a chat
run's answer message, an AIOps run's report, or its answer when it has no report). Who
counts for a queue (``counted_rating``, the one statement of the rule, also read by the
verdict, the disputes, the progress figures and the agreement per queue): every rater
when the queue is open to all reviewers of the workspace; when it names its reviewers,
the named ones, and a rating given by someone who counted then and stopped counting
since (no longer named, left the workspace, or the queue came to name its reviewers:
``QueueFormerRater``, written by ``keep_ratings_of``) — a rating someone else gives (an
admin or a lead from the run page) does not count. Each item keeps ``ratings_count``
(those reviewers) and ``completed_at`` (UTC, since when the count reaches the queue's N;
null below it). The services keep both:

- the feedback services (``feedback.ratings.upsert_feedback`` / ``delete_feedback``)
  call ``refresh_run`` after writing an answer-level rating or deleting any rating, in
  the same transaction, after the run row lock that serialises a run's rating writers
  (PostgreSQL; SQLite serialises writers anyway), so two reviewers rating one run at
  once cannot both write a stale count;
- ``runs.queue_fill`` calls ``refresh_runs`` for items it adds (a run rated before it
  entered the queue) and ``refresh_run`` when a run is re-ingested (its answer may have
  changed);
- ``recount_queue`` after a queue's ``reviewers_per_run`` changed;
- ``recount_items`` after who counts changed (``review_queues.update_queue``: named
  reviewers or the scope; ``queue_assignment.drop_named``: a member removed), after
  ``keep_ratings_of`` kept the ratings of those who stop counting.

``completed_at`` keeps its first time while the item stays complete; a deleted rating
that takes the count below N clears it. The UPDATE that stores an item complete also
releases its reservation (``reserved_by`` / ``reserved_until``, whoever held it): a
complete item is handed to nobody, so nobody holds it; reopened by a deleted rating, it
is free for the next reviewer who asks. Nothing here checks access or commits: the
callers did and do.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import case, distinct, exists, false, func, literal, or_, select, true, update
from sqlalchemy.orm import Session

from ..domain.queues import REVIEWERS_NAMED
from ..models import Feedback, QueueFormerRater, QueueItem, QueueReviewer, ReviewQueue, Run
from ..models.base import utcnow
from ..queries import insert_for
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


def rater_sets(session: Session, run_pks: Sequence[int]) -> dict[int, set[int]]:
    """``{run id: user ids of the reviewers who rated its answer-level target}`` for the
    runs that have any (runs without are absent), whoever they are, one statement per
    ``BATCH`` runs."""
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


def counted_rating(queue_id: Any, reviewers: Any, run_pk: Any, author_id: Any) -> Any:
    """SQL condition: the answer rating by ``author_id`` of run ``run_pk`` counts for the
    queue ``queue_id`` whose ``reviewers`` scope is given (module docstring): the queue
    is open to all, names the author, or kept the author's rating of that run
    (``QueueFormerRater``). Each argument is a value or a column of the statement it is
    placed in (correlated); ``reviewers`` as a value (a queue already read) leaves out
    what it decides: no condition at all for a queue open to all."""
    if isinstance(reviewers, str) and reviewers != REVIEWERS_NAMED:
        return true()
    scope = false() if isinstance(reviewers, str) else reviewers != REVIEWERS_NAMED
    # Correlated with whichever enclosing statement has the other columns, however deep.
    return or_(scope,
               exists().where(QueueReviewer.queue_id == queue_id,
                              QueueReviewer.user_id == author_id)
               .correlate_except(QueueReviewer),
               exists().where(QueueFormerRater.queue_id == queue_id,
                              QueueFormerRater.run_pk == run_pk,
                              QueueFormerRater.user_id == author_id)
               .correlate_except(QueueFormerRater))


def _counted() -> Any:
    """Correlated: how many different reviewers who count for the item's queue rated its
    run's answer-level target."""
    return (select(func.count(distinct(Feedback.author_id)))
            .select_from(Feedback).join(Run, Run.id == Feedback.run_pk)
            .join(ReviewQueue, ReviewQueue.id == QueueItem.queue_id)
            .where(Feedback.run_pk == QueueItem.run_pk, answer_rating_condition(),
                   counted_rating(ReviewQueue.id, ReviewQueue.reviewers, Feedback.run_pk,
                                  Feedback.author_id))
            .correlate(QueueItem).scalar_subquery())


def rated_by(user_col: Any) -> Any:
    """EXISTS, correlated with ``QueueItem``: the user in ``user_col`` (a column or a
    value) rated the item's run's answer."""
    return (select(Feedback.id).join(Run, Run.id == Feedback.run_pk)
            .where(Feedback.run_pk == QueueItem.run_pk, Feedback.author_id == user_col,
                   answer_rating_condition())
            .exists())


def _released_when(complete: Any) -> dict[str, Any]:
    """The reservation columns' values in an UPDATE that stores completion: a complete
    item is held by nobody (it is never handed out again, so a hold on it would only
    show it "reserved" and its holder "holding" it until the time ran out), nor is an
    item whose holder has rated its answer (their part is done: it is free for the next
    reviewer, ``queue_work``); otherwise the item keeps its holder."""
    let_go = or_(complete, rated_by(QueueItem.reserved_by))
    return {"reserved_by": case((let_go, None), else_=QueueItem.reserved_by),
            "reserved_until": case((let_go, None), else_=QueueItem.reserved_until)}


def _store(session: Session, where: Iterable[Any], now: datetime) -> None:
    """Store each item's count of who counts for its queue (``_counted``) and its
    completion, for the items ``where`` selects, releasing the reservation of a complete
    item or of a holder who rated it (``_released_when``): one UPDATE."""
    count = _counted()
    complete = _needed() <= count
    session.execute(
        update(QueueItem).where(*where).values(
            ratings_count=count,
            completed_at=case((complete, func.coalesce(QueueItem.completed_at, now)),
                              else_=None),
            **_released_when(complete))
        .execution_options(synchronize_session=False))


def refresh_run(session: Session, run_pk: int, now: datetime | None = None) -> list[int]:
    """Store on each of the run's queue items its count of raters who count for that
    queue (``counted_rating``) and its completion; returns the ids of the items that
    became complete by it (for whatever follows a completion). One indexed query when
    the run is in no queue."""
    before = session.execute(
        select(QueueItem.id, QueueItem.completed_at).where(QueueItem.run_pk == run_pk)).all()
    if not before:
        return []
    _store(session, [QueueItem.run_pk == run_pk], now or utcnow())
    was_open = {item_id for item_id, completed in before if completed is None}
    return sorted(session.scalars(select(QueueItem.id).where(
        QueueItem.id.in_(was_open), QueueItem.completed_at.is_not(None))))


def refresh_runs(session: Session, queue_id: int, run_pks: Sequence[int],
                 now: datetime | None = None) -> dict[int, set[int]]:
    """``refresh_run`` for these runs' items in one queue (items just added): the items
    whose run has an answer rating are counted (one UPDATE per ``BATCH``), the others
    keep 0. Returns who rated each run (``rater_sets``, whoever they are: runs without
    ratings are absent), for the deal."""
    now = now or utcnow()
    who = rater_sets(session, run_pks)
    rated = sorted(who)
    for start in range(0, len(rated), BATCH):
        _store(session, [QueueItem.queue_id == queue_id,
                         QueueItem.run_pk.in_(rated[start:start + BATCH])], now)
    return who


def recount_items(session: Session, queue_ids: Sequence[int], author_id: int | None = None,
                  now: datetime | None = None) -> None:
    """Count again the items of the queues ``queue_ids`` (after who counts for them
    changed) and re-derive their completion (complete items keep their time; a count
    below N clears it). ``author_id``: only the items whose run that user rated (a member
    removed). One UPDATE."""
    if not queue_ids:
        return
    where = [QueueItem.queue_id.in_(list(queue_ids))]
    if author_id is not None:
        where.append(exists().where(Feedback.run_pk == QueueItem.run_pk,
                                    Feedback.author_id == author_id))
    _store(session, where, now or utcnow())


def keep_ratings_of(session: Session, queue_ids: Sequence[int], stopping: Any) -> None:
    """Those who stop counting for the queue keep counting for the answer ratings they
    gave of their runs (``QueueFormerRater``, the decision of issue 16: simplest and
    auditable), in the queues ``queue_ids``: ``stopping`` is a SQL condition on
    ``Feedback.author_id`` (who stop); call it before the change, while they count. One INSERT … SELECT (ON CONFLICT DO
    NOTHING); no check, no commit."""
    table = QueueFormerRater.__table__
    when = literal(utcnow(), table.c.created_at.type)
    rows = (select(QueueItem.queue_id, Feedback.run_pk, Feedback.author_id, when, when)
            .distinct()
            .join(Feedback, Feedback.run_pk == QueueItem.run_pk)
            .join(Run, Run.id == Feedback.run_pk)
            .join(ReviewQueue, ReviewQueue.id == QueueItem.queue_id)
            .where(QueueItem.queue_id.in_(list(queue_ids)), stopping, answer_rating_condition(),
                   counted_rating(ReviewQueue.id, ReviewQueue.reviewers, Feedback.run_pk,
                                  Feedback.author_id)))
    session.execute(insert_for(session, table).from_select(
        ["queue_id", "run_pk", "user_id", "created_at", "updated_at"], rows)
        .on_conflict_do_nothing(index_elements=["queue_id", "run_pk", "user_id"]))


def recount_queue(session: Session, queue_id: int, now: datetime | None = None) -> None:
    """Re-derive ``completed_at`` of every item of the queue from its stored count (after
    the queue's ``reviewers_per_run`` changed): complete items keep their time, and
    items complete now are held by nobody (``_released_when``)."""
    complete = _needed() <= QueueItem.ratings_count
    session.execute(
        update(QueueItem).where(QueueItem.queue_id == queue_id).values(
            completed_at=case((complete, func.coalesce(QueueItem.completed_at, now or utcnow())),
                              else_=None),
            **_released_when(complete))
        .execution_options(synchronize_session=False))


def item_completion(session: Session, item: QueueItem) -> ItemCompletion:
    """The item's stored completion (``ItemCompletion``). No access check."""
    needed = session.scalar(select(ReviewQueue.reviewers_per_run)
                            .where(ReviewQueue.id == item.queue_id))
    row = session.execute(select(QueueItem.ratings_count, QueueItem.completed_at)
                          .where(QueueItem.id == item.id)).one()
    return ItemCompletion(count=row.ratings_count, needed=int(needed or 1),
                          complete=row.completed_at is not None, completed_at=row.completed_at)


def before_counting_changes(session: Session, queue: ReviewQueue, scope: str,
                            named: Sequence[int] | None) -> bool:
    """Call before the queue's ``reviewers`` becomes ``scope`` and (``named`` not
    ``None``) its named reviewers become ``named``: whoever stops counting keeps counting
    for the answer ratings they gave (``keep_ratings_of``: open to all -> named, everyone
    not named; named -> named, those no longer named; -> open to all, nobody). Returns
    whether who counts changes, so that the caller ``recount_items`` after the change."""
    before = set(session.scalars(select(QueueReviewer.user_id)
                                 .where(QueueReviewer.queue_id == queue.id)))
    after = before if named is None else set(named)
    if scope != REVIEWERS_NAMED:
        return queue.reviewers == REVIEWERS_NAMED
    if queue.reviewers != REVIEWERS_NAMED:
        keep_ratings_of(session, [queue.id], Feedback.author_id.not_in(after))
        return True
    if before - after:
        keep_ratings_of(session, [queue.id], Feedback.author_id.in_(before - after))
    return before != after
