"""The governing queue of a run (issue 16): the review queue whose reviewers decide the
run's verdict together — among the queues of the run's workspace that hold the run with
``reviewers_per_run`` > 1, the one with the most reviewers, the oldest (lowest id) on a
tie. A run no such queue holds has none: its latest answer-level rating is the verdict
(SPEC 6.2). The one statement of the rule, for the verdict (``feedback.verdict``), the
run page's "N reviewers decide" (``runs._loading``) and the disputes (``adjudication``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import aliased

from ..models import QueueItem, ReviewQueue


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
