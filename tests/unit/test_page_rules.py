"""Rules the pages used to compute in their templates, now in the read models (issue 12
point 4): when the evidence score cannot rank the runs, how many queue items are left,
the dashboard's summary (verdicts, the usefulness rate and when it is good, open items)."""

from __future__ import annotations

import pytest

from reviewapp.domain.agreement import ReviewerAgreement
from reviewapp.services.alignment import AlignmentFilters, AlignmentReport
from reviewapp.services.dashboard import (
    Dashboard,
    DashboardFilters,
    DayUsefulness,
    ToolDislikes,
    ToolFailures,
)
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


def _dashboard(days, states):
    return Dashboard(DashboardFilters(), [], sum(d.runs for d in days), days, [], 0, [], [], [],
                     states)


def test_the_dashboard_summary_counts_and_marks_the_usefulness_rate():
    days = [DayUsefulness("2026-05-01", 5, 3, 1), DayUsefulness("2026-05-02", 4, 4, 2)]
    board = _dashboard(days, {"new": 2, "triaged": 3, "resolved": 9, "wont_fix": 1})
    assert (board.useful, board.judged, board.open_items) == (7, 10, 5)
    assert board.useful_rate == pytest.approx(0.7) and board.useful_rate_good
    low = _dashboard([DayUsefulness("2026-05-01", 10, 6, 4)], {"new": 0, "triaged": 0})
    assert low.useful_rate == pytest.approx(0.6) and not low.useful_rate_good
    assert low.open_items == 0
    none = _dashboard([DayUsefulness("2026-05-01", 3, 0, 0)], {})
    assert (none.judged, none.useful_rate, none.useful_rate_good) == (0, None, False)


def test_the_chart_rows_split_from_the_read_models():
    """The bars' second parts: calls that did not fail, ratings that were not negative,
    items where a reviewer went against the others' majority."""
    assert ToolFailures("vault_read", failed=3, total=10).other == 7
    assert ToolDislikes("vault_read", negative=2, rated=5, calls=2).positive == 3
    assert ReviewerAgreement("ann", rated=9, with_majority=6, agreed=4).disagreed == 2
    assert ReviewerAgreement("bob", rated=1, with_majority=0, agreed=0).disagreed == 0
