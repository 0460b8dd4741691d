"""Package-private: how review queues fill themselves from runs (issue 16 "Review
queues"). A queue's rule is a runs-list filter (``RunFilters``) narrowed to the queue's
workspace and to runs whose answer-level target can be rated (``takes_in``: finished,
``rateable_run``, and ``answer.has_answer_target``: the queue completes an item on
answer-level ratings, ``queue_completion``), of which a deterministic ``sample_percent``
sample enters (``domain/queues``). A run with only steps to rate (a FAILED AIOps run
without answer or report) would stay 0/N forever, so it never enters; a finished run
that loses its target (re-ingested without its answer) leaves the queues' open items
(``offer_run``; complete ones stay), and comes back through the rule when an answer or
report arrives; a lead cannot add such a run by hand (``nothing_to_rate``). A RUNNING
run a lead added by hand stays while it runs.

``fill`` applies a rule to the existing runs once (when the queue is made);
``offer_run`` applies every queue of a run's workspace to one new or newly finished run
(the ingest paths call it). Both insert with ON CONFLICT DO NOTHING on (queue, run), so a
run enters a queue at most once however often a rule matches, even under concurrent
ingests. A run a lead removed from a queue (``review_queue_removal``) does not
re-enter it through the rule; a lead adding it by hand (``source`` manual) lifts that
record. Neither checks access (the callers did) nor commits (the caller's transaction
does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, exists, not_, select
from sqlalchemy.orm import Session

from ...actors import Actor
from ...domain.queues import in_sample
from ...models import ItemSource, QueueItem, QueueRemoval, ReviewQueue, Run, RunStatus
from ...models.base import utcnow
from ...queries import insert_for
from ..answer import has_answer_target
from ..queue_assignment import deal
from ..queue_completion import refresh_run, refresh_runs
from .filters import RunFilters
from .rateable import rateable_run
from .scope import filtered_runs

BATCH = 1000
_SYSTEM = Actor.system_actor()


def rule_filters(queue: ReviewQueue) -> RunFilters:
    """The queue's rule as runs-list filters of its workspace."""
    return RunFilters.from_params({**(queue.rule or {}), "workspace": str(queue.workspace_id)})


def takes_in() -> Any:
    """SQL condition on ``Run``: a queue's rule may take the run in (module docstring):
    it is rateable (finished, with something to rate: ``rateable_run``, an indexed
    column) and has an answer-level target (``answer.has_answer_target``), the one
    thing an item's completion counts. The initial fill, ``offer_run`` and a refill
    (``update_queue``) all read it through ``_matching``."""
    return rateable_run() & has_answer_target()


def nothing_to_rate() -> Any:
    """SQL condition on ``Run``: the run is finished and has no answer-level target, so
    an item of it could never complete: its open items leave (``offer_run``), a lead
    may not add it (``refused_by_hand``). A RUNNING run may still answer."""
    return (Run.status != RunStatus.RUNNING.value) & not_(has_answer_target())


def refused_by_hand(session: Session, run_pks: Sequence[int]) -> list[str]:
    """The ``run_id`` of each of ``run_pks`` that has nothing to rate at answer level
    (``nothing_to_rate``), sorted; ``[]`` when a lead may add them all. One query."""
    return list(session.scalars(select(Run.run_id).where(Run.id.in_(run_pks), nothing_to_rate())
                                .order_by(Run.run_id)))


def _matching(queue: ReviewQueue) -> Any:
    """The ids of the runs the queue's rule matches, less those a lead removed from it."""
    removed = exists().where(QueueRemoval.queue_id == queue.id, QueueRemoval.run_pk == Run.id)
    return (filtered_runs(_SYSTEM, rule_filters(queue), queue.workspace_id)
            .where(takes_in(), ~removed)
            .with_only_columns(Run.id, maintain_column_froms=True))


def insert_items(session: Session, queue: ReviewQueue, run_pks: Sequence[int], source: str,
                 added_by: int | None = None) -> int:
    """Add ``run_pks`` to the queue, skipping those already in it; returns how many were
    added. ``source`` is an ``ItemSource`` value; by hand (manual), the runs' removal
    records are lifted (the lead wants them back; the rule's runs come through
    ``_matching``, which leaves removed runs out). An added run that already carries
    answer ratings gets its count and completion (``queue_completion``); in a
    round-robin queue the new items are dealt (``queue_assignment.deal``), first to
    who has not rated their runs (read with the counts: no statement more)."""
    queue_id = queue.id
    added: list[int] = []
    item_ids: list[int] = []
    run_of: dict[int, int] = {}
    now = utcnow()
    for start in range(0, len(run_pks), BATCH):
        chunk = run_pks[start:start + BATCH]
        if source == ItemSource.MANUAL.value:
            session.execute(delete(QueueRemoval).where(
                QueueRemoval.queue_id == queue_id, QueueRemoval.run_pk.in_(chunk))
                .execution_options(synchronize_session=False))
        stmt = insert_for(session, QueueItem.__table__).values([
            {"queue_id": queue_id, "run_pk": pk, "source": source, "added_by": added_by,
             "created_at": now, "updated_at": now} for pk in chunk
        ]).on_conflict_do_nothing(index_elements=["queue_id", "run_pk"]).returning(
            QueueItem.__table__.c.id, QueueItem.__table__.c.run_pk)
        for item_id, run_pk in session.execute(stmt):
            item_ids.append(item_id)
            added.append(run_pk)
            run_of[item_id] = run_pk
    who = refresh_runs(session, queue_id, added, now)
    deal(session, queue, sorted(item_ids),
         {i: who[run_of[i]] for i in item_ids if run_of[i] in who})
    return len(added)


def fill(session: Session, queue: ReviewQueue) -> int:
    """Apply the queue's rule and sample to every existing run of its workspace; returns
    how many runs were added (0 when applied again: the sample is deterministic)."""
    chosen = [pk for pk in session.scalars(_matching(queue).order_by(Run.id))
              if in_sample(queue.id, pk, queue.sample_percent)]
    return insert_items(session, queue, chosen, ItemSource.RULE.value)


def offer_run(session: Session, run: Run) -> int:
    """Apply every queue of the run's workspace to this one run (after it was stored or
    finished); returns how many queues took it. Its items in queues it was already in
    get their completion re-derived (the answer may have changed), and its open items
    leave when it now has nothing to rate at answer level (``nothing_to_rate``: one
    DELETE; their reservations go with them, their assignments by the foreign key's
    cascade). Two queries when the workspace has no queue."""
    refresh_run(session, run.id)
    queues = list(session.scalars(
        select(ReviewQueue).where(ReviewQueue.workspace_id == run.workspace_id)))
    if queues:
        session.execute(delete(QueueItem).where(
            QueueItem.run_pk.in_(select(Run.id).where(Run.id == run.id, nothing_to_rate())),
            QueueItem.completed_at.is_(None)).execution_options(synchronize_session=False))
    taken = 0
    for queue in queues:
        if not in_sample(queue.id, run.id, queue.sample_percent):
            continue
        if session.scalar(_matching(queue).where(Run.id == run.id)) is None:
            continue
        taken += insert_items(session, queue, [run.id], ItemSource.RULE.value)
    return taken
