"""Review queues read for the pages (issue 16): the queue list with progress, per-reviewer
progress, a queue's items, the item opened on a run page, and what a lead may pick.
Split from ``review_queues``; every public name is importable from there."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter, itemgetter
from typing import Any

from sqlalchemy import and_, distinct, func, select
from sqlalchemy.orm import Session, aliased

from ..actors import Actor, Role
from ..domain.queues import ASSIGN_OPEN, REVIEWERS_ALL, REVIEWERS_NAMED
from ..errors import Forbidden, ValidationFailed
from ..models import (
    Feedback,
    Membership,
    QueueAssignment,
    QueueItem,
    ReviewQueue,
    Run,
    User,
    Workspace,
)
from ..models.base import utcnow
from ..queries import scope_to_actor
from . import keyset
from .answer import answer_rating_condition
from .keyset import SortKey, SortOrder
from .params import id_value
from .queue_assignment import may_review, workspace_reviewers
from .queue_assignment import named as named_reviewers
from .queue_bar import BarState, bar_state
from .queue_completion import counted_rating
from .queue_governing import disputed_mark
from .queue_settings import Pool, capacity_reason
from .queue_work import (
    QueueProgress,
    _item_for,
    assigned_to,
    get_queue,
    next_item,
    progress,
    skippable,
)

# --- reading for the pages ---------------------------------------------------------------


@dataclass(frozen=True)
class QueueCapacity:
    """``needed`` reviewers per run, ``able``: how many people may review the queue now
    (``queue_settings.Pool``); ``scope`` all | named (not compared)."""

    needed: int
    able: int
    scope: str = field(default=REVIEWERS_ALL, compare=False)

    @property
    def short(self) -> bool:
        """Too few people may review: no item can complete (members left since)."""
        return self.able < self.needed

    @property
    def reason(self) -> str:
        """What is wrong when ``short`` (as the form says it), else ``""``."""
        return capacity_reason(self.needed, self.able, self.scope) if self.short else ""


def queue_capacity(session: Session, queue: ReviewQueue,
                   members: set[int] | None = None) -> QueueCapacity:
    """``QueueCapacity`` of ``queue`` (no access check: the caller's scope did);
    ``members``: the user ids of its workspace's reviewers, when the caller read them."""
    if members is None:
        members = {i for i, _ in workspace_reviewers(session, queue.workspace_id)}
    able = Pool(queue.reviewers, tuple(named_reviewers(session, queue.id))).able(members)
    return QueueCapacity(queue.reviewers_per_run, able, queue.reviewers)


@dataclass(frozen=True)
class QueueRow:
    """One queue of the list: the queue, its workspace's name, whether the actor leads
    the workspace and may review the queue, its progress for the actor and, for a lead,
    its ``capacity`` (``None`` for a reviewer: not theirs to fix)."""

    queue: ReviewQueue
    workspace_name: str
    is_lead: bool
    may_review: bool
    progress: QueueProgress
    capacity: QueueCapacity | None = None


def _queues_with_roles(session: Session, actor: Actor) -> list[tuple[ReviewQueue, str, str]]:
    if not actor.is_user:
        raise Forbidden()
    return [(q, name, role) for q, name, role in session.execute(
        select(ReviewQueue, Workspace.name, Membership.role)
        .join(Workspace, Workspace.id == ReviewQueue.workspace_id)
        .join(Membership, and_(Membership.workspace_id == ReviewQueue.workspace_id,
                               Membership.user_id == actor.user_id))
        .where(Membership.role.in_(Role.REVIEWER.at_least()))
        .order_by(Workspace.name, ReviewQueue.name))]


def list_queues(session: Session, actor: Actor, now: datetime | None = None) -> list[QueueRow]:
    """The queues of every workspace where the actor is a reviewer or more, by workspace
    and name; a lead's rows say whether enough people may still review (``capacity``,
    as on the queue's own page). ``Forbidden`` for an actor that is not a user."""
    rows = []
    members: dict[int, set[int]] = {}
    for queue, ws_name, role in _queues_with_roles(session, actor):
        lead = role in Role.LEAD.at_least()
        if lead and queue.workspace_id not in members:
            members[queue.workspace_id] = {
                i for i, _ in workspace_reviewers(session, queue.workspace_id)}
        rows.append(QueueRow(queue, ws_name, lead, may_review(session, queue, actor.user_id),
                             progress(session, actor, queue.id, now),
                             queue_capacity(session, queue, members[queue.workspace_id])
                             if lead else None))
    return rows


def reviewable_queues(session: Session, actor: Actor) -> list[ReviewQueue]:
    """The queues the actor may review (reviewer of the workspace; all, or named)."""
    return [q for q, _, _ in _queues_with_roles(session, actor)
            if may_review(session, q, actor.user_id)]


def next_for_me(session: Session, actor: Actor, queue_id: Any = None,
                exclude: int | None = None, now: datetime | None = None) -> QueueItem | None:
    """"My next item": the actor's next item (``next_item``, reserved) in the given queue,
    or across the queues they may review in list order; ``None`` when none has one.
    ``exclude``: the item just skipped (or left). Across queues the walk is the queues in
    list order, each in its item order, wrapping around: after the skipped item in its
    queue, then the queues after that one, then from the first queue, then its own
    queue's items before it (SPEC 8). The skipped item's queue is read once for the whole
    walk (passed on as ``next_item``'s ``exclude_queue``). Commits."""
    if queue_id not in (None, ""):
        return next_item(session, actor, queue_id, now, exclude)
    queues = [q.id for q in reviewable_queues(session, actor)]
    skipped_in = session.scalar(select(QueueItem.queue_id).where(QueueItem.id == exclude)) \
        if exclude else None
    walk: list[tuple[int, bool]] = [(q, True) for q in queues]
    if skipped_in in queues:
        k = queues.index(skipped_in)
        walk = ([(skipped_in, False)] + [(q, True) for q in queues[k + 1:] + queues[:k]]
                + [(skipped_in, True)])
    for queue, wrap in walk:
        found = next_item(session, actor, queue, now, exclude, wrap,
                          exclude_queue=skipped_in or 0)
        if found is not None:
            return found
    return None



def waiting_for_assignment(session: Session, actor: Actor, queue_id: Any) -> str | None:
    """Why a reviewer's next item in the queue may be none (SPEC 8, Review queues): the
    queue's assignment mode (``round_robin`` | ``by_hand``) when it assigns its items and
    none of them (open or complete) is assigned to the actor, so they have nothing yet
    rather than nothing left; ``None`` otherwise (an open queue, or they had items: what
    is left is done or held by others). ``Forbidden`` as ``get_queue``. Reads only."""
    queue = get_queue(session, actor, queue_id, Role.REVIEWER)
    if queue.assignment == ASSIGN_OPEN:
        return None
    mine = session.scalar(select(QueueAssignment.id).join(
        QueueItem, QueueItem.id == QueueAssignment.item_id).where(
        QueueItem.queue_id == queue.id, QueueAssignment.user_id == actor.user_id).limit(1))
    return queue.assignment if mine is None else None

@dataclass(frozen=True)
class ReviewerProgress:
    """A reviewer of a queue: ``rated`` items (their answer rating), ``assigned`` items
    (assigned queues), ``holding`` items they hold right now."""

    user_id: int
    username: str
    rated: int
    assigned: int
    holding: int


def _holder_may_hold(queue: ReviewQueue, user_id: Any) -> Any:
    """SQL condition: the user in ``user_id`` is an active member of the queue's
    workspace. Removing a member or deactivating an account releases their items; this
    keeps a reservation left from before that rule from naming them on the pages."""
    return and_(
        select(User.id).where(User.id == user_id, User.active.is_(True)).exists(),
        select(Membership.user_id).where(Membership.user_id == user_id,
                                         Membership.workspace_id == queue.workspace_id)
        .exists())


def reviewer_progress(session: Session, actor: Actor, queue_id: Any,
                      now: datetime | None = None) -> list[ReviewerProgress]:
    """Per-reviewer progress of a queue, for its workspace's leads (``Forbidden``
    otherwise): everyone who may review it now (a named reviewer only while an active
    reviewer of the workspace) plus anyone whose rating of an item counts for the queue
    (``queue_completion.counted_rating``: in a named queue, not an admin's or a lead's
    rating from the run page), is assigned or holds an item (a holder only while an
    active member of the workspace). ``rated``: the items their counted rating is on."""
    queue = get_queue(session, actor, queue_id, Role.LEAD)
    now = now or utcnow()
    rated = dict(session.execute(
        select(Feedback.author_id, func.count(distinct(QueueItem.id)))
        .select_from(Feedback).join(Run, Run.id == Feedback.run_pk)
        .join(QueueItem, QueueItem.run_pk == Feedback.run_pk)
        .where(QueueItem.queue_id == queue.id, answer_rating_condition(),
               counted_rating(queue.id, queue.reviewers, Feedback.run_pk, Feedback.author_id))
        .group_by(Feedback.author_id)).all())
    assigned = dict(session.execute(
        select(QueueAssignment.user_id, func.count())
        .join(QueueItem, QueueItem.id == QueueAssignment.item_id)
        .where(QueueItem.queue_id == queue.id).group_by(QueueAssignment.user_id)).all())
    holding = dict(session.execute(
        select(QueueItem.reserved_by, func.count())
        .where(QueueItem.queue_id == queue.id, QueueItem.reserved_by.is_not(None),
               QueueItem.reserved_until > now, _holder_may_hold(queue, QueueItem.reserved_by))
        .group_by(QueueItem.reserved_by)).all())
    people = dict(workspace_reviewers(session, queue.workspace_id))
    ids = set(named_reviewers(session, queue.id)) & set(people) \
        if queue.reviewers == REVIEWERS_NAMED else set(people)
    ids |= set(rated) | set(assigned) | set(holding)
    names = dict(session.execute(select(User.id, User.username).where(User.id.in_(ids))).all())
    return sorted((ReviewerProgress(uid, names.get(uid, "?"), rated.get(uid, 0),
                                    assigned.get(uid, 0), holding.get(uid, 0))
                   for uid in ids), key=lambda r: r.username)


@dataclass(frozen=True)
class Assigned:
    """An assignee of a queue item: ``user_id``, ``username`` and ``standing``: "" while
    an active member of the queue's workspace, else why they may no longer review it
    ("no longer a member", "account deactivated"). A member who leaves keeps the items
    they rated (``queue_assignment.release_assignments_of``), so the page names them."""

    user_id: int
    username: str
    standing: str


@dataclass(frozen=True)
class ItemRow:
    """An item of a queue's page: its run (pk, agent's id, question), why it is there
    (``source`` rule | manual, ``added_by`` username, ``added_at`` UTC), how many rated
    it of ``needed``, ``completed_at``, who holds it until when, who it is assigned to
    (``assignees`` usernames; ``assigned`` the same people as ``Assigned``, by username),
    ``workable``: the viewer may work it (``_may_work``: the page opens it in the queue),
    ``disputed_in``: the governing queue whose lead decides the run's split ratings
    (``queue_governing.disputed_mark``), ``None`` unless the run is disputed."""

    item_id: int
    run_pk: int
    run_id: str
    query: str
    source: str
    added_by: str | None
    added_at: datetime
    ratings_count: int
    needed: int
    completed_at: datetime | None
    reserved_by: str | None
    reserved_until: datetime | None
    assignees: tuple[str, ...]
    assigned: tuple[Assigned, ...] = ()
    workable: bool = False
    disputed_in: int | None = None

    @property
    def rated(self) -> str:
        """The Rated cell's count: "1 / 2" up to ``needed``, "3 ratings (2 needed)" beyond
        (more people rated the run than the queue asks: not "3 / 2")."""
        if self.ratings_count > self.needed:
            return f"{self.ratings_count} ratings ({self.needed} needed)"
        return f"{self.ratings_count} / {self.needed}"


@dataclass(frozen=True)
class ItemsPage:
    """One page of a queue's items: ``rows``; ``total`` items in the queue; ``offset``
    the items before this page (the page shows ``offset + 1`` .. ``offset + len(rows)``);
    ``next_cursor`` (``None`` on the last page); ``has_previous`` and
    ``previous_cursor`` (``None`` with ``has_previous``: the first page)."""

    rows: list[ItemRow]
    total: int
    offset: int
    next_cursor: str | None
    has_previous: bool
    previous_cursor: str | None


ITEMS_PER_PAGE = 50
QUERY_PREVIEW = 140
# A queue's items in the order they entered it; the id is unique, so it is the whole key.
ITEM_ORDER = SortOrder("added", "First added first", (
    SortKey(QueueItem.id, False, attrgetter("id")),))


def list_items(session: Session, actor: Actor, queue_id: Any, cursor: str | None = None,
               now: datetime | None = None, limit: int = ITEMS_PER_PAGE
               ) -> tuple[ReviewQueue, ItemsPage]:
    """A page of at most ``limit`` of the queue's items in ``ITEM_ORDER`` after ``cursor``
    (``None``: the first page), through ``keyset.page``, for its workspace's leads:
    (queue, page); each row says whether the lead may work the item (``_may_work``).
    ``Forbidden`` otherwise; ``ValidationFailed`` (``cursor``) for a malformed cursor."""
    queue = get_queue(session, actor, queue_id, Role.LEAD)
    now = now or utcnow()
    reviews = may_review(session, queue, actor.user_id)
    adder, holder = aliased(User), aliased(User)
    total = session.scalar(select(func.count()).where(QueueItem.queue_id == queue.id)) or 0
    mine = QueueItem.queue_id == queue.id
    rows, next_cursor = keyset.page(session, (
        select(QueueItem, Run.run_id, func.substr(Run.query, 1, QUERY_PREVIEW),
               adder.username, holder.username, disputed_mark())
        .join(Run, Run.id == QueueItem.run_pk)
        .outerjoin(adder, adder.id == QueueItem.added_by)
        .outerjoin(holder, and_(holder.id == QueueItem.reserved_by,
                                _holder_may_hold(queue, holder.id)))
        .where(mine)), ITEM_ORDER, cursor, limit, last=itemgetter(0))
    has_previous, previous_cursor, offset = False, None, 0
    if cursor and rows:
        has_previous, previous_cursor = keyset.previous(
            session, select(QueueItem).where(mine), ITEM_ORDER, rows[0][0], limit, scalars=True)
        offset = session.scalar(select(func.count()).where(
            mine, ITEM_ORDER.after(rows[0][0], reverse=True))) or 0
    ids = [row[0].id for row in rows]
    who: dict[int, list[Assigned]] = {}
    member = select(Membership.user_id).where(Membership.user_id == User.id,
                                              Membership.workspace_id == queue.workspace_id)
    for item_id, user_id, username, active, is_member in session.execute(
            select(QueueAssignment.item_id, User.id, User.username, User.active,
                   member.exists())
            .join(User, User.id == QueueAssignment.user_id)
            .where(QueueAssignment.item_id.in_(ids)).order_by(User.username)):
        standing = "" if is_member and active else \
            "no longer a member" if not is_member else "account deactivated"
        who.setdefault(item_id, []).append(Assigned(user_id, username, standing))
    out = []
    for item, run_id, query, added_by, held_by, disputed_in in rows:
        live = held_by is not None and item.reserved_until is not None \
            and item.reserved_until > now
        out.append(ItemRow(item.id, item.run_pk, run_id, query or "", item.source, added_by,
                           item.created_at, item.ratings_count, queue.reviewers_per_run,
                           item.completed_at, held_by if live else None,
                           item.reserved_until if live else None,
                           tuple(a.username for a in who.get(item.id, ())),
                           tuple(who.get(item.id, ())),
                           _may_work(queue, reviews, actor.user_id, who.get(item.id, ())),
                           disputed_in))
    return queue, ItemsPage(out, total, offset, next_cursor, has_previous, previous_cursor)


def _may_work(queue: ReviewQueue, reviews: bool, user_id: Any,
              assigned: list[Assigned] | tuple[Assigned, ...]) -> bool:
    """Whether the user may work an item of ``queue`` (queuewalk): they may review the
    queue (``reviews``: ``may_review``) and, in a queue that assigns its items, the item
    is assigned to them (only its assignees may take it)."""
    return reviews and (queue.assignment == ASSIGN_OPEN
                        or any(a.user_id == user_id for a in assigned))


@dataclass(frozen=True)
class OpenItem:
    """The queue item a run page was opened for: the item, its queue, whether the actor
    holds it and until when (UTC), and whether it is assigned to them (``assigned``; in
    an open queue, where nobody is assigned, ``False``): who may take it when they do
    not hold it; ``is_lead``: the actor leads the queue's workspace (the queue's page is
    theirs: the bar's links go there, else to the queue's row of "My next item");
    ``may_skip``: skipping it means something to the actor (``queue_work.skippable``);
    ``bar``: what the bar says of it to them (``queue_bar.bar_state``)."""

    item: QueueItem
    queue: ReviewQueue
    held: bool
    until: datetime | None
    assigned: bool = False
    is_lead: bool = False
    may_skip: bool = False
    bar: BarState | None = None


def open_item(session: Session, actor: Actor, item_id: Any, run_pk: int,
              now: datetime | None = None) -> OpenItem | None:
    """The item for the run page's queue bar, or ``None`` when it is not an item of this
    run the actor can see (the bar is then left out; nothing is refused)."""
    try:
        item, queue = _item_for(session, actor, item_id)
    except (Forbidden, ValidationFailed):
        return None
    if item.run_pk != run_pk:
        return None
    now = now or utcnow()
    held = item.reserved_by == actor.user_id and item.reserved_until is not None \
        and item.reserved_until > now
    is_lead = session.scalar(scope_to_actor(select(ReviewQueue.id).where(
        ReviewQueue.id == queue.id), actor, ReviewQueue.workspace_id, Role.LEAD)) is not None
    may_skip = bool(session.scalar(select(skippable(queue, actor.user_id, now))
                                   .where(QueueItem.id == item.id)))
    return OpenItem(item, queue, held, item.reserved_until if held else None,
                    assigned_to(session, queue, item.id, actor.user_id), is_lead, may_skip,
                    bar_state(session, queue, item, actor.user_id, now))


@dataclass(frozen=True)
class RemovalItem:
    """The run a lead is asked about before removing it from a queue: ``run_pk``, the
    agent's ``run_id``, ``query`` (its first ``QUERY_PREVIEW`` characters), the item's
    ``item_id``."""

    item_id: int
    run_pk: int
    run_id: str
    query: str


def removal_item(session: Session, actor: Actor, queue_id: Any, run_pk: Any) -> RemovalItem | None:
    """The queue's item of the run, for the question "Remove this run from ...?";
    ``None`` when the run is not in the queue. ``Forbidden`` unless a lead of the
    queue's workspace; ``ValidationFailed`` (``run``) for a value that is not a run id.
    Reads only."""
    queue = get_queue(session, actor, queue_id, Role.LEAD)
    pk = id_value(run_pk, "run", "must be a run id")
    row = session.execute(
        select(QueueItem.id, Run.id, Run.run_id, func.substr(Run.query, 1, QUERY_PREVIEW))
        .join(Run, Run.id == QueueItem.run_pk)
        .where(QueueItem.queue_id == queue.id, QueueItem.run_pk == pk)).one_or_none()
    return RemovalItem(row[0], row[1], row[2], row[3] or "") if row else None


def lead_queues(session: Session, actor: Actor) -> list[tuple[int, str, str]]:
    """(queue id, queue name, workspace name) of every queue the actor leads (for the
    runs list's "Add to queue")."""
    return [(q.id, q.name, ws) for q, ws, role in _queues_with_roles(session, actor)
            if role in Role.LEAD.at_least()]


def led_workspaces(session: Session, actor: Actor) -> list[tuple[int, str]]:
    """(id, name) of the workspaces the actor leads (where they may create queues), by
    name; empty for anyone else."""
    if not actor.is_user:
        return []
    return [(i, n) for i, n in session.execute(scope_to_actor(
        select(Workspace.id, Workspace.name), actor, Workspace.id, Role.LEAD)
        .order_by(Workspace.name))]
