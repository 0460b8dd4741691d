"""Review queues that fill themselves (issue 16 "Review queues"), the service side.

A lead (or admin) of a workspace creates a queue: a name, a rule (runs-list filters,
``RunFilters`` query-string form), a deterministic sample rate, the number of reviewers
per run (1-5), blind on / off, and the reservation time. Creating it applies the rule to
the existing runs once; every new or newly finished run is offered to the workspace's
queues by the ingest paths (``runs/queue_fill.offer_run``). Leads add runs by hand (bulk)
and remove them. A run is in a queue at most once.

Reviewers of the workspace ask for their **next item**: the oldest item of the queue
that is not complete, that they have not rated, and that nobody else holds. Asking
reserves it for ``reservation_minutes``; the reservation is taken by one conditional
UPDATE (the row is free, expired, already theirs, or held by someone who has rated it
since), so two reviewers asking at the same instant never get the same item. ``renew``
extends one's own reservation, ``release`` gives it up (skip). An item is **complete**
when ``reviewers_per_run`` different reviewers have rated its run's answer-level target
(``answer.answer_rating_condition``: a chat run's answer, an AIOps run's report); the
item stores it (``queue_completion``: ``ratings_count``, ``completed_at``), so the next
item is an index lookup.

Who may review (all reviewers, or named ones) and assignment (open, round-robin, by
hand) live here and in ``queue_assignment``; the dispute rule (which split of N > 1
ratings waits for a lead, ``domain.consensus.DISPUTE_RULES``) is a queue setting read by
``feedback.verdict`` and ``adjudication``; what a blind queue hides is ``blind``'s rule.

Times are UTC; ``now`` parameters exist for tests. On SQLite the writers here run
under ``db_setup.write_intent()`` (``BEGIN IMMEDIATE``, what the web layer declares for a
state-changing request), so two reservations queue instead of deadlocking.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from sqlalchemy import (
    Integer,
    and_,
    bindparam,
    case,
    delete,
    distinct,
    exists,
    func,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session, aliased

from ..actors import Actor, Role
from ..db_setup import read_intent
from ..domain.consensus import DEFAULT_DISPUTE_RULE, DISPUTE_RULES
from ..domain.queues import (
    ASSIGN_OPEN,
    ASSIGN_ROUND_ROBIN,
    ASSIGNMENT_MODES,
    NAME_MAX,
    RESERVATION_DEFAULT_MINUTES,
    RESERVATION_MAX_MINUTES,
    REVIEWER_SCOPES,
    REVIEWERS_ALL,
    REVIEWERS_MAX,
    REVIEWERS_MIN,
    REVIEWERS_NAMED,
    RULE_FORBIDDEN,
)
from ..errors import Conflict, Forbidden, ValidationFailed
from ..models import (
    Feedback,
    ItemSource,
    Membership,
    QueueAssignment,
    QueueItem,
    QueueReviewer,
    ReviewQueue,
    Run,
    User,
    Workspace,
)
from ..models.base import utcnow
from ..queries import scope_to_actor
from .answer import answer_rating_condition
from .params import id_value
from .queue_assignment import (
    assigned_condition,
    deal_unassigned,
    drop_outsiders,
    may_review,
    workspace_reviewers,
)
from .queue_assignment import (
    named as named_reviewers,
)
from .queue_completion import recount_queue
from .runs.listing import RunFilters
from .runs.queue_fill import fill, insert_items

RULE_KEYS = ("kind", "status", "verdict", "feedback", "score_min", "score_max", "outcome", "q",
             "failed_calls")
CANDIDATES = 20


@dataclass(frozen=True)
class QueueProgress:
    """``items`` in the queue, ``complete`` of them (N reviewers rated), ``mine``: items
    the actor has rated, ``reserved``: items held by someone right now."""

    items: int
    complete: int
    mine: int
    reserved: int


# --- creating and filling ---------------------------------------------------------------


def clean_rule(rule: Any) -> dict[str, str]:
    """A rule as stored: the runs-list filters of ``rule`` (a mapping of query-string
    values) in their canonical form. Raises ``ValidationFailed`` naming ``rule.<field>``
    for a bad value, an unknown filter, or one a rule may not hold (workspace, sort,
    reviewed)."""
    if rule is None:
        return {}
    if not isinstance(rule, Mapping):
        raise ValidationFailed("rule", "must be an object of runs-list filters")
    for key in rule:
        if key in RULE_FORBIDDEN:
            raise ValidationFailed(f"rule.{key}", "is not allowed in a queue's rule")
        if key not in RULE_KEYS:
            raise ValidationFailed(f"rule.{key}", f"unknown filter (one of {', '.join(RULE_KEYS)})")
    try:
        filters = RunFilters.from_params({k: "" if v is None else str(v) for k, v in rule.items()})
    except ValidationFailed as invalid:
        raise ValidationFailed(f"rule.{invalid.field}", invalid.reason) from None
    return {k: v for k, v in filters.as_params().items() if k in RULE_KEYS}


def _whole(value: Any, field: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValidationFailed(field, f"must be a whole number from {low} to {high}")
    return value


def _settings(session: Session, ws_id: int, values: Mapping[str, Any]) -> dict[str, Any]:
    """The queue's settings in ``values`` checked and cleaned (only the keys present);
    ``named`` (user ids) becomes ``_named``, each a reviewer of the workspace."""
    out: dict[str, Any] = {}
    if "name" in values:
        name = values["name"]
        text = name.strip() if isinstance(name, str) else ""
        if not text or len(text) > NAME_MAX:
            raise ValidationFailed("name", f"must be 1 to {NAME_MAX} characters")
        out["name"] = text
    if "rule" in values:
        out["rule"] = clean_rule(values["rule"])
    if "sample_percent" in values:
        out["sample_percent"] = _whole(values["sample_percent"], "sample_percent", 1, 100)
    if "reviewers_per_run" in values:
        out["reviewers_per_run"] = _whole(values["reviewers_per_run"], "reviewers_per_run",
                                          REVIEWERS_MIN, REVIEWERS_MAX)
    if "blind" in values:
        if not isinstance(values["blind"], bool):
            raise ValidationFailed("blind", "must be true or false")
        out["blind"] = values["blind"]
    if "reservation_minutes" in values:
        out["reservation_minutes"] = _whole(values["reservation_minutes"],
                                            "reservation_minutes", 1, RESERVATION_MAX_MINUTES)
    for field, vocabulary in (("reviewers", REVIEWER_SCOPES), ("assignment", ASSIGNMENT_MODES),
                              ("dispute_rule", DISPUTE_RULES.codes())):
        if field in values:
            if values[field] not in vocabulary:
                raise ValidationFailed(field, f"must be one of {', '.join(vocabulary)}")
            out[field] = values[field]
    if "named" in values:
        raw = values["named"]
        if isinstance(raw, (str, bytes)) or not isinstance(raw, Iterable):
            raise ValidationFailed("named", "must be a list of user ids")
        ids = [id_value(v, "named", "must be user ids") for v in raw]
        if None in ids:
            raise ValidationFailed("named", "must be user ids")
        members = {i for i, _ in workspace_reviewers(session, ws_id)}
        strangers = [i for i in ids if i not in members]
        if strangers:
            raise ValidationFailed("named", "must be reviewers of the queue's workspace "
                                   f"(not: {', '.join(map(str, strangers))})")
        out["_named"] = list(dict.fromkeys(ids))
    return out


def _set_named(session: Session, queue: ReviewQueue, ids: list[int]) -> None:
    session.execute(delete(QueueReviewer).where(QueueReviewer.queue_id == queue.id))
    session.add_all([QueueReviewer(queue_id=queue.id, user_id=uid, position=pos)
                     for pos, uid in enumerate(ids)])
    session.flush()


def _check_named(queue: ReviewQueue, named_ids: list[int]) -> None:
    if queue.reviewers == REVIEWERS_NAMED and not named_ids:
        raise ValidationFailed("named", "name at least one reviewer, or let all review")


def create_queue(session: Session, actor: Actor, workspace_id: Any, name: Any,
                 rule: Any = None, *, sample_percent: Any = 100, reviewers_per_run: Any = 1,
                 blind: Any = False, reservation_minutes: Any = RESERVATION_DEFAULT_MINUTES,
                 reviewers: Any = REVIEWERS_ALL, named: Any = (),
                 assignment: Any = ASSIGN_OPEN,
                 dispute_rule: Any = DEFAULT_DISPUTE_RULE) -> tuple[ReviewQueue, int]:
    """Create a queue in the workspace and fill it from the existing runs; returns (the
    queue, runs added). The actor must lead the workspace (``Forbidden``, also for a
    missing one). ``ValidationFailed`` names the field (``name``, ``rule.<field>``,
    ``sample_percent`` 1-100, ``reviewers_per_run`` 1-5, ``blind``, ``reservation_minutes``
    1-240, ``reviewers`` all | named, ``named``: user ids of reviewers of the workspace,
    at least one when ``reviewers`` is named, ``assignment`` open | round_robin |
    by_hand, ``dispute_rule`` which split of N > 1 ratings a lead decides:
    ``domain.consensus.DISPUTE_RULES`` tie | any_split); ``Conflict`` when the workspace
    has a queue of that name. Commits."""
    ws_id = _led_workspace(session, actor, workspace_id)
    values = _settings(session, ws_id, {
        "name": name, "rule": rule, "sample_percent": sample_percent,
        "reviewers_per_run": reviewers_per_run, "blind": blind,
        "reservation_minutes": reservation_minutes, "reviewers": reviewers, "named": named,
        "assignment": assignment, "dispute_rule": dispute_rule})
    named_ids = values.pop("_named")
    queue = ReviewQueue(workspace_id=ws_id, created_by=actor.user_id if actor.is_user else None,
                        **values)
    _check_named(queue, named_ids)
    _unique_name(session, ws_id, queue.name, None)
    session.add(queue)
    session.flush()
    _set_named(session, queue, named_ids)
    added = fill(session, queue)
    session.commit()
    return queue, added


def update_queue(session: Session, actor: Actor, queue_id: Any, **changes: Any
                 ) -> tuple[ReviewQueue, int]:
    """A lead changes a queue's settings (any of ``create_queue``'s keyword fields and
    ``name``; the same ``ValidationFailed`` / ``Conflict``); returns (queue, runs added).
    A changed rule or a larger sample is applied to the existing runs (runs already in
    the queue stay; a run enters at most once); a changed ``reviewers_per_run``
    re-derives every item's completion from its stored count; becoming round-robin deals
    the open items nobody is assigned; assignments to reviewers no longer named are
    dropped; a changed ``dispute_rule`` governs the verdicts set from then on (a verdict
    already set stays until the run's next answer rating). Commits."""
    queue = get_queue(session, actor, queue_id, Role.LEAD)
    unknown = set(changes) - set(_EDITABLE)
    if unknown:
        raise ValidationFailed(sorted(unknown)[0], "is not a queue setting")
    values = _settings(session, queue.workspace_id, changes)
    named_ids = values.pop("_named", None)
    if "name" in values:
        _unique_name(session, queue.workspace_id, values["name"], queue.id)
    refill = any(k in values and values[k] != getattr(queue, k)
                 for k in ("rule", "sample_percent"))
    recount = "reviewers_per_run" in values and values["reviewers_per_run"] != \
        queue.reviewers_per_run
    became_rr = values.get("assignment", queue.assignment) == ASSIGN_ROUND_ROBIN != \
        queue.assignment
    for key, value in values.items():
        setattr(queue, key, value)
    if named_ids is not None:
        _set_named(session, queue, named_ids)
    _check_named(queue, named_ids if named_ids is not None else named_reviewers(session, queue.id))
    session.flush()
    if recount:
        recount_queue(session, queue.id)
    drop_outsiders(session, queue)
    added = fill(session, queue) if refill else 0
    if became_rr:
        deal_unassigned(session, queue)
    session.commit()
    return queue, added


_EDITABLE = ("name", "rule", "sample_percent", "reviewers_per_run", "blind",
             "reservation_minutes", "reviewers", "named", "assignment", "dispute_rule")


def _led_workspace(session: Session, actor: Actor, workspace_id: Any) -> int:
    ws_id = id_value(workspace_id, "workspace", "must be a workspace id")
    if ws_id is None or session.scalar(scope_to_actor(
            select(Workspace.id).where(Workspace.id == ws_id), actor, Workspace.id,
            Role.LEAD)) is None:
        raise Forbidden()
    return ws_id


def _unique_name(session: Session, ws_id: int, name: str, own_id: int | None) -> None:
    other = session.scalar(select(ReviewQueue.id).where(
        ReviewQueue.workspace_id == ws_id, ReviewQueue.name == name))
    if other is not None and other != own_id:
        raise Conflict(f"name: the workspace already has a queue named '{name}'")


def assign(session: Session, actor: Actor, item_id: Any, user_ids: Iterable[Any]) -> list[int]:
    """A lead sets who an item is assigned to (by hand; replaces the item's assignees;
    an empty list unassigns it); returns the user ids. Each must be allowed to review the
    queue (``ValidationFailed`` ``assignees``); ``Forbidden`` unless a lead of the
    queue's workspace. Commits."""
    item, queue = _item_for(session, actor, item_id, Role.LEAD)
    ids = [id_value(v, "assignees", "must be user ids") for v in user_ids]
    if None in ids:
        raise ValidationFailed("assignees", "must be user ids")
    allowed = set(named_reviewers(session, queue.id)) if queue.reviewers == REVIEWERS_NAMED else \
        {i for i, _ in workspace_reviewers(session, queue.workspace_id)}
    outside = [i for i in ids if i not in allowed]
    if outside:
        raise ValidationFailed("assignees", "must be reviewers who may review this queue "
                               f"(not: {', '.join(map(str, outside))})")
    chosen = list(dict.fromkeys(i for i in ids if i is not None))
    session.execute(delete(QueueAssignment).where(QueueAssignment.item_id == item.id))
    session.add_all([QueueAssignment(item_id=item.id, user_id=uid,
                                     assigned_by=actor.user_id) for uid in chosen])
    session.commit()
    return chosen


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


def add_runs(session: Session, actor: Actor, queue_id: Any, run_pks: Iterable[Any]) -> int:
    """A lead adds runs by hand (bulk); returns how many were new to the queue, their
    stored rating counts taken under the runs' row locks. Every run
    must be in the queue's workspace (else ``Forbidden``, nothing added);
    ``ValidationFailed`` (``runs``) for a value that is not a run id. Commits."""
    queue = get_queue(session, actor, queue_id, Role.LEAD)
    pks = sorted({id_value(pk, "runs", "must be run ids") or 0 for pk in run_pks})
    if not pks or 0 in pks:
        raise ValidationFailed("runs", "must be run ids")
    # The runs' row locks (``FOR NO KEY UPDATE``, in id order; PostgreSQL), the lock a
    # rating writer holds until it commits: the count ``insert_items`` stores then sees
    # every rating, and a rating after it sees the item (``queue_completion``).
    found = set(session.scalars(select(Run.id).where(
        Run.id.in_(pks), Run.workspace_id == queue.workspace_id)
        .order_by(Run.id).with_for_update(key_share=True)))
    if found != set(pks):
        raise Forbidden()
    added = insert_items(session, queue, pks, ItemSource.MANUAL.value,
                         actor.user_id if actor.is_user else None)
    session.commit()
    return added


def remove_run(session: Session, actor: Actor, queue_id: Any, run_pk: Any) -> bool:
    """A lead removes a run from the queue; ``False`` when it was not in it. Commits."""
    queue = get_queue(session, actor, queue_id, Role.LEAD)
    pk = id_value(run_pk, "run", "must be a run id")
    item = session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id,
                                                  QueueItem.run_pk == pk))
    if item is None:
        return False
    session.delete(item)
    session.commit()
    return True


# --- working through a queue -----------------------------------------------------------


def _rated_by(user_col: Any) -> Any:
    """EXISTS: the user in ``user_col`` rated the item's run's answer."""
    return (select(Feedback.id).join(Run, Run.id == Feedback.run_pk)
            .where(Feedback.run_pk == QueueItem.run_pk, Feedback.author_id == user_col,
                   answer_rating_condition())
            .exists())


def _free_for(user_id: Any, now: Any) -> Any:
    """The item is not held by anyone else right now."""
    return or_(QueueItem.reserved_by.is_(None), QueueItem.reserved_until.is_(None),
               QueueItem.reserved_until <= now, QueueItem.reserved_by == user_id,
               _rated_by(QueueItem.reserved_by))


@dataclass(frozen=True)
class _NextStatements:
    held: Any
    candidates: Any
    claim: Any
    item: Any


@cache
def _next_statements(assigned: bool) -> _NextStatements:
    """The statements of ``next_item``, built once with bound parameters (``:queue_id``,
    ``:user_id``, ``:now``, ``:until``, ``:item_id``): their construction and compilation
    cost more than running them (the issue 16 benchmark), so both are reused.
    ``assigned``: the queue assigns items, so only the user's own are open to them."""
    when = QueueItem.__table__.c.reserved_until.type
    user = bindparam("user_id", type_=Integer)
    now = bindparam("now", type_=when)
    open_conds = [QueueItem.queue_id == bindparam("queue_id", type_=Integer),
                  QueueItem.completed_at.is_(None),  # an index range, not a count
                  QueueItem.id != bindparam("exclude", type_=Integer),
                  ~_rated_by(user)]
    if assigned:
        open_conds.append(assigned_condition(user))
    free = _free_for(user, now)
    return _NextStatements(
        held=select(QueueItem.id).where(*open_conds, QueueItem.reserved_by == user,
                                        QueueItem.reserved_until > now)
        .order_by(QueueItem.id).limit(1),
        candidates=select(QueueItem.id).where(*open_conds, free)
        .order_by(QueueItem.id).limit(CANDIDATES),
        claim=update(QueueItem).where(QueueItem.id == bindparam("item_id", type_=Integer), free)
        .values(reserved_by=user, reserved_until=bindparam("until", type_=when),
                updated_at=now),
        item=select(QueueItem).where(QueueItem.id == bindparam("item_id", type_=Integer))
        .execution_options(populate_existing=True),
    )


def next_item(session: Session, actor: Actor, queue_id: Any,
              now: datetime | None = None, exclude: int | None = None) -> QueueItem | None:
    """Reserve and return the actor's next item: the one they already hold, else the
    oldest open item nobody else holds; ``None`` when there is none. An item is open
    while not complete (its stored ``completed_at``) and not rated by the actor, and in
    an assigned queue (round-robin, by hand) only when assigned to the actor. A held
    item is never handed to anyone else until its reservation expires (or its holder has
    rated it). The reservation lasts the queue's ``reservation_minutes``. A reviewer of
    the workspace who may review the queue (all, or named) may ask (``Forbidden``
    otherwise). ``exclude``: an item id not to hand out (the one just skipped). Commits.

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
    first = True
    while True:
        with read_intent():
            connection = session.connection()
            held = connection.execute(stmts.held, params).scalar() if first else None
            candidates = [held] if held is not None else list(
                connection.execute(stmts.candidates, params).scalars())
            session.commit()
        first = False
        if not candidates:
            return None
        for item_id in candidates:
            claimed = session.connection().execute(
                stmts.claim, {**params, "item_id": item_id}).rowcount
            session.commit()
            if claimed:
                with read_intent():  # a read: on SQLite it must not take the write lock
                    return session.scalars(stmts.item, {"item_id": item_id}).one()
        # every candidate was taken meanwhile: look again


def renew(session: Session, actor: Actor, item_id: Any, now: datetime | None = None
          ) -> datetime:
    """Extend the actor's reservation of the item (the page is still open); returns the
    new end. ``Conflict`` when the actor does not hold it (expired and taken, or
    released); ``Forbidden`` for an item they cannot see. Commits."""
    item, queue = _item_for(session, actor, item_id)
    now = now or utcnow()
    until = now + timedelta(minutes=queue.reservation_minutes)
    done = session.execute(
        update(QueueItem).where(QueueItem.id == item.id, QueueItem.reserved_by == actor.user_id)
        .values(reserved_until=until, updated_at=now)
        .execution_options(synchronize_session=False)).rowcount
    session.commit()
    if not done:
        raise Conflict("item: you no longer hold this item")
    return until


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
                   answer_rating_condition())) or 0
    return QueueProgress(items=int(row[0]), complete=int(row[1]), mine=int(mine),
                         reserved=int(row[2]))


def _case(condition: Any) -> Any:
    """1 where ``condition`` holds, else 0 (for SUM)."""
    return case((condition, 1), else_=0)


def exists_item(session: Session, queue_id: int, run_pk: int) -> bool:
    """Whether the run is in the queue (no access check: tests and callers that did)."""
    return bool(session.scalar(select(exists().where(QueueItem.queue_id == queue_id,
                                                     QueueItem.run_pk == run_pk))))


# --- reading for the pages ---------------------------------------------------------------


@dataclass(frozen=True)
class QueueRow:
    """One queue of the list: the queue, its workspace's name, whether the actor leads
    the workspace and may review the queue, and its progress for the actor."""

    queue: ReviewQueue
    workspace_name: str
    is_lead: bool
    may_review: bool
    progress: QueueProgress


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
    and name. ``Forbidden`` for an actor that is not a user."""
    rows = []
    for queue, ws_name, role in _queues_with_roles(session, actor):
        rows.append(QueueRow(queue, ws_name, role in Role.LEAD.at_least(),
                             may_review(session, queue, actor.user_id),
                             progress(session, actor, queue.id, now)))
    return rows


def reviewable_queues(session: Session, actor: Actor) -> list[ReviewQueue]:
    """The queues the actor may review (reviewer of the workspace; all, or named)."""
    return [q for q, _, _ in _queues_with_roles(session, actor)
            if may_review(session, q, actor.user_id)]


def next_for_me(session: Session, actor: Actor, queue_id: Any = None,
                exclude: int | None = None, now: datetime | None = None) -> QueueItem | None:
    """"My next item": the actor's next item (``next_item``, reserved) in the given queue,
    or across the queues they may review in list order; ``None`` when none has one.
    Commits."""
    if queue_id not in (None, ""):
        return next_item(session, actor, queue_id, now, exclude)
    for queue in reviewable_queues(session, actor):
        found = next_item(session, actor, queue.id, now, exclude)
        if found is not None:
            return found
    return None


@dataclass(frozen=True)
class ReviewerProgress:
    """A reviewer of a queue: ``rated`` items (their answer rating), ``assigned`` items
    (assigned queues), ``holding`` items they hold right now."""

    user_id: int
    username: str
    rated: int
    assigned: int
    holding: int


def reviewer_progress(session: Session, actor: Actor, queue_id: Any,
                      now: datetime | None = None) -> list[ReviewerProgress]:
    """Per-reviewer progress of a queue, for its workspace's leads (``Forbidden``
    otherwise): everyone who may review it plus anyone who rated or holds an item."""
    queue = get_queue(session, actor, queue_id, Role.LEAD)
    now = now or utcnow()
    rated = dict(session.execute(
        select(Feedback.author_id, func.count(distinct(QueueItem.id)))
        .select_from(Feedback).join(Run, Run.id == Feedback.run_pk)
        .join(QueueItem, QueueItem.run_pk == Feedback.run_pk)
        .where(QueueItem.queue_id == queue.id, answer_rating_condition())
        .group_by(Feedback.author_id)).all())
    assigned = dict(session.execute(
        select(QueueAssignment.user_id, func.count())
        .join(QueueItem, QueueItem.id == QueueAssignment.item_id)
        .where(QueueItem.queue_id == queue.id).group_by(QueueAssignment.user_id)).all())
    holding = dict(session.execute(
        select(QueueItem.reserved_by, func.count())
        .where(QueueItem.queue_id == queue.id, QueueItem.reserved_by.is_not(None),
               QueueItem.reserved_until > now).group_by(QueueItem.reserved_by)).all())
    people = dict(workspace_reviewers(session, queue.workspace_id))
    ids = set(named_reviewers(session, queue.id)) if queue.reviewers == REVIEWERS_NAMED \
        else set(people)
    ids |= set(rated) | set(assigned) | set(holding)
    names = dict(session.execute(select(User.id, User.username).where(User.id.in_(ids))).all())
    return sorted((ReviewerProgress(uid, names.get(uid, "?"), rated.get(uid, 0),
                                    assigned.get(uid, 0), holding.get(uid, 0))
                   for uid in ids), key=lambda r: r.username)


@dataclass(frozen=True)
class ItemRow:
    """An item of a queue's page: its run (pk, agent's id, question), why it is there
    (``source`` rule | manual, ``added_by`` username, ``added_at`` UTC), how many rated
    it of ``needed``, ``completed_at``, who holds it until when, who it is assigned to."""

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


ITEMS_PER_PAGE = 50
QUERY_PREVIEW = 140


def list_items(session: Session, actor: Actor, queue_id: Any, page: Any = 1,
               now: datetime | None = None) -> tuple[ReviewQueue, list[ItemRow], int]:
    """A page (50, by id) of the queue's items for its workspace's leads: (queue, rows,
    total items). ``Forbidden`` otherwise; ``ValidationFailed`` (``page``) for a page
    that is not a whole number from 1."""
    queue = get_queue(session, actor, queue_id, Role.LEAD)
    number = id_value(page, "page", "must be a page number from 1") or 1
    now = now or utcnow()
    adder, holder = aliased(User), aliased(User)
    total = session.scalar(select(func.count()).where(QueueItem.queue_id == queue.id)) or 0
    rows = session.execute(
        select(QueueItem, Run.run_id, func.substr(Run.query, 1, QUERY_PREVIEW),
               adder.username, holder.username)
        .join(Run, Run.id == QueueItem.run_pk)
        .outerjoin(adder, adder.id == QueueItem.added_by)
        .outerjoin(holder, holder.id == QueueItem.reserved_by)
        .where(QueueItem.queue_id == queue.id).order_by(QueueItem.id)
        .offset((number - 1) * ITEMS_PER_PAGE).limit(ITEMS_PER_PAGE)).all()
    ids = [row[0].id for row in rows]
    who: dict[int, list[str]] = {}
    for item_id, username in session.execute(
            select(QueueAssignment.item_id, User.username)
            .join(User, User.id == QueueAssignment.user_id)
            .where(QueueAssignment.item_id.in_(ids)).order_by(User.username)):
        who.setdefault(item_id, []).append(username)
    out = []
    for item, run_id, query, added_by, held_by in rows:
        live = item.reserved_until is not None and item.reserved_until > now
        out.append(ItemRow(item.id, item.run_pk, run_id, query or "", item.source, added_by,
                           item.created_at, item.ratings_count, queue.reviewers_per_run,
                           item.completed_at, held_by if live else None,
                           item.reserved_until if live else None,
                           tuple(who.get(item.id, ()))))
    return queue, out, total


@dataclass(frozen=True)
class OpenItem:
    """The queue item a run page was opened for: the item, its queue, whether the actor
    holds it and until when (UTC)."""

    item: QueueItem
    queue: ReviewQueue
    held: bool
    until: datetime | None


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
    return OpenItem(item, queue, held, item.reserved_until if held else None)


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
