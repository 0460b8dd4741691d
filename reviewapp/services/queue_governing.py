"""The governing queue of a run (issue 16): the review queue whose reviewers decide the
run's verdict together — among the queues of the run's workspace that hold the run with
``reviewers_per_run`` > 1, the one with the most reviewers, the oldest (lowest id) on a
tie. A run no such queue holds has none: its latest answer-level rating is the verdict
(SPEC 6.2). The one statement of the rule, for the verdict (``feedback.verdict``), the
run page's "N reviewers decide" (``runs._loading``) and the disputes (``adjudication``),
whose statements are here too: the list (``disputes``) and one run's (``disputed_queue_id``,
the run page's "Disputed" badge), with the one dispute rule (``_needs_decision``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, case, exists, func, or_, select
from sqlalchemy.orm import aliased

from ..models import Feedback, QueueItem, ReviewQueue, Run, VerdictDecision
from .answer import answer_rating_condition
from .queue_completion import counted_rating

ANY_SPLIT = "any_split"  # the dispute rule under which any split of the ratings is disputed


def governing_queue_id(run_pk: Any, workspace_id: Any, column: str = "id") -> Any:
    """SQL scalar subquery: the id (or the other ``review_queue`` ``column``, e.g.
    ``reviewers_per_run``) of the governing queue of the run ``run_pk`` in
    ``workspace_id`` (values, or columns of the statement it is placed in, which it
    correlates with: place it directly, not inside another subquery), NULL when there is
    none."""
    queue, item = aliased(ReviewQueue), aliased(QueueItem)
    return (select(getattr(queue, column)).join(item, item.queue_id == queue.id)
            .where(item.run_pk == run_pk, queue.workspace_id == workspace_id,
                   queue.reviewers_per_run > 1)
            .order_by(queue.reviewers_per_run.desc(), queue.id).limit(1)
            .scalar_subquery())


def _counts_for_queue() -> Any:
    """SQL condition on ``Feedback``: the rating counts for the outer ``ReviewQueue``
    (``queue_completion.counted_rating``: in a queue that names its reviewers, theirs)."""
    return counted_rating(ReviewQueue.id, ReviewQueue.reviewers, Feedback.run_pk,
                          Feedback.author_id)


def _both_ratings_given() -> Any:
    """SQL condition on ``Run`` and its ``ReviewQueue``: its answer has a positive and a
    negative rating that count for the queue (every dispute has both: N >= 2 ratings
    with a tie or a split)."""
    def given(rating: str) -> Any:
        return (select(Feedback.id)
                .where(Feedback.run_pk == Run.id, Feedback.rating == rating,
                       answer_rating_condition(), _counts_for_queue())
                .exists())
    return and_(given("positive"), given("negative"))


def _answer_count(rating: str) -> Any:
    """SQL: how many answer-level ratings ``rating`` of the outer ``Run`` count for the
    outer ``ReviewQueue``."""
    return (select(func.count(Feedback.id))
            .where(Feedback.run_pk == Run.id, Feedback.rating == rating,
                   answer_rating_condition(), _counts_for_queue())
            .correlate(Run, ReviewQueue).scalar_subquery())


def _needs_decision(needed: Any, rule: Any, positive: Any, negative: Any) -> Any:
    """SQL: ``domain.consensus``'s ``disputed`` outcome of ``positive`` and ``negative``
    answer ratings (SQL values) for a queue needing ``needed`` under dispute ``rule``:
    both kinds, at least N of them, and a tie or the queue's ``any_split`` rule."""
    return and_(positive > 0, negative > 0, positive + negative >= needed,
                or_(positive == negative, rule == ANY_SPLIT))


def _split_for_queue() -> Any:
    """SQL EXISTS on the outer ``Run`` and ``ReviewQueue``: the run's answer ratings that
    count for the queue (``_counts_for_queue``) need a decision (``_needs_decision``), in
    one grouped read of them (a statement PostgreSQL plans in a fraction of what counting
    each kind in its own subquery took)."""
    positive = func.count(case((Feedback.rating == "positive", Feedback.id)))
    negative = func.count(case((Feedback.rating == "negative", Feedback.id)))
    return (select(Feedback.run_pk)
            .where(Feedback.run_pk == Run.id, answer_rating_condition(), _counts_for_queue())
            .group_by(Feedback.run_pk)
            .having(_needs_decision(ReviewQueue.reviewers_per_run, ReviewQueue.dispute_rule,
                                    positive, negative))
            .correlate(Run, ReviewQueue).exists())


def disputed_queue_id() -> Any:
    """SQL scalar subquery on the outer ``Run`` (place it in a statement that has
    ``Run`` in its FROM; its parts correlate with it explicitly, being one level further
    in than auto-correlation reaches): the id of the run's governing queue when the run is
    disputed and no lead has decided it yet (``disputes``' rule for this one run:
    ``adjudication`` lists it), else NULL. One indexed look-up of the governing queue;
    the ratings are read only for a run that has one."""
    return (select(ReviewQueue.id)
            .where(ReviewQueue.id == governing_queue_id(Run.id, Run.workspace_id).correlate(Run),
                   ~exists().where(VerdictDecision.run_pk == Run.id).correlate(Run),
                   _split_for_queue())
            .correlate(Run).scalar_subquery())


def disputed_mark() -> Any:
    """SQL on the outer ``Run``: ``disputed_queue_id`` for a run without a verdict, NULL
    for one with a verdict (a lead's decision or a settled rating); the lists' "disputed"
    mark (runs list, triage rows). The dispute is looked up only for a run without one."""
    return case((Run.feedback.is_(None), disputed_queue_id()), else_=None)


def disputes(ws_ids: list[int], queue_id: int | None) -> Any:
    """SQL: (run_pk, queue_id, item_id) of each disputed run of the workspaces ``ws_ids``
    (optionally of queue ``queue_id`` only) not decided yet, by its governing queue's item
    (``adjudication``'s list): ``domain.consensus``'s rule in SQL, at least N answer
    ratings of those who count for the queue (``queue_completion.counted_rating``), both
    kinds, and a tie or the queue's ``any_split`` rule. Counted and paged
    by the caller (``queries.capped_count``, keyset on ``item_id``)."""
    candidates = (
        select(QueueItem.run_pk.label("run_pk"), QueueItem.queue_id.label("queue_id"),
               QueueItem.id.label("item_id"), ReviewQueue.reviewers_per_run.label("needed"),
               ReviewQueue.dispute_rule.label("rule"),
               _answer_count("positive").label("positive"),
               _answer_count("negative").label("negative"))
        .join(ReviewQueue, ReviewQueue.id == QueueItem.queue_id)
        .join(Run, Run.id == QueueItem.run_pk)
        .where(ReviewQueue.workspace_id.in_(ws_ids),
               ReviewQueue.id == governing_queue_id(Run.id, Run.workspace_id),
               _both_ratings_given(), ~exists().where(VerdictDecision.run_pk == Run.id)))
    if queue_id is not None:
        candidates = candidates.where(ReviewQueue.id == queue_id)
    c = candidates.subquery()
    return select(c.c.run_pk, c.c.queue_id, c.c.item_id).where(
        _needs_decision(c.c.needed, c.c.rule, c.c.positive, c.c.negative))
