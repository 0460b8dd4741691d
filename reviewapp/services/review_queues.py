"""Review queues that fill themselves (issue 16 "Review queues"), the service side.

A lead (or admin) of a workspace creates a queue: a name, a rule (runs-list filters,
``RunFilters`` query-string form), a deterministic sample rate, the number of reviewers
per run (1-5), blind on / off, and the reservation time. Creating it applies the rule to
the existing runs once; every new or newly finished run is offered to the workspace's
queues by the ingest paths (``runs/queue_fill.offer_run``). A queue takes in only
finished runs with an answer-level target, what its items complete on
(``queue_fill.takes_in``); a finished run that loses it leaves the open items. Leads add
runs by hand (bulk) and remove them. A run is in a queue at most once; a run a lead removed does not
re-enter through the rule (``review_queue_removal``) until a lead adds it by hand.

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

Split by concern: settings, filling and assignment here; working through a queue (next
item, reservation, progress) in ``queue_work``; the pages' reads in ``queue_pages``;
what is left for a reviewer when their next item is none in ``queue_left``. Every public name stays importable from here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    delete,
    select,
)
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..domain.consensus import DEFAULT_DISPUTE_RULE
from ..domain.queues import (
    ASSIGN_OPEN,
    RESERVATION_DEFAULT_MINUTES,
    REVIEWERS_ALL,
)
from ..errors import Conflict, Forbidden, ValidationFailed
from ..models import (
    ItemSource,
    QueueAssignment,
    QueueItem,
    QueueRemoval,
    QueueReviewer,
    ReviewQueue,
    Run,
    Workspace,
)
from ..models.base import utcnow  # the queues' clock, also read through here by tests
from ..queries import insert_for, scope_to_actor
from .params import id_value
from .queue_assignment import (
    drop_outsiders,
    top_up_queue,
    who,
    workspace_reviewers,
)
from .queue_assignment import (
    named as named_reviewers,
)
from .queue_assignment import (
    pool as assignable,
)
from .queue_bar import BarState, item_bar
from .queue_completion import before_counting_changes, recount_items, recount_queue
from .queue_left import LeftForMe, left_for_me
from .queue_pages import (
    ITEM_ORDER,
    ITEMS_PER_PAGE,
    QUERY_PREVIEW,
    ItemRow,
    ItemsPage,
    OpenItem,
    QueueCapacity,
    QueueRow,
    RemovalItem,
    ReviewerProgress,
    lead_queues,
    led_workspaces,
    list_items,
    list_queues,
    next_for_me,
    open_item,
    queue_capacity,
    removal_item,
    reviewable_queues,
    reviewer_progress,
    waiting_for_assignment,
)
from .queue_settings import RULE_KEYS, clean_rule, validate
from .queue_work import (
    CANDIDATES,
    QueueProgress,
    Skipped,
    _item_for,
    exists_item,
    get_queue,
    next_item,
    progress,
    release,
    renew,
    skip,
)
from .runs.queue_fill import fill, insert_items, refused_by_hand

__all__ = [  # the queue services, by concern: here, queue_work, queue_pages
    "CANDIDATES", "ITEM_ORDER", "ITEMS_PER_PAGE", "QUERY_PREVIEW", "RULE_KEYS", "ItemRow",
    "BarState", "ItemsPage", "LeftForMe", "OpenItem", "item_bar",
    "QueueCapacity", "QueueProgress", "QueueRow", "ReviewerProgress", "add_runs", "assign",
    "Assignable", "assignable_reviewers",
    "capacity", "check_queue", "clean_rule",
    "create_queue", "exists_item", "get_queue", "lead_queues", "led_workspaces", "list_items",
    "left_for_me", "list_queues", "named_reviewers", "next_for_me", "next_item", "open_item", "progress",
    "release", "skip", "Skipped", "RemovalItem", "removal_item", "remove_run", "renew", "reviewable_queues", "reviewer_progress", "update_queue",
    "waiting_for_assignment", "workspace_reviewers",
]

def _set_named(session: Session, queue: ReviewQueue, ids: list[int]) -> None:
    session.execute(delete(QueueReviewer).where(QueueReviewer.queue_id == queue.id))
    session.add_all([QueueReviewer(queue_id=queue.id, user_id=uid, position=pos)
                     for pos, uid in enumerate(ids)])
    session.flush()


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
    has a queue of that name, ignoring case and surrounding spaces (the name is saved
    trimmed; the message names the queue as stored). Commits."""
    ws_id = _led_workspace(session, actor, workspace_id)
    values = _checked(session, ws_id, {
        "name": name, "rule": rule, "sample_percent": sample_percent,
        "reviewers_per_run": reviewers_per_run, "blind": blind,
        "reservation_minutes": reservation_minutes, "reviewers": reviewers, "named": named,
        "assignment": assignment, "dispute_rule": dispute_rule})
    named_ids = values.pop("_named")
    queue = ReviewQueue(workspace_id=ws_id, created_by=actor.user_id if actor.is_user else None,
                        **values)
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
    re-derives every item's completion from its stored count; a change of who counts
    (``reviewers``, named reviewers) counts every item again in the same transaction
    (``queue_completion``: only the queue's reviewers count in a named queue; who stops
    being named keeps counting for the ratings they gave; a newly named reviewer's
    earlier rating counts; the verdict follows at the run's next answer rating, as for a
    changed N); assignments to reviewers no longer named are dropped; then a round-robin queue (also one that just became
    one) tops up every open item short of its reviewers from the pool as saved
    (``queue_assignment.top_up_queue``: items nobody has are dealt, full ones stay); a changed ``dispute_rule`` governs the verdicts set from then on (a verdict
    already set stays until the run's next answer rating). Commits."""
    queue = get_queue(session, actor, queue_id, Role.LEAD)
    unknown = set(changes) - set(_EDITABLE)
    if unknown:
        raise ValidationFailed(sorted(unknown)[0], "Not a queue setting.")
    values = _checked(session, queue.workspace_id, changes, queue)
    named_ids = values.pop("_named", None)
    refill = any(k in values and values[k] != getattr(queue, k)
                 for k in ("rule", "sample_percent"))
    recount = "reviewers_per_run" in values and values["reviewers_per_run"] != \
        queue.reviewers_per_run
    # Who counts for the queue may change: those who stop keep their ratings counted.
    counting = before_counting_changes(session, queue, values.get("reviewers", queue.reviewers),
                                       named_ids)
    for key, value in values.items():
        setattr(queue, key, value)
    if named_ids is not None:
        _set_named(session, queue, named_ids)
    session.flush()
    if counting:  # every item counted again, its completion with the N as saved
        recount_items(session, [queue.id])
    elif recount:
        recount_queue(session, queue.id)
    drop_outsiders(session, queue)
    added = fill(session, queue) if refill else 0
    top_up_queue(session, queue)  # round-robin: whoever may review now is dealt the short items
    session.commit()
    return queue, added


def _checked(session: Session, ws_id: int, values: Mapping[str, Any],
             queue: ReviewQueue | None = None) -> dict[str, Any]:
    """``values`` cleaned (``queue_settings.validate``), else one ``ValidationFailed``
    with every refused field; a name the workspace already uses (``_name_taken``) is a
    ``Conflict`` alone, and one more refused field (``name``) beside others."""
    out, problems = validate(session, ws_id, values, queue)
    taken = _name_taken(session, ws_id, out["name"], queue) if "name" in out else None
    if taken is not None:
        reason = f"The workspace already has a queue named '{taken}'."
        if not problems:
            raise Conflict(reason, details={"field": "name"})
        problems = {"name": reason, **problems}
    if problems:
        raise ValidationFailed.of(problems)
    return out


def check_queue(session: Session, actor: Actor, workspace_id: Any, queue_id: Any = None,
                **values: Any) -> None:
    """Check queue settings without saving them: ``values`` as ``create_queue`` (or
    ``update_queue``'s changes of ``queue_id``) takes them, only the keys given (a form
    whose other fields it refused itself). Raises what those would: ``ValidationFailed``
    with every refused field at once (``problems``), ``Conflict`` (a taken name),
    ``Forbidden`` unless the actor leads the workspace (the queue's, for ``queue_id``).
    Writes nothing."""
    queue = get_queue(session, actor, queue_id, Role.LEAD) if queue_id is not None else None
    ws_id = queue.workspace_id if queue else _led_workspace(session, actor, workspace_id)
    unknown = set(values) - set(_EDITABLE)
    if unknown:
        raise ValidationFailed(sorted(unknown)[0], "Not a queue setting.")
    _checked(session, ws_id, values, queue)
    session.rollback()


_EDITABLE = ("name", "rule", "sample_percent", "reviewers_per_run", "blind",
             "reservation_minutes", "reviewers", "named", "assignment", "dispute_rule")


def _led_workspace(session: Session, actor: Actor, workspace_id: Any) -> int:
    ws_id = id_value(workspace_id, "workspace", "must be a workspace id")
    if ws_id is None or session.scalar(scope_to_actor(
            select(Workspace.id).where(Workspace.id == ws_id), actor, Workspace.id,
            Role.LEAD)) is None:
        raise Forbidden()
    return ws_id


def _same_name(a: str, b: str) -> bool:
    """Queue names are the same ignoring case and the spaces around them."""
    return a.strip().casefold() == b.strip().casefold()


def _name_taken(session: Session, ws_id: int, name: str, queue: ReviewQueue | None) -> str | None:
    """The stored name of another queue of the workspace named ``name`` ignoring case and
    surrounding spaces (the first by id), else ``None``. A queue keeping its own name (in
    any case) is not checked: two queues saved with such names before this rule stay
    editable (there is no unique index on it; two creations at the same instant may
    both pass, as the exact-name unique constraint is all the database holds)."""
    if queue is not None and _same_name(name, queue.name):
        return None
    own = queue.id if queue is not None else None
    return next((other for pk, other in session.execute(
        select(ReviewQueue.id, ReviewQueue.name).where(ReviewQueue.workspace_id == ws_id)
        .order_by(ReviewQueue.id)) if pk != own and _same_name(name, other)), None)


@dataclass(frozen=True)
class Assignable:
    """A person a lead may assign a queue's items to: ``user_id``, ``username``."""

    user_id: int
    username: str


def assignable_reviewers(session: Session, actor: Actor, queue_id: Any) -> list[Assignable]:
    """Who a lead may assign the queue's items to (the queue page's "assign" list), by
    username: the queue's pool (``queue_assignment.pool``: its named reviewers, or all
    reviewers of the workspace, only while active members with the reviewer role or
    above), the rule ``assign`` checks. A removed or deactivated member is not offered,
    even when they rated items. ``Forbidden`` unless a lead of the queue's workspace."""
    queue = get_queue(session, actor, queue_id, Role.LEAD)
    names = dict(workspace_reviewers(session, queue.workspace_id))
    return sorted((Assignable(uid, names[uid]) for uid in assignable(session, queue)),
                  key=lambda a: a.username)


CHOOSE_FROM_LIST = "Choose reviewers from the list."  # assignees that are no user ids
NOT_RUN_IDS = "Nothing was added: the checked values are not run ids."


def assign(session: Session, actor: Actor, item_id: Any, user_ids: Iterable[Any]) -> list[int]:
    """A lead sets who an item is assigned to (by hand; replaces the item's assignees;
    an empty list unassigns it); returns the user ids. Each must be allowed to review the
    queue now (``queue_assignment.pool``: named or all, active reviewers of the workspace)
    or be assigned to the item already (a removed member keeps an item they rated), and
    be chosen once (the page has one select per reviewer slot).

    At most the queue's ``reviewers_per_run`` (N) assignees. N lowered after the item was
    assigned (our rule; SPEC 8 says only "N reviewers per run, assignment"): its
    assignees stay, and saving it with them, or with fewer of them, is accepted even
    above N; only someone new is refused while the item would have more than N.

    ``ValidationFailed`` ``assignees`` (HTTP 400: not user ids, someone twice, someone
    who may not review the queue, more than N: "This queue takes 2 reviewers per run (3
    chosen)."; every reason a sentence, shown beside the item's form); ``ValidationFailed``
    ``item`` (HTTP 400) for a complete item, naming it by its run's id: its assignees stay
    as they were (new-user walk); ``Forbidden``
    unless a lead of the queue's workspace. Commits."""
    item, queue = _item_for(session, actor, item_id, Role.LEAD)
    if item.completed_at is not None:
        run_id = session.scalar(select(Run.run_id).where(Run.id == item.run_pk))
        raise ValidationFailed("item", f"The item of run {run_id} is complete (its reviewers "
                               "have rated it): it takes no assignment.")
    ids = [id_value(v, "assignees", CHOOSE_FROM_LIST) for v in user_ids]
    if None in ids:
        raise ValidationFailed("assignees", CHOOSE_FROM_LIST)
    twice = sorted(i for i, n in Counter(ids).items() if n > 1)
    if twice:
        raise ValidationFailed("assignees", "Choose each reviewer once "
                               f"(twice: {who(session, queue.workspace_id, twice)}).")
    current = set(session.scalars(
        select(QueueAssignment.user_id).where(QueueAssignment.item_id == item.id)))
    n = queue.reviewers_per_run
    if len(ids) > n and not set(ids) <= current:
        raise ValidationFailed("assignees", f"This queue takes {n} reviewer{'s' if n != 1 else ''} "
                               f"per run ({len(ids)} chosen).")
    allowed = set(assignable(session, queue)) | current
    outside = [i for i in ids if i not in allowed]
    if outside:
        raise ValidationFailed("assignees", "Only reviewers who may review this queue can be "
                               f"assigned (not: {who(session, queue.workspace_id, outside)}).")
    chosen = list(ids)
    session.execute(delete(QueueAssignment).where(QueueAssignment.item_id == item.id))
    session.add_all([QueueAssignment(item_id=item.id, user_id=uid,
                                     assigned_by=actor.user_id) for uid in chosen])
    session.commit()
    return chosen


def add_runs(session: Session, actor: Actor, queue_id: Any, run_pks: Iterable[Any]) -> int:
    """A lead adds runs by hand (bulk); returns how many were new to the queue, their
    stored rating counts taken under the runs' row locks. Every run
    must be in the queue's workspace (else ``Forbidden``, nothing added);
    ``ValidationFailed`` (``runs``) for a value that is not a run id, or when any of
    them is a finished run with nothing to rate at answer level
    (``queue_fill.nothing_to_rate``: its item could never complete): then nothing is
    added, and the reason says so, how many of the checked runs were refused, naming
    every one (``details["refused"]``: their run ids, sorted). Commits."""
    queue = get_queue(session, actor, queue_id, Role.LEAD)
    pks = sorted({id_value(pk, "runs", NOT_RUN_IDS) or 0 for pk in run_pks})
    if not pks or 0 in pks:
        raise ValidationFailed("runs", NOT_RUN_IDS)
    # The runs' row locks (``FOR NO KEY UPDATE``, in id order; PostgreSQL), the lock a
    # rating writer holds until it commits: the count ``insert_items`` stores then sees
    # every rating, and a rating after it sees the item (``queue_completion``).
    found = set(session.scalars(select(Run.id).where(
        Run.id.in_(pks), Run.workspace_id == queue.workspace_id)
        .order_by(Run.id).with_for_update(key_share=True)))
    if found != set(pks):
        raise Forbidden()
    refused = refused_by_hand(session, pks)
    if refused:
        raise ValidationFailed("runs", _nothing_added(refused, len(pks)),
                               details={"refused": refused})
    added = insert_items(session, queue, pks, ItemSource.MANUAL.value,
                         actor.user_id if actor.is_user else None)
    session.commit()
    return added


def _nothing_added(refused: list[str], checked: int) -> str:
    """Why ``add_runs`` added nothing: how many of the ``checked`` runs have nothing to
    rate at answer level, naming every one (``refused``: their run ids)."""
    k = len(refused)
    if checked == 1:
        which = "the checked run has nothing"
    elif k == checked:
        which = f"none of the {checked} checked runs has anything"
    else:
        which = f"{k} of the {checked} checked runs {'has' if k == 1 else 'have'} nothing"
    item = "its item" if k == 1 else "their items"
    hint = f" Uncheck {'it' if k == 1 else 'them'} and add again." if k < checked else ""
    return (f"Nothing was added: {which} to rate at answer level (no answer, no report), so "
            f"{item} could never complete: {', '.join(refused)}.{hint}")


def remove_run(session: Session, actor: Actor, queue_id: Any, run_pk: Any) -> bool:
    """A lead removes a run from the queue; ``False`` when it was not in it. The removal
    is recorded (``QueueRemoval``): the queue's rule does not bring the run back (an
    edit, a re-ingest); ``add_runs`` does. ``Forbidden`` unless a lead of the queue's
    workspace; ``ValidationFailed`` (``run``) for a value that is not a run id. Commits."""
    queue = get_queue(session, actor, queue_id, Role.LEAD)
    pk = id_value(run_pk, "run", "must be a run id")
    item = session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id,
                                                  QueueItem.run_pk == pk))
    if item is None:
        return False
    session.delete(item)
    now = utcnow()
    session.execute(insert_for(session, QueueRemoval.__table__).values(
        queue_id=queue.id, run_pk=pk, removed_by=actor.user_id if actor.is_user else None,
        created_at=now, updated_at=now)
        .on_conflict_do_nothing(index_elements=["queue_id", "run_pk"]))
    session.commit()
    return True


def capacity(session: Session, actor: Actor, queue_id: Any) -> QueueCapacity:
    """Whether enough people may still review the queue (``QueueCapacity``): a queue
    is refused when it asks more (``create_queue``), but members who leave, lose the
    role or are deactivated later leave it short; it is kept, and its page says so.
    Leads of its workspace only (``Forbidden``)."""
    return queue_capacity(session, get_queue(session, actor, queue_id, Role.LEAD))
