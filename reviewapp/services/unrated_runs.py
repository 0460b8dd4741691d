"""The review queue of SPEC 8 ("Review queue" in the navigation, ``/queue``): the next run
of the runs list a reviewer has not rated yet, and their progress through that list. Not
the team-review queues of issue 16 (``review_queues``: queues a lead fills, with items,
reservations and N reviewers per run); this module was ``review_queue.py``, one letter
from that one.

"Reviewed by me" means the reviewer rated at least one part of the run (answer,
citation, step or report). The queue holds only finished runs with something to rate
(``runs.rateable_run``, a copy the run keeps: ``runs/rateable.py``): a running run or
one without answer text, steps or report would otherwise stay at the head of the queue
for ever. The queue walks the same filtered, sorted list as the runs
page, so a reviewer can work through exactly the list they were looking at.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property

from sqlalchemy.orm import Session

from ..actors import Actor
from ..errors import Forbidden
from ..models import Run
from ..queries import capped_count, get_run_for
from . import keyset, rated_runs
from .access import WorkspaceRole
from .params import id_value
from .runs import COUNT_CAP, RunFilters, rateable_run, single_workspace
from .runs.listing import order_of, scoped_runs
from .runs.scope import rated_count_workspaces


@dataclass(frozen=True)
class Progress:
    """``reviewed`` of ``total`` runs in the filtered list carry a rating of the reviewer;
    ``capped`` means the list holds at least ``total`` runs (counts stop at a cap)."""

    reviewed: int
    total: int
    capped: bool

    @property
    def remaining(self) -> int:
        return max(0, self.total - self.reviewed)


@dataclass(frozen=True)
class QueueState:
    """The next run to review (``None`` when every run in the list is reviewed) and the
    progress through the list, counted when first read (two capped counts, in the
    session ``next_run`` was given): the jump to the next run does not need it."""

    run_pk: int | None
    filters: RunFilters
    count: Callable[[], Progress] = field(repr=False, compare=False)

    @cached_property
    def progress(self) -> Progress:
        return self.count()


def _progress(session: Session, actor: Actor, filters: RunFilters,
              workspaces: list[WorkspaceRole]) -> Progress:
    everything = replace(filters, reviewed=None)
    total, capped = capped_count(
        session, [s.where(rateable_run()) for s in scoped_runs(actor, everything, workspaces)],
        COUNT_CAP)
    if not actor.is_user:  # ratings belong to people
        return Progress(0, total, capped)
    # "Reviewed by me" of the whole list (of all or one workspace): the kept count of my
    # rated rateable runs, one row a workspace, whatever I rated (issue 18).
    ids = rated_count_workspaces(actor, everything, workspaces)
    if ids is not None:
        reviewed = rated_runs.counted(session, actor.user_id, ids, rateable=True)
        return Progress(min(reviewed, COUNT_CAP), total, capped)
    # A filtered list: counted from my ratings of each workspace (their index), joined to
    # the runs the filters keep, up to the cap: at most my ratings there, never the list.
    reviewed, _ = capped_count(session, [
        s.where(rateable_run()) for s in scoped_runs(
            actor, replace(everything, reviewed="mine"), workspaces, counting=True)], COUNT_CAP)
    return Progress(reviewed, total, capped)


def progress(session: Session, actor: Actor, filters: RunFilters | None = None) -> Progress:
    """How far the actor got through the runs matching ``filters`` (their ``reviewed``
    field is ignored). Raises ``ValidationFailed`` for bad filters."""
    filters = (filters or RunFilters()).validated()
    workspaces, _ = single_workspace(session, actor)
    return _progress(session, actor, filters, workspaces)


def next_run(session: Session, actor: Actor, filters: RunFilters | None = None,
             after_run_pk: int | str | None = None) -> QueueState:
    """The first rateable run in the ``filters`` list order that the actor has not rated.

    One indexed range per workspace (the rateable runs' index, or the sort's), each run
    probed for a rating of the actor through the ratings' run index: the cost is the
    runs passed over (rated by the actor, or left out by a filter), not the list's size
    (issue 18). The progress is counted only when read (``QueueState.progress``).

    With ``after_run_pk`` (the run being skipped), the search starts after that run and
    wraps around to the start, never returning that run itself. Raises ``Forbidden``
    when ``after_run_pk`` is missing or foreign, ``ValidationFailed`` for bad filters and
    for an ``after_run_pk`` that is not a run id (``after``).
    """
    after_run_pk = id_value(after_run_pk, "after", "must be a run's number")
    filters = (filters or RunFilters()).validated().with_match_count(session)
    workspaces, _ = single_workspace(session, actor)
    todo = replace(filters, reviewed="not_mine")
    sort = order_of(filters)
    base = [s.where(rateable_run()).with_only_columns(Run.id, maintain_column_froms=True)
            for s in scoped_runs(actor, todo, workspaces)]
    found = None
    if after_run_pk is not None:
        after = get_run_for(session, actor, after_run_pk)
        if after is None:
            raise Forbidden()
        later = sort.after(after)
        found = session.scalar(keyset.ordered([s.where(later) for s in base], sort, 1))
        if found is None:
            found = session.scalar(keyset.ordered([s.where(Run.id != after.id) for s in base],
                                                  sort, 1))
    else:
        found = session.scalar(keyset.ordered(base, sort, 1))
    return QueueState(found, filters, lambda: _progress(session, actor, filters, workspaces))
