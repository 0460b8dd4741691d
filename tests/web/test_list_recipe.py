"""One recipe per list page (issue 12 point 3): each list's filters are one class that
parses the query string (``from_params``) and writes it back (``as_params``), and the
runs list's parameters — the links that carry "the current list", the filter form's
fields — are derived from ``RunFilters``, so a new filter is a change there."""

from __future__ import annotations

from datetime import date

import pytest

from reviewapp.services import adjudication, agreement, alignment, audit, cases, dashboard, triage
from reviewapp.services.runs import SORTS, RunFilters
from reviewapp.services.runs.filters import SORT_TABLE
from reviewapp.web import runs as runs_web
from reviewapp.web.forms import RunFilterForm

ALL_SET = {"q": "timeout", "workspace": "3", "kind": "aiops", "status": "FAILED",
           "verdict": "REJECT", "feedback": "not_useful", "reviewed": "mine", "score_min": "10",
           "score_max": "90", "outcome": "fail", "sort": "oldest", "failed_calls": "yes"}


def test_the_runs_list_parameters_are_the_filters_own(app):
    names = RunFilters.param_names()
    assert names == tuple(ALL_SET)  # in the order links write them
    assert runs_web.LIST_KEYS == names and RunFilterForm.FILTER_FIELDS == names
    with app.test_request_context("/"):
        assert {field.name for field in RunFilterForm()} == set(names)
    every = RunFilters.from_params(ALL_SET)
    assert every.as_params() == ALL_SET and list(every.as_params()) == list(names)
    assert RunFilters.from_params(every.as_params()) == every
    assert every.active and not RunFilters(sort="oldest").active
    assert RunFilters(workspace_slug="demo").active and RunFilters(q="x").active


def test_a_sort_is_one_row_of_the_table():
    assert list(SORTS) == [*SORT_TABLE, "relevance"]
    assert all(SORTS[name] == order.label for name, order in SORT_TABLE.items())


@pytest.mark.parametrize(("filters", "params"), [
    (cases.CaseFilters, {"workspace": "2", "fault_category": "DEPENDENCY", "service": "db",
                         "error_code": "E1", "source_type": "MANUAL", "q": "pool"}),
    (triage.TriageFilters, {"workspace": "2", "state": "open", "assignee": "me",
                            "kind": "chat", "reason": "wrong", "score_min": "1",
                            "score_max": "2", "date_from": "2026-05-01",
                            "date_to": "2026-05-02", "disagreement": "1"}),
    (dashboard.DashboardFilters, {"workspace": "2", "date_from": "2026-05-01",
                                  "date_to": "2026-05-31"}),
    (agreement.AgreementFilters, {"workspace": "2", "date_from": "2026-05-01",
                                  "date_to": "2026-05-31", "min_shared": "7", "queue": "4"}),
    (alignment.AlignmentFilters, {"workspace": "2", "date_from": "2026-05-01",
                                  "date_to": "2026-05-31", "threshold": "60"}),
    (adjudication.AdjudicationFilters, {"workspace": "2", "queue": "4"}),
    (audit.AuditFilters, {"action": "member.role"}),
    (RunFilters, ALL_SET),
])
def test_every_list_reads_and_writes_its_query_string_the_same_way(filters, params):
    parsed = filters.from_params(params)
    assert parsed.as_params() == params
    assert filters.from_params(parsed.as_params()) == parsed
    assert filters.from_params({}).as_params() == {}


def test_adjudication_filters_write_back_what_they_read():
    assert adjudication.AdjudicationFilters(7, None).as_params() == {"workspace": "7"}
    assert adjudication.AdjudicationFilters(None, 9).as_params() == {"queue": "9"}
    assert dashboard.DashboardFilters(None, date(2026, 5, 1), None).as_params() == {
        "date_from": "2026-05-01"}


def test_the_filter_fold_counts_the_set_filters_but_search_and_sort(client, login, make):
    ws = make.workspace()
    login(make.user(ws))
    page = client.get(f"/?q=x&sort=oldest&kind=chat&workspace={ws.id}").get_data(as_text=True)
    assert "Filters (2 set)" in page
    assert 'aria-label="Show the filters" checked' in page
    plain = client.get("/?q=x&sort=oldest").get_data(as_text=True)
    assert "set)" not in plain and 'aria-label="Show the filters">' in plain
    assert runs_web.folded_count({"q": "a", "sort": "oldest", "kind": "chat"}) == 1


def test_every_row_of_the_sort_table_is_offered_and_lists(client, login, make):
    """The sort select, the parameter check and the query all read ``SORT_TABLE``: each
    row is an option of the page and lists the runs in its own order."""
    ws = make.workspace()
    login(make.user(ws))
    older, newer = make.run(ws, query="Older one?"), make.run(ws, query="Newer one?")
    page = client.get("/").get_data(as_text=True)
    for name, label in SORTS.items():
        assert f'value="{name}"' in page and label in page
    for name in SORT_TABLE:
        listed = client.get(f"/?sort={name}")
        assert listed.status_code == 200, name
        text = listed.get_data(as_text=True)
        assert older.query in text and newer.query in text
    oldest = client.get("/?sort=oldest").get_data(as_text=True)
    assert oldest.index(older.query) < oldest.index(newer.query)
    newest = client.get("/?sort=newest").get_data(as_text=True)
    assert newest.index(newer.query) < newest.index(older.query)
    assert client.get("/?sort=shortest").status_code == 400
