"""The case library's category filter (list and export) takes a workspace category by its
label or its code and refuses one that names nothing (first new-user walk: the filter
matched codes only, and an unknown value exported an empty CSV without a word)."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role
from reviewapp.errors import ValidationFailed
from reviewapp.services import cases, exports
from reviewapp.services.cases import CaseFilters

CUSTOM = [{"code": "DISK_FULL", "label": "Disk full"}]


@pytest.fixture
def library(session, make):
    ws = make.workspace(fault_categories=CUSTOM)
    make.case(ws, title="disk", fault_category="DISK_FULL")
    make.case(ws, title="db", fault_category="DATABASE")  # retired: not in the custom list
    make.case(ws, title="other", fault_category="GENERAL")
    user = make.user(ws, Role.ADMIN)
    return ws, make.actor(user), user


def _titles(session, actor, typed):
    page = cases.list_cases(session, actor, CaseFilters.from_params({"fault_category": typed}))
    return [row.case.title for row in page.rows]


@pytest.mark.parametrize("typed", ["DISK_FULL", "disk_full", "Disk full", " disk FULL "])
def test_a_category_is_found_by_its_code_or_its_label(session, library, typed):
    ws, admin, _ = library
    assert _titles(session, admin, typed) == ["disk"]
    stream = exports.export_cases(session, admin, CaseFilters.from_params({"fault_category": typed}))
    assert [row["title"] for row in stream.rows] == ["disk"]


def test_a_retired_code_that_cases_still_carry_still_filters(session, library):
    ws, admin, _ = library
    assert _titles(session, admin, "database") == ["db"]


def test_a_category_that_names_nothing_is_refused_naming_the_field(session, library):
    ws, admin, _ = library
    for call in (lambda f: cases.list_cases(session, admin, f),
                 lambda f: exports.export_cases(session, admin, f)):
        with pytest.raises(ValidationFailed) as refused:
            call(CaseFilters.from_params({"fault_category": "Disk ful"}))
        assert refused.value.field == "fault_category"
        assert refused.value.reason == ("'Disk ful' is no fault category of your workspaces "
                                        "nor of any case: use one of General / other, Disk full")


def test_the_cases_page_answers_400_naming_the_field(client, login, session, library):
    login(library[2])
    page = client.get("/cases/?fault_category=Disk+ful")
    assert page.status_code == 400
    assert "is no fault category of your workspaces" in page.get_data(as_text=True)
    assert client.get("/cases/?fault_category=Disk+full").status_code == 200
