"""The review queue: the next run a reviewer has not rated yet, and progress (SPEC 8).

"Reviewed by me" means the reviewer rated at least one part of the run (answer,
citation, step or report). The queue holds only finished runs with something to rate
(``runs.rateable_run``): a running run or one without answer text, steps or report
would otherwise stay at the head of the queue for ever. The queue walks the same filtered, sorted list as the runs
page, so a reviewer can work through exactly the list they were looking at.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlalchemy.orm import Session

from ..actors import Actor
from ..errors import Forbidden
from ..models import Run
from ..queries import capped_count, get_run_for
from .params import id_value
from .runs import COUNT_CAP, RunFilters, filtered_runs, rateable_run, single_workspace
from .runs.listing import order_of


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
    progress through the list."""

    run_pk: int | None
    progress: Progress
    filters: RunFilters


def _progress(session: Session, actor: Actor, filters: RunFilters, only: int | None) -> Progress:
    everything = replace(filters, reviewed=None)
    total, capped = capped_count(
        session, filtered_runs(actor, everything, only).where(rateable_run()), COUNT_CAP)
    reviewed, _ = capped_count(
        session, filtered_runs(actor, replace(filters, reviewed="mine"), only).where(rateable_run()),
        COUNT_CAP)
    return Progress(reviewed, total, capped)


def progress(session: Session, actor: Actor, filters: RunFilters | None = None) -> Progress:
    """How far the actor got through the runs matching ``filters`` (their ``reviewed``
    field is ignored). Raises ``ValidationFailed`` for bad filters."""
    filters = (filters or RunFilters()).validated()
    _, only = single_workspace(session, actor)
    return _progress(session, actor, filters, only)


def next_run(session: Session, actor: Actor, filters: RunFilters | None = None,
             after_run_pk: int | str | None = None) -> QueueState:
    """The first rateable run in the ``filters`` list order that the actor has not rated.

    With ``after_run_pk`` (the run being skipped), the search starts after that run and
    wraps around to the start, never returning that run itself. Raises ``Forbidden``
    when ``after_run_pk`` is missing or foreign, ``ValidationFailed`` for bad filters and
    for an ``after_run_pk`` that is not a run id (``after``).
    """
    after_run_pk = id_value(after_run_pk, "after", "must be a run's number")
    filters = (filters or RunFilters()).validated()
    _, only = single_workspace(session, actor)
    todo = replace(filters, reviewed="not_mine")
    sort = order_of(filters)
    order = sort.order_by()
    base = (filtered_runs(actor, todo, only).where(rateable_run())
            .with_only_columns(Run.id, maintain_column_froms=True))
    found = None
    if after_run_pk is not None:
        after = get_run_for(session, actor, after_run_pk)
        if after is None:
            raise Forbidden()
        found = session.scalar(base.where(sort.after(after)).order_by(*order).limit(1))
        if found is None:
            found = session.scalar(base.where(Run.id != after.id).order_by(*order).limit(1))
    else:
        found = session.scalar(base.order_by(*order).limit(1))
    return QueueState(found, _progress(session, actor, filters, only), filters)
