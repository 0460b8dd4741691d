"""What is left for a reviewer when "my next item" finds none (issue 16, SPEC 8 "Review
queues"; new-user walk): how many items the queues hold, how many are not complete, and
why each of those is not the reviewer's now — the item they just skipped (still open to
them: asking again hands it back), items of a by-hand queue waiting for a lead to assign
them, the rest waiting for other reviewers. The pages turn it into words. Reads only.
Split from ``queue_pages``; importable from ``review_queues``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, case, exists, func, or_, select
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..domain.queues import ASSIGN_BY_HAND, ASSIGN_OPEN
from ..models import Membership, QueueAssignment, QueueItem, ReviewQueue
from .queue_assignment import assigned_condition
from .queue_completion import rated_by
from .queue_pages import reviewable_queues
from .queue_work import get_queue


@dataclass(frozen=True)
class LeftForMe:
    """The queues looked at, for one reviewer: ``items`` in them, ``left`` not complete;
    of those, ``skipped``: the item just skipped is one, still open to the reviewer (not
    complete, not rated by them, theirs in an assigned queue); ``for_lead``: items of
    by-hand queues with fewer assignees than the queue's reviewers per run (a lead
    assigns them); ``for_others``: the rest, which wait for other reviewers. ``to_assign``:
    those of ``for_lead`` in queues the actor leads (theirs to assign, not to wait for)."""

    items: int
    left: int
    skipped: bool
    for_lead: int
    to_assign: int = 0

    @property
    def for_others(self) -> int:
        """Items not complete that wait for other reviewers (neither skipped nor a lead's)."""
        return self.left - int(self.skipped) - self.for_lead


def left_for_me(session: Session, actor: Actor, queue_id: Any = None,
                skipped: int | None = None) -> LeftForMe:
    """``LeftForMe`` of the queue ``queue_id`` (``None`` or "": every queue the actor may
    review, as "Open my next item" walks them), ``skipped``: the item id the actor just
    skipped (or left), if any. Meant for when ``next_for_me`` found nothing: an item open
    to the actor other than ``skipped`` is counted among ``for_others``; ``to_assign``
    counts those waiting for the actor as a lead of their queue. ``Forbidden``
    as ``get_queue``. Reads only."""
    if queue_id in (None, ""):
        queues = reviewable_queues(session, actor)
    else:
        queues = [get_queue(session, actor, queue_id, Role.REVIEWER)]
    ids = [q.id for q in queues]
    if not ids:
        return LeftForMe(0, 0, False, 0)
    open_item = and_(QueueItem.queue_id.in_(ids), QueueItem.completed_at.is_(None))
    items, left = session.execute(select(
        func.count(), func.coalesce(func.sum(case((QueueItem.completed_at.is_(None), 1), else_=0)), 0))
        .where(QueueItem.queue_id.in_(ids))).one()
    assignees = select(func.count(QueueAssignment.id)).where(
        QueueAssignment.item_id == QueueItem.id).scalar_subquery()
    led = exists().where(Membership.workspace_id == ReviewQueue.workspace_id,
                         Membership.user_id == actor.user_id,
                         Membership.role.in_(Role.LEAD.at_least()))
    for_lead, to_assign = session.execute(
        select(func.count(), func.coalesce(func.sum(case((led, 1), else_=0)), 0)).select_from(QueueItem)
        .join(ReviewQueue, ReviewQueue.id == QueueItem.queue_id)
        .where(open_item, ReviewQueue.assignment == ASSIGN_BY_HAND,
               QueueItem.id != (skipped or 0), assignees < ReviewQueue.reviewers_per_run)).one()
    mine = session.scalar(
        select(QueueItem.id).join(ReviewQueue, ReviewQueue.id == QueueItem.queue_id)
        .where(open_item, QueueItem.id == (skipped or 0), ~rated_by(actor.user_id),
               or_(ReviewQueue.assignment == ASSIGN_OPEN, assigned_condition(actor.user_id))))
    return LeftForMe(int(items), int(left), mine is not None, int(for_lead or 0), int(to_assign or 0))
