"""Package-private: who may review a queue and how its items are assigned (issue 16
"Review queues": "who may review", "Assignment").

A queue's ``reviewers`` is ``all`` (every member of its workspace with the reviewer role
or above) or ``named`` (its ``review_queue_reviewer`` rows). Its ``assignment`` is
``open`` (the next item of whoever asks), ``round_robin`` (each item entering is dealt
to ``reviewers_per_run`` reviewers of the pool in turn, ``domain.queues.round_robin``) or
``by_hand`` (a lead assigns per item). In an assigned queue a reviewer's next item is
one assigned to them.

The pool of a round-robin deal (and of a lead's assignment by hand): the named reviewers
in their ``position`` order, or all reviewers of the workspace by username — either way
only active members of the workspace with the reviewer role or above, so a named reviewer
who was removed or deactivated is given no item (``admin.remove_member`` also drops a
removed member from the queues' named reviewers, ``drop_named``). ``queue.dealt`` counts the deals made; it is
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
from ..domain.queues import ASSIGN_ROUND_ROBIN, REVIEWERS_NAMED, round_robin, top_up
from ..models import (
    Feedback,
    Membership,
    QueueAssignment,
    QueueItem,
    QueueReviewer,
    ReviewQueue,
    Run,
    User,
)
from ..queries import insert_for
from .answer import answer_rating_condition


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
    """Who may be given the queue's items, user ids in dealing order (module docstring):
    its named reviewers, or the workspace's, who are active reviewers of the workspace
    now."""
    members = [i for i, _ in workspace_reviewers(session, queue.workspace_id)]
    if queue.reviewers == REVIEWERS_NAMED:
        current = set(members)
        return [i for i in named(session, queue.id) if i in current]
    return members


def drop_named(session: Session, user_id: int, workspace_id: int) -> int:
    """A member leaves the workspace: they stop being a named reviewer of its queues.
    Returns how many queues named them. For ``admin.remove_member`` (no check, no
    commit)."""
    return session.execute(delete(QueueReviewer).where(
        QueueReviewer.user_id == user_id,
        QueueReviewer.queue_id.in_(select(ReviewQueue.id).where(
            ReviewQueue.workspace_id == workspace_id)))
        .execution_options(synchronize_session=False)).rowcount or 0


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


def release_assignments_of(session: Session, user_id: int, workspace_id: int) -> int:
    """A member leaves the workspace: their open assignments in its queues (an item not
    complete whose run's answer they have not rated) are deleted, and each item of a
    round-robin queue among them is dealt again to the queue's pool without them
    (``domain.queues.top_up``, continuing its turn), so it can still reach N; a by-hand
    item waits for a lead to give it to someone else. An item they rated keeps its
    assignment: their finished work stays theirs. Returns how many were released. For
    ``admin.remove_member``, which checks access and commits: no check, no commit."""
    rated = exists().where(Feedback.run_pk == QueueItem.run_pk, Feedback.author_id == user_id,
                           Run.id == Feedback.run_pk, answer_rating_condition())
    released = session.execute(
        select(QueueAssignment.id, QueueItem.id, QueueItem.queue_id)
        .join(QueueItem, QueueItem.id == QueueAssignment.item_id)
        .join(ReviewQueue, ReviewQueue.id == QueueItem.queue_id)
        .where(QueueAssignment.user_id == user_id, ReviewQueue.workspace_id == workspace_id,
               QueueItem.completed_at.is_(None), ~rated)
        .order_by(QueueItem.queue_id, QueueItem.id)).all()
    if not released:
        return 0
    session.execute(delete(QueueAssignment).where(QueueAssignment.id.in_([r[0] for r in released]))
                    .execution_options(synchronize_session=False))
    by_queue: dict[int, list[int]] = {}
    for _, item_id, queue_id in released:
        by_queue.setdefault(queue_id, []).append(item_id)
    for queue in session.scalars(select(ReviewQueue).where(ReviewQueue.id.in_(by_queue))):
        if queue.assignment == ASSIGN_ROUND_ROBIN:
            _deal_again(session, queue, by_queue[queue.id], user_id)
    return len(released)


def _deal_again(session: Session, queue: ReviewQueue, item_ids: list[int], leaving: int) -> None:
    people = [p for p in pool(session, queue) if p != leaving]
    current: dict[int, set[int]] = {i: set() for i in item_ids}
    for item_id, user_id in session.execute(select(QueueAssignment.item_id, QueueAssignment.user_id)
                                            .where(QueueAssignment.item_id.in_(item_ids))):
        current[item_id].add(user_id)
    hands, turns = top_up(people, queue.dealt, [current[i] for i in item_ids],
                          queue.reviewers_per_run)
    rows = [{"item_id": i, "user_id": u} for i, hand in zip(item_ids, hands, strict=True)
            for u in hand]
    if rows:
        session.execute(insert_for(session, QueueAssignment.__table__).values(rows)
                        .on_conflict_do_nothing(index_elements=["item_id", "user_id"]))
    session.execute(update(ReviewQueue).where(ReviewQueue.id == queue.id)
                    .values(dealt=ReviewQueue.dealt + turns))
