"""Package-private: who may review a queue and how its items are assigned (issue 16
"Review queues": "who may review", "Assignment").

A queue's ``reviewers`` is ``all`` (every member of its workspace with the reviewer role
or above) or ``named`` (its ``review_queue_reviewer`` rows). Its ``assignment`` is
``open`` (the next item of whoever asks), ``round_robin`` (each item entering is dealt
to ``reviewers_per_run`` reviewers of the pool in turn, ``domain.queues.round_robin``) or
``by_hand`` (a lead assigns per item). In an assigned queue a reviewer's next item is
one assigned to them.

The pool of a round-robin deal: the named reviewers in their ``position`` order, or all
reviewers of the workspace by username. ``queue.dealt`` counts the deals made; it is
advanced by one ``UPDATE … SET dealt = dealt + n`` per batch, so concurrent ingests
continue each other's turn instead of restarting it.

Nothing here checks access or commits: the callers (``review_queues``, ``queue_fill``)
did and do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, delete, exists, or_, select, update
from sqlalchemy.orm import Session

from ..actors import Role
from ..domain.queues import ASSIGN_ROUND_ROBIN, REVIEWERS_NAMED, round_robin
from ..models import Membership, QueueAssignment, QueueItem, QueueReviewer, ReviewQueue, User
from ..queries import insert_for


def may_review_condition(queue_col_id: Any, queue_col_reviewers: Any, user_id: Any) -> Any:
    """SQL: the user may review the queue (reviewer or above of its workspace is checked
    by the caller's scope): the queue is open to all, or names the user."""
    return or_(queue_col_reviewers != REVIEWERS_NAMED,
               exists().where(QueueReviewer.queue_id == queue_col_id,
                              QueueReviewer.user_id == user_id))


def may_review(session: Session, queue: ReviewQueue, user_id: int) -> bool:
    """Whether the user (already known to be a reviewer of the workspace) may review."""
    if queue.reviewers != REVIEWERS_NAMED:
        return True
    return session.scalar(select(QueueReviewer.id).where(
        QueueReviewer.queue_id == queue.id, QueueReviewer.user_id == user_id)) is not None


def named(session: Session, queue_id: int) -> list[int]:
    """The queue's named reviewers' user ids, in position order."""
    return list(session.scalars(select(QueueReviewer.user_id).where(
        QueueReviewer.queue_id == queue_id).order_by(QueueReviewer.position, QueueReviewer.id)))


def workspace_reviewers(session: Session, workspace_id: int) -> list[tuple[int, str]]:
    """(user id, username) of every active member of the workspace with the reviewer
    role or above, by username."""
    return [(i, n) for i, n in session.execute(
        select(User.id, User.username).join(Membership, Membership.user_id == User.id)
        .where(Membership.workspace_id == workspace_id,
               Membership.role.in_(Role.REVIEWER.at_least()), User.active.is_(True))
        .order_by(User.username))]


def pool(session: Session, queue: ReviewQueue) -> list[int]:
    """Who round-robin deals go to (module docstring)."""
    if queue.reviewers == REVIEWERS_NAMED:
        return named(session, queue.id)
    return [i for i, _ in workspace_reviewers(session, queue.workspace_id)]


def deal(session: Session, queue: ReviewQueue, item_ids: Sequence[int]) -> int:
    """Assign these items of a round-robin queue to reviewers of its pool in turn;
    returns how many assignments were made (0 for another mode or an empty pool)."""
    if queue.assignment != ASSIGN_ROUND_ROBIN or not item_ids:
        return 0
    people = pool(session, queue)
    if not people:
        return 0
    n = min(queue.reviewers_per_run, len(people))
    end = session.execute(
        update(ReviewQueue).where(ReviewQueue.id == queue.id)
        .values(dealt=ReviewQueue.dealt + n * len(item_ids))
        .returning(ReviewQueue.dealt)).scalar_one()
    start = end - n * len(item_ids)
    hands = round_robin(people, start, len(item_ids), queue.reviewers_per_run)
    rows = [{"item_id": item_id, "user_id": user_id}
            for item_id, hand in zip(item_ids, hands, strict=True) for user_id in hand]
    stmt = insert_for(session, QueueAssignment.__table__).values(rows) \
        .on_conflict_do_nothing(index_elements=["item_id", "user_id"])
    session.execute(stmt)
    return len(rows)


def deal_unassigned(session: Session, queue: ReviewQueue) -> int:
    """Deal every open (not complete) item of the queue that has no assignment (after
    the queue became round-robin); returns the assignments made."""
    ids = list(session.scalars(select(QueueItem.id).where(
        QueueItem.queue_id == queue.id, QueueItem.completed_at.is_(None),
        ~exists().where(QueueAssignment.item_id == QueueItem.id)).order_by(QueueItem.id)))
    return deal(session, queue, ids)


def drop_outsiders(session: Session, queue: ReviewQueue) -> None:
    """Remove assignments of the queue's items to users who may no longer review it
    (named reviewers changed)."""
    if queue.reviewers != REVIEWERS_NAMED:
        return
    session.execute(delete(QueueAssignment).where(
        QueueAssignment.item_id.in_(select(QueueItem.id).where(QueueItem.queue_id == queue.id)),
        ~QueueAssignment.user_id.in_(select(QueueReviewer.user_id).where(
            QueueReviewer.queue_id == queue.id))).execution_options(synchronize_session=False))


def assigned_condition(user_id: Any) -> Any:
    """SQL: the item is assigned to the user."""
    return exists().where(and_(QueueAssignment.item_id == QueueItem.id,
                               QueueAssignment.user_id == user_id))
