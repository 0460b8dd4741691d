"""Rules the pages used to compute in their templates, now in the read models (issue 12
point 4): when the evidence score cannot rank the runs, how many queue items are left."""

from __future__ import annotations

import pytest

from reviewapp.services.alignment import AlignmentFilters, AlignmentReport
from reviewapp.services.queue_work import QueueProgress


@pytest.mark.parametrize(("score_mode", "warned"), [
    (None, False),            # no run scored
    ((30, 182, 200), True),   # tau-bench: 182 of 200 runs score exactly 30
    ((30, 5, 9), True),       # more than half
    ((30, 4, 8), False),      # exactly half: the score still ranks the other half
    ((70, 1, 1), True),
])
def test_the_score_cannot_rank_when_most_scored_runs_share_one_score(score_mode, warned):
    report = AlignmentReport(AlignmentFilters(), [], 0, 0, [], score_mode=score_mode)
    assert report.score_cannot_rank is warned


def test_queue_items_left_are_the_ones_not_complete():
    assert QueueProgress(items=7, complete=3, mine=2, reserved=1).left == 4
    assert QueueProgress(items=0, complete=0, mine=0, reserved=0).left == 0
