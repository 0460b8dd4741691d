"""The governing queue of a run (issue 16): the review queue whose reviewers decide the
run's verdict together — among the queues of the run's workspace that hold the run with
``reviewers_per_run`` > 1, the one with the most reviewers, the oldest (lowest id) on a
tie. A run no such queue holds has none: its latest answer-level rating is the verdict
(SPEC 6.2). The one statement of the rule, for the verdict (``feedback.verdict``), the
run page's "N reviewers decide" (``runs._loading``) and the disputes (``adjudication``),
whose statement (``disputes``) is here too.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, exists, func, or_, select
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
        c.c.positive + c.c.negative >= c.c.needed,
        or_(c.c.positive == c.c.negative, c.c.rule == ANY_SPLIT))
