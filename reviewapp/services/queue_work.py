"""Working through a review queue (issue 16): a reviewer's next item and its reservation
(renew, release), the queue's progress, and the access check of a queue and an item.
Split from ``review_queues`` (whose docstring states the rules); every public name is
importable from there."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from sqlalchemy import (
    Integer,
    and_,
    bindparam,
    case,
    distinct,
    exists,
    func,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..db_setup import read_intent
from ..domain.queues import (
    ASSIGN_OPEN,
)
from ..errors import Conflict, Forbidden
from ..models import (
    Feedback,
    QueueItem,
    ReviewQueue,
    Run,
)
from ..models.base import utcnow
from ..queries import scope_to_actor
from .answer import answer_rating_condition
from .params import id_value
from .queue_assignment import (
    assigned_condition,
    may_review,
)
from .queue_completion import counted_rating, rated_by

CANDIDATES = 20


@dataclass(frozen=True)
class QueueProgress:
    """``items`` in the queue, ``complete`` of them (N reviewers rated), ``mine``: items
    the actor has rated where their rating counts for the queue
    (``queue_completion.counted_rating``), ``reserved``: items held by someone right
    now."""

    items: int
    complete: int
    mine: int
    reserved: int

    @property
    def left(self) -> int:
        """Items not complete yet."""
        return self.items - self.complete


def get_queue(session: Session, actor: Actor, queue_id: Any,
              min_role: Role = Role.REVIEWER) -> ReviewQueue:
    """The queue if the actor has ``min_role`` in its workspace, else ``Forbidden``
    (missing and foreign alike)."""
    pk = id_value(queue_id, "queue", "must be a queue id")
    found = session.scalar(scope_to_actor(select(ReviewQueue).where(ReviewQueue.id == pk),
                                          actor, ReviewQueue.workspace_id, min_role))
    if found is None:
        raise Forbidden()
    return found


# --- working through a queue -----------------------------------------------------------


def _free_for(user_id: Any, now: Any) -> Any:
    """The item is not held by anyone else right now."""
    return or_(QueueItem.reserved_by.is_(None), QueueItem.reserved_until.is_(None),
               QueueItem.reserved_until <= now, QueueItem.reserved_by == user_id,
               rated_by(QueueItem.reserved_by))


@dataclass(frozen=True)
class _NextStatements:
    held: Any
    candidates: Any
    queue_of: Any
    claim: Any
    let_go: Any
    item: Any


@cache
def _next_statements(assigned: bool) -> _NextStatements:
    """The statements of ``next_item``, built once with bound parameters (``:queue_id``,
    ``:user_id``, ``:now``, ``:until``, ``:item_id``, ``:exclude``, ``:after``; ``let_go``:
    ``:in_queue``, ``:kept``): their construction and compilation cost more than running them (the issue 16 benchmark), so both are reused.
    ``assigned``: the queue assigns items, so only the user's own are open to them."""
    when = QueueItem.__table__.c.reserved_until.type
    user = bindparam("user_id", type_=Integer)
    now = bindparam("now", type_=when)
    open_conds = [QueueItem.queue_id == bindparam("queue_id", type_=Integer),
                  QueueItem.completed_at.is_(None),  # an index range, not a count
                  QueueItem.id != bindparam("exclude", type_=Integer),
                  ~rated_by(user)]
    if assigned:
        open_conds.append(assigned_condition(user))
    free = _free_for(user, now)
    return _NextStatements(
        held=select(QueueItem.id).where(*open_conds, QueueItem.reserved_by == user,
                                        QueueItem.reserved_until > now)
        .order_by(QueueItem.id).limit(1),
        # after the skipped item (``:after``; 0: from the start): a range of the open
        # items' index, in the queue's order
        candidates=select(QueueItem.id).where(
            *open_conds, free, QueueItem.id > bindparam("after", type_=Integer))
        .order_by(QueueItem.id).limit(CANDIDATES),
        queue_of=select(QueueItem.queue_id).where(
            QueueItem.id == bindparam("item_id", type_=Integer)),
        claim=update(QueueItem).where(QueueItem.id == bindparam("item_id", type_=Integer), free)
        .values(reserved_by=user, reserved_until=bindparam("until", type_=when),
                updated_at=now),
        # the other open items of the queue the user holds (done for them: rated, or no
        # longer theirs): one index range of the holder's index
        let_go=update(QueueItem).where(
            QueueItem.reserved_by == user, QueueItem.queue_id == bindparam("in_queue",
                                                                           type_=Integer),
            QueueItem.completed_at.is_(None),
            QueueItem.id != bindparam("kept", type_=Integer))
        .values(reserved_by=None, reserved_until=None),
        item=select(QueueItem).where(QueueItem.id == bindparam("item_id", type_=Integer))
        .execution_options(populate_existing=True),
    )


def next_item(session: Session, actor: Actor, queue_id: Any,
              now: datetime | None = None, exclude: int | None = None,
              wrap: bool = True, exclude_queue: int | None = None) -> QueueItem | None:
    """Reserve and return the actor's next item: the one they already hold, else the
    oldest open item nobody else holds; ``None`` when there is none. An item is open
    while not complete (its stored ``completed_at``) and not rated by the actor, and in
    an assigned queue (round-robin, by hand) only when assigned to the actor. A held
    item is never handed to anyone else until its reservation expires (or its holder has
    rated it). The reservation lasts the queue's ``reservation_minutes``. A reviewer of
    the workspace who may review the queue (all, or named) may ask (``Forbidden``
    otherwise). Commits.

    ``exclude``: the item just skipped (or left), never handed out. When it is this
    queue's, the search starts after it in the queue's order (item id) and, with
    ``wrap``, wraps around to the start: skipping walks through every open item
    (SPEC 8, as the personal queue's ``after_run_pk``) rather than handing back the
    item skipped before it. ``wrap=False``: only the items after it (``next_for_me``
    goes on to the next queue first). ``exclude_queue``: the queue id of ``exclude`` when
    the caller already read it (``next_for_me``, once for its whole walk; 0: in no
    queue); ``None`` reads it here.

    One held item per reviewer per queue: claiming an item releases, in the same
    transaction, any other open item of the queue the actor holds (one they have rated
    meanwhile, or one no longer assigned to them), so it is free at once rather than
    shown as theirs until its reservation expires.

    The search runs in a read transaction of its own (``read_intent``: on SQLite it
    does not hold the write lock while it skips items); only the claim, one conditional
    UPDATE of one row, writes."""
    if not actor.is_user:
        raise Forbidden()
    queue = get_queue(session, actor, queue_id, Role.REVIEWER)
    if not may_review(session, queue, actor.user_id):
        raise Forbidden()
    now = now or utcnow()
    params = {"queue_id": queue.id, "user_id": actor.user_id, "now": now,
              "exclude": exclude or 0,
              "until": now + timedelta(minutes=queue.reservation_minutes)}
    session.commit()
    stmts = _next_statements(queue.assignment != ASSIGN_OPEN)
    with read_intent():
        connection = session.connection()
        held = connection.execute(stmts.held, params).scalar()
        skipped_in = exclude_queue
        if exclude and skipped_in is None:
            skipped_in = connection.execute(stmts.queue_of, {"item_id": exclude}).scalar()
        session.commit()
    if held is not None:
        found = _claim_first(session, stmts, params, [held])
        if found is not None:
            return found
    after = exclude if skipped_in == queue.id else 0
    for start in ([after, 0] if after and wrap else [after]):
        found = _search_from(session, stmts, {**params, "after": start})
        if found is not None:
            return found
    return None


def _search_from(session: Session, stmts: _NextStatements, params: dict[str, Any]
                 ) -> QueueItem | None:
    """Claim the first free open item after ``params["after"]``; ``None`` when none."""
    while True:
        with read_intent():
            candidates = list(session.connection().execute(stmts.candidates, params).scalars())
            session.commit()
        if not candidates:
            return None
        found = _claim_first(session, stmts, params, candidates)
        if found is not None:
            return found
        # every candidate was taken meanwhile: look again


def _claim_first(session: Session, stmts: _NextStatements, params: dict[str, Any],
                 candidates: list[int]) -> QueueItem | None:
    """Claim the first of ``candidates`` still free (letting go of the actor's other
    held item of the queue in the same transaction); ``None`` when all were taken."""
    for item_id in candidates:
        connection = session.connection()
        claimed = connection.execute(stmts.claim, {**params, "item_id": item_id}).rowcount
        if claimed:
            connection.execute(stmts.let_go, {"user_id": params["user_id"],
                                              "in_queue": params["queue_id"], "kept": item_id})
        session.commit()
        if claimed:
            with read_intent():  # a read: on SQLite it must not take the write lock
                return session.scalars(stmts.item, {"item_id": item_id}).one()
    return None


def renew(session: Session, actor: Actor, item_id: Any, now: datetime | None = None
          ) -> datetime:
    """Extend the actor's reservation of the item (the page is still open); returns the
    new end. ``Conflict`` when the actor does not hold it (expired and taken, or
    released; ``details`` ``{"assignment": the queue's mode, "assigned": whether the item
    is assigned to the actor}``: who may take it), or ``{"complete": True}`` when the item
    is complete (its
    completion released it: ``queue_completion``), ``{"rated": True}`` when the actor
    has rated its answer (their rating let go of the hold: ``queue_completion._store``;
    a hold from before that rule is not extended either); ``Forbidden`` for an item they
    cannot see. Commits."""
    item, queue = _item_for(session, actor, item_id)
    now = now or utcnow()
    until = now + timedelta(minutes=queue.reservation_minutes)
    user = literal(actor.user_id)
    done = session.execute(
        update(QueueItem).where(QueueItem.id == item.id, QueueItem.reserved_by == actor.user_id,
                                QueueItem.completed_at.is_(None), ~rated_by(user))
        .values(reserved_until=until, updated_at=now)
        .execution_options(synchronize_session=False)).rowcount
    if done:
        session.commit()
        return until
    complete, rated = session.execute(
        select(QueueItem.completed_at.is_not(None), rated_by(user))
        .where(QueueItem.id == item.id)).one()
    assigned = assigned_to(session, queue, item.id, actor.user_id)
    session.commit()
    if complete:
        raise Conflict("item: this item is complete", details={"complete": True})
    if rated:
        raise Conflict("item: you have rated this item", details={"rated": True})
    raise Conflict("item: you no longer hold this item",
                   details={"assignment": queue.assignment, "assigned": assigned})


def assigned_to(session: Session, queue: ReviewQueue, item_id: int, user_id: int | None) -> bool:
    """Whether the item of ``queue`` is assigned to the user (``assigned_condition``): in
    an assigned queue only its assignees may take it; in an open queue nobody is
    assigned (``False``, no statement)."""
    if queue.assignment == ASSIGN_OPEN:
        return False
    return bool(session.scalar(select(assigned_condition(user_id)).where(QueueItem.id == item_id)))


def release(session: Session, actor: Actor, item_id: Any) -> bool:
    """Give up the actor's reservation (skip); ``False`` when they did not hold it.
    Commits."""
    item, _ = _item_for(session, actor, item_id)
    done = session.execute(
        update(QueueItem).where(QueueItem.id == item.id, QueueItem.reserved_by == actor.user_id)
        .values(reserved_by=None, reserved_until=None)
        .execution_options(synchronize_session=False)).rowcount
    session.commit()
    return bool(done)


@dataclass(frozen=True)
class Skipped:
    """A skipped item (``skip``): its queue's ``queue_name`` and ``assignment`` mode, and
    whether the item is ``assigned`` to the one who skipped it (it then comes back to
    them; else it is free for the queue's other reviewers, or its assignees)."""

    queue_name: str
    assignment: str
    assigned: bool


def skippable(queue: ReviewQueue, user_id: Any, now: datetime) -> Any:
    """SQL condition on ``QueueItem`` (of ``queue``): skipping it means something to the
    user — they hold it (a live reservation), or the queue assigns its items and it is
    assigned to them — while it is open for them (not complete, not rated by them)."""
    user = literal(user_id)
    held = and_(QueueItem.reserved_by == user, QueueItem.reserved_until > now)
    mine = or_(held, assigned_condition(user)) if queue.assignment != ASSIGN_OPEN else held
    return and_(QueueItem.completed_at.is_(None), ~rated_by(user), mine)


def skip(session: Session, actor: Actor, item_id: Any, now: datetime | None = None) -> Skipped:
    """"Skip" (SPEC 8, Review queues; queuewalk): the actor passes over the item —
    ``skippable`` for them — and lets go of their reservation of it, if any; the caller
    then asks for the next item past it (``next_for_me``'s ``exclude``). ``Conflict``
    (``details`` ``{"run_pk", "queue_id"}``: the item's page to go back to) when skipping
    means nothing to them: a lead or reviewer not holding it and not assigned it, a
    lapsed reservation, a complete item or one they rated; nothing is changed.
    ``Forbidden`` for an item they cannot see. Commits."""
    item, queue = _item_for(session, actor, item_id)
    now = now or utcnow()
    may = session.scalar(select(skippable(queue, actor.user_id, now)).where(QueueItem.id == item.id))
    if not may:
        session.commit()
        raise Conflict("item: there is nothing for you to skip: you do not hold this item and it is not "
                       "waiting for you", details={"run_pk": item.run_pk, "queue_id": queue.id})
    assigned = assigned_to(session, queue, item.id, actor.user_id)
    release(session, actor, item.id)
    return Skipped(queue.name, queue.assignment, assigned)


def release_held_by(session: Session, user_id: int, workspace_id: int | None = None) -> int:
    """Release every queue item ``user_id`` holds, in the queues of ``workspace_id``
    (``None``: of every workspace): they are free for the next reviewer at once. For
    removing a member and deactivating an account, which check access and commit: this
    neither checks nor commits, so the release is part of the removal's transaction.
    Returns how many items were released."""
    stmt = update(QueueItem).where(QueueItem.reserved_by == user_id)
    if workspace_id is not None:
        stmt = stmt.where(QueueItem.queue_id.in_(
            select(ReviewQueue.id).where(ReviewQueue.workspace_id == workspace_id)))
    return session.execute(stmt.values(reserved_by=None, reserved_until=None)
                           .execution_options(synchronize_session=False)).rowcount


def _item_for(session: Session, actor: Actor, item_id: Any, min_role: Role = Role.REVIEWER
              ) -> tuple[QueueItem, ReviewQueue]:
    if not actor.is_user:
        raise Forbidden()
    pk = id_value(item_id, "item", "must be a queue item id")
    row = session.execute(scope_to_actor(
        select(QueueItem, ReviewQueue).join(ReviewQueue, ReviewQueue.id == QueueItem.queue_id)
        .where(QueueItem.id == pk), actor, ReviewQueue.workspace_id, min_role)
    ).one_or_none()
    if row is None:
        raise Forbidden()
    return row[0], row[1]


def progress(session: Session, actor: Actor, queue_id: Any, now: datetime | None = None
             ) -> QueueProgress:
    """Counts of the queue for the actor (``QueueProgress``). ``Forbidden`` unless a
    reviewer of its workspace."""
    queue = get_queue(session, actor, queue_id, Role.REVIEWER)
    now = now or utcnow()
    row = session.execute(select(
        func.count(),
        func.coalesce(func.sum(_case(QueueItem.completed_at.is_not(None))), 0),
        func.coalesce(func.sum(_case(and_(QueueItem.reserved_by.is_not(None),
                                          QueueItem.reserved_until > now))), 0),
    ).where(QueueItem.queue_id == queue.id)).one()
    mine = 0
    if actor.is_user:  # from the actor's ratings, not from every item
        mine = session.scalar(
            select(func.count(distinct(QueueItem.id)))
            .select_from(Feedback).join(Run, Run.id == Feedback.run_pk)
            .join(QueueItem, QueueItem.run_pk == Feedback.run_pk)
            .where(QueueItem.queue_id == queue.id, Feedback.author_id == actor.user_id,
                   answer_rating_condition(),
                   counted_rating(queue.id, queue.reviewers, Feedback.run_pk,
                                  Feedback.author_id))) or 0
    return QueueProgress(items=int(row[0]), complete=int(row[1]), mine=int(mine),
                         reserved=int(row[2]))


def _case(condition: Any) -> Any:
    """1 where ``condition`` holds, else 0 (for SUM)."""
    return case((condition, 1), else_=0)


def exists_item(session: Session, queue_id: int, run_pk: int) -> bool:
    """Whether the run is in the queue (no access check: tests and callers that did)."""
    return bool(session.scalar(select(exists().where(QueueItem.queue_id == queue_id,
                                                     QueueItem.run_pk == run_pk))))
