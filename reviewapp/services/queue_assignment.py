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

Who has rated a run comes first in no deal (our rule; SPEC 8 says only "N reviewers per
run, assignment"): of the reviewers whose turn it is, those who have not rated the
item's run's answer (``answer.answer_rating_condition``, in or outside the queue) are
dealt it first, and a reviewer who has rated it only fills a seat no one else can
(``domain.queues.round_robin`` / ``top_up``). A rating already made counts towards the
item's N anyway; the deal asks for new ones. Deterministic (the same turn, ratings and
pool give the same hands) and set-based: the ratings of a batch's runs are read in one
statement (``queue_completion.rater_sets``, ``_rated_items``), never per run.

Nothing here checks access or commits: the callers (``review_queues``, ``queue_fill``)
did and do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import and_, delete, exists, func, or_, select, update
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
from .queue_completion import keep_ratings_of, recount_items


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


def who(session: Session, workspace_id: int, ids: Sequence[int]) -> str:
    """``ids`` (user ids, as a refusal names them) for a person to read: the workspace's
    members (active or not) by username in the order given, then how many others — not
    members, or no such user — without a name, so a message tells no user id and no name
    from outside the workspace: "cy, dan and 1 person outside the workspace"."""
    names = dict(session.execute(
        select(User.id, User.username).join(Membership, Membership.user_id == User.id)
        .where(Membership.workspace_id == workspace_id, User.id.in_(set(ids)))).all())
    shown = list(dict.fromkeys(names[i] for i in ids if i in names))
    others = len({i for i in ids if i not in names})
    if others:
        shown.append(f"{others} {'person' if others == 1 else 'people'} outside the workspace")
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


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
    The answer ratings they gave keep counting for the queues that name their reviewers
    (``queue_completion.keep_ratings_of``), whose items they rated are counted again in
    the same transaction (``recount_items``: the same counts). Returns how many queues
    named them. For ``admin.remove_member`` (no check, no commit)."""
    queues = list(session.scalars(
        select(ReviewQueue.id).join(QueueReviewer, QueueReviewer.queue_id == ReviewQueue.id)
        .where(QueueReviewer.user_id == user_id, ReviewQueue.workspace_id == workspace_id,
               ReviewQueue.reviewers == REVIEWERS_NAMED)))
    if queues:
        keep_ratings_of(session, queues, Feedback.author_id == user_id)
    dropped = session.execute(delete(QueueReviewer).where(
        QueueReviewer.user_id == user_id,
        QueueReviewer.queue_id.in_(select(ReviewQueue.id).where(
            ReviewQueue.workspace_id == workspace_id)))
        .execution_options(synchronize_session=False)).rowcount or 0
    recount_items(session, queues, author_id=user_id)
    return dropped


def deal(session: Session, queue: ReviewQueue, item_ids: Sequence[int],
         rated: Mapping[int, set[int]] | None = None) -> int:
    """Assign these items of a round-robin queue to reviewers of its pool in turn, to
    who has not rated an item's run first (module docstring); returns how many
    assignments were made (0 for another mode or an empty pool). ``rated``: ``{item id:
    user ids who rated its run}`` when the caller read it (``queue_fill.insert_items``,
    with the items' counts; items absent: nobody); ``None`` reads it here (one
    statement per batch)."""
    if queue.assignment != ASSIGN_ROUND_ROBIN or not item_ids:
        return 0
    people = pool(session, queue)
    if not people:
        return 0
    if rated is None:
        rated = _rated_items(session, item_ids)
    n = min(queue.reviewers_per_run, len(people))
    end = session.execute(
        update(ReviewQueue).where(ReviewQueue.id == queue.id)
        .values(dealt=ReviewQueue.dealt + n * len(item_ids))
        .returning(ReviewQueue.dealt)).scalar_one()
    start = end - n * len(item_ids)
    hands = round_robin(people, start, len(item_ids), queue.reviewers_per_run,
                        [rated.get(i, set()) for i in item_ids])
    rows = [{"item_id": item_id, "user_id": user_id}
            for item_id, hand in zip(item_ids, hands, strict=True) for user_id in hand]
    stmt = insert_for(session, QueueAssignment.__table__).values(rows) \
        .on_conflict_do_nothing(index_elements=["item_id", "user_id"])
    session.execute(stmt)
    return len(rows)


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
            people = [p for p in pool(session, queue) if p != user_id]
            _deal_again(session, queue, by_queue[queue.id], people)
    return len(released)


def top_up_queue(session: Session, queue: ReviewQueue) -> int:
    """Deal a round-robin queue's open items again to its pool as it stands now (SPEC 8,
    "Review queues": assignment). The rule: an item that is not complete and has fewer
    assignees than ``min(reviewers_per_run, len(pool))`` is given the pool's reviewers it
    does not have yet, in turn from ``queue.dealt`` (``domain.queues.top_up``), until it
    has that many; an item already full is left alone (nothing is taken away or moved).
    So a queue whose whole pool was gone (its items left with nobody) is dealt again as
    soon as someone may review it, and an item left one short when its pool shrank gets
    its Nth reviewer back when the pool grows. The assignees counted are the item's
    stored ones (a reviewer who left keeps an item they rated: their rating counts).

    Called whenever someone may have become able to review: a lead saves the queue
    (``review_queues.update_queue``: named reviewers, reviewers per run, becoming
    round-robin), an account is reactivated, a member is added or given a reviewing role
    (``top_up_workspace``). Returns the assignments made (0 for another mode or an empty
    pool). No access check, no commit: the caller does both."""
    if queue.assignment != ASSIGN_ROUND_ROBIN:
        return 0
    people = pool(session, queue)
    if not people:
        return 0
    seats = min(queue.reviewers_per_run, len(people))
    count = func.count(QueueAssignment.id)
    short = list(session.scalars(
        select(QueueItem.id).outerjoin(QueueAssignment, QueueAssignment.item_id == QueueItem.id)
        .where(QueueItem.queue_id == queue.id, QueueItem.completed_at.is_(None))
        .group_by(QueueItem.id).having(count < seats).order_by(QueueItem.id)))
    return _deal_again(session, queue, short, people) if short else 0


def top_up_workspace(session: Session, workspace_id: int) -> int:
    """``top_up_queue`` for every round-robin queue of the workspace (someone may review
    there now: reactivated, added, or given a reviewing role). Returns the assignments
    made. No check, no commit."""
    queues = session.scalars(select(ReviewQueue).where(
        ReviewQueue.workspace_id == workspace_id, ReviewQueue.assignment == ASSIGN_ROUND_ROBIN)
        .order_by(ReviewQueue.id))
    return sum(top_up_queue(session, queue) for queue in list(queues))


def _rated_items(session: Session, item_ids: Sequence[int]) -> dict[int, set[int]]:
    """``{item id: user ids who rated its run's answer}`` for the items whose run has a
    rating (who ``queue_completion.rater_sets`` reads), in one statement."""
    found: dict[int, set[int]] = {}
    for item_id, author_id in session.execute(
            select(QueueItem.id, Feedback.author_id).distinct()
            .join(Feedback, Feedback.run_pk == QueueItem.run_pk)
            .join(Run, Run.id == Feedback.run_pk)
            .where(QueueItem.id.in_(list(item_ids)), answer_rating_condition())):
        found.setdefault(item_id, set()).add(author_id)
    return found


def _deal_again(session: Session, queue: ReviewQueue, item_ids: list[int],
                people: list[int]) -> int:
    """Top the items up from ``people`` (``domain.queues.top_up``, continuing the queue's
    turn, to who has not rated an item's run first); returns the assignments made."""
    current: dict[int, set[int]] = {i: set() for i in item_ids}
    for item_id, user_id in session.execute(select(QueueAssignment.item_id, QueueAssignment.user_id)
                                            .where(QueueAssignment.item_id.in_(item_ids))):
        current[item_id].add(user_id)
    dealt = session.scalar(select(ReviewQueue.dealt).where(ReviewQueue.id == queue.id))
    rated = _rated_items(session, item_ids)
    hands, turns = top_up(people, dealt or 0, [current[i] for i in item_ids],
                          queue.reviewers_per_run, [rated.get(i, set()) for i in item_ids])
    rows = [{"item_id": i, "user_id": u} for i, hand in zip(item_ids, hands, strict=True)
            for u in hand]
    if rows:
        session.execute(insert_for(session, QueueAssignment.__table__).values(rows)
                        .on_conflict_do_nothing(index_elements=["item_id", "user_id"]))
    if turns:
        session.execute(update(ReviewQueue).where(ReviewQueue.id == queue.id)
                        .values(dealt=ReviewQueue.dealt + turns))
    return len(rows)
