"""What the queue item bar says about an item to the one looking at it (issue 16 "Review
queues", SPEC 8; item-bar walk): the one rule of which sentence applies, for the run
page's bar (``queue_pages.open_item``) and its renewal poll (``/queues/items/<id>/renew``,
through ``item_bar``). The templates only word it (``templates/queues/_reservation.html``).

Before, the bar told anyone not holding the item "Not reserved for you: another reviewer
may take this item" — a lead looking at the item reviewer2 holds, a lead opening a free
item from the queue's page, the viewer after their own rating. In order, the first that
is true of the item for the viewer:

- ``DISPUTED``: its run is disputed in this queue (the governing one) and no lead has
  decided it (``queue_governing.disputed_mark``): it waits for a lead;
- ``COMPLETE``: it has its N ratings (``completed_at``): nobody holds it;
- ``RATED``: the viewer rated its run's answer (``queue_completion.rated_by``): saved;
- ``HELD``: the viewer holds it (a live reservation), ``until`` when (UTC);
- ``HELD_BY_OTHER``: another reviewer holds it: ``holder`` (username) until ``until``;
- ``ASSIGNED``: the queue assigns its items and this one is the viewer's (``mode``);
- ``OTHERS``: the queue assigns its items, to other reviewers (``mode``);
- ``FREE``: an open queue's item nobody holds: the viewer may rate it here; "Next item"
  reserves one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..actors import Actor
from ..domain.queues import ASSIGN_OPEN
from ..models import QueueItem, ReviewQueue, Run, User
from ..models.base import utcnow
from .queue_completion import rated_by
from .queue_governing import disputed_mark
from .queue_work import _item_for, assigned_to

DISPUTED, COMPLETE, RATED = "disputed", "complete", "rated"
HELD, HELD_BY_OTHER, ASSIGNED, OTHERS, FREE = "held", "held_by_other", "assigned", "others", "free"
WARN = frozenset({HELD_BY_OTHER, OTHERS, FREE})  # the item is not the viewer's to work now


@dataclass(frozen=True)
class BarState:
    """Which of the bar's sentences applies (``kind``, one of the module's constants) and
    what it names: ``until`` (UTC, aware) for ``HELD`` and ``HELD_BY_OTHER``, ``holder``
    (username) for ``HELD_BY_OTHER``, ``mode`` (the queue's assignment mode) for
    ``ASSIGNED`` and ``OTHERS``. ``held``: the viewer holds it (the page renews it);
    ``warn``: the item is not the viewer's to work now (the sentence is marked)."""

    kind: str
    until: datetime | None = None
    holder: str | None = None
    mode: str | None = None

    @property
    def held(self) -> bool:
        return self.kind == HELD

    @property
    def warn(self) -> bool:
        return self.kind in WARN


def bar_state(session: Session, queue: ReviewQueue, item: QueueItem, user_id: int,
              now: datetime | None = None) -> BarState:
    """The ``BarState`` of ``item`` (of ``queue``) for the user ``user_id`` at ``now``
    (UTC; default the current time), by the module's rule. Reads only; no access check
    (the callers read the item through one)."""
    now = now or utcnow()
    disputed, complete, rated = session.execute(
        select(disputed_mark(), QueueItem.completed_at.is_not(None), rated_by(user_id))
        .select_from(QueueItem).join(Run, Run.id == QueueItem.run_pk)
        .where(QueueItem.id == item.id)).one()
    if disputed == queue.id:
        return BarState(DISPUTED)
    if complete:
        return BarState(COMPLETE)
    if rated:
        return BarState(RATED)
    live = item.reserved_by is not None and item.reserved_until is not None and item.reserved_until > now
    if live and item.reserved_by == user_id:
        return BarState(HELD, until=item.reserved_until)
    if live:
        holder = session.scalar(select(User.username).where(User.id == item.reserved_by))
        return BarState(HELD_BY_OTHER, until=item.reserved_until, holder=holder)
    if queue.assignment == ASSIGN_OPEN:
        return BarState(FREE)
    mine = assigned_to(session, queue, item.id, user_id)
    return BarState(ASSIGNED if mine else OTHERS, mode=queue.assignment)


def item_bar(session: Session, actor: Actor, item_id: Any, now: datetime | None = None) -> BarState:
    """``bar_state`` of the item ``item_id`` for the actor (the renewal poll, when the
    actor no longer holds it). ``Forbidden`` for an item they cannot see;
    ``ValidationFailed`` (``item``) for a value that is not an item id. Reads only."""
    item, queue = _item_for(session, actor, item_id)
    return bar_state(session, queue, item, actor.user_id, now)
