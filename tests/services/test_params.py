"""The filter classes share one parser per kind of parameter (services.params)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from reviewapp.errors import ValidationFailed
from reviewapp.services.agreement import AgreementFilters
from reviewapp.services.alignment import AlignmentFilters
from reviewapp.services.cases import CaseFilters
from reviewapp.services.dashboard import DashboardFilters
from reviewapp.services.exports import FeedbackFilters
from reviewapp.services.params import day_range
from reviewapp.services.runs import RunFilters
from reviewapp.services.triage import TriageFilters

FILTERS = [CaseFilters, DashboardFilters, FeedbackFilters, TriageFilters]


@pytest.mark.parametrize("filters", FILTERS)
@pytest.mark.parametrize("raw", ["0", str(2**31), "99999999999999999999"])
def test_every_list_refuses_a_workspace_that_is_no_id_alike(filters, raw):
    """A number beyond the database's integer used to reach the query (503 on PostgreSQL)."""
    with pytest.raises(ValidationFailed) as refused:
        filters.from_params({"workspace": raw})
    assert (refused.value.field, refused.value.message) == ("workspace", "workspace: must be a workspace id")


@pytest.mark.parametrize("raw", ["abc", "-1"])
def test_the_feedback_export_filters_take_only_an_id(raw):
    """The export itself reads a short name first (``export_filters.with_workspace_id``,
    tests/web/test_workspace_filter_everywhere.py) and hands them its number."""
    filters = FeedbackFilters
    with pytest.raises(ValidationFailed) as refused:
        filters.from_params({"workspace": raw})
    assert (refused.value.field, refused.value.message) == ("workspace", "workspace: must be a workspace id")


SHAPE = "workspace: must be a workspace's number or its short name (e.g. demo)"


@pytest.mark.parametrize("filters", [CaseFilters, TriageFilters, RunFilters, DashboardFilters,
                                     AgreementFilters, AlignmentFilters])
def test_the_lists_take_a_workspace_short_name_as_the_runs_list_does(filters):
    """Filters review: the runs list read ``?workspace=demo``, the triage and case lists
    refused it ("must be a workspace id"); the dashboard and its team pages too (tidy walk,
    2026-12-04). Whether the actor has it is each page's check."""
    read = filters.from_params({"workspace": " demo-2 "})
    assert (read.workspace_slug, read.workspace_id) == ("demo-2", None)
    for raw in ("-1", "Demo", "a b", "٣"):  # not a number, not a short name: the same words
        with pytest.raises(ValidationFailed) as refused:
            filters.from_params({"workspace": raw})
        assert (refused.value.field, refused.value.message) == ("workspace", SHAPE)


@pytest.mark.parametrize("filters", FILTERS)
def test_every_list_reads_a_workspace_id(filters):
    assert filters.from_params({"workspace": " 7 "}).workspace_id == 7
    assert filters.from_params({"workspace": ""}).workspace_id is None


@pytest.mark.parametrize("filters", [DashboardFilters, FeedbackFilters, TriageFilters])
def test_date_ranges_are_read_and_ordered_alike(filters):
    parsed = filters.from_params({"date_from": "2026-11-01", "date_to": "2026-11-30"})
    assert (parsed.date_from, parsed.date_to) == (date(2026, 11, 1), date(2026, 11, 30))
    for params, field in [({"date_from": "2026-13-01"}, "date_from"), ({"date_to": "x"}, "date_to"),
                          ({"date_from": "2026-11-30", "date_to": "2026-11-01"}, "date_from")]:
        with pytest.raises(ValidationFailed) as refused:
            filters.from_params(params)
        assert refused.value.field == field


def test_day_range_is_inclusive_utc_days():
    start, end = day_range(date(2026, 11, 1), date(2026, 11, 2))
    assert start == datetime(2026, 11, 1, tzinfo=UTC)
    assert end == datetime(2026, 11, 3, tzinfo=UTC)
