"""A fault category typed on a form (the case form's text box with its list, the triage
API) is taken by its code in any case or by its label (second new-user walk: the case
form refused "database" and "Resource exhaustion", listing the very label it refused).
The stored value is the workspace's code."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role
from reviewapp.errors import ValidationFailed
from reviewapp.services import cases, triage


@pytest.mark.parametrize("typed", ["database", "Database", " DATABASE ", "DataBase"])
def test_a_case_takes_a_category_by_code_or_label_in_any_case(session, make, typed):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    case = make.case(ws, fault_category="GENERAL")
    edited = cases.edit_case(session, make.actor(lead), case.case_id, 1,
                             {"title": "t", "fault_category": typed})
    assert edited.case.fault_category == "DATABASE"


def test_a_case_takes_a_custom_label(session, make):
    ws = make.workspace(fault_categories=[{"code": "DISK_FULL", "label": "Disk full"}])
    lead = make.user(ws, Role.LEAD)
    case = make.case(ws, fault_category="GENERAL")
    edited = cases.edit_case(session, make.actor(lead), case.case_id, 1,
                             {"title": "t", "fault_category": "disk full"})
    assert edited.case.fault_category == "DISK_FULL"


@pytest.mark.parametrize("typed", ["resource exhaustion", "resource_exhaustion"])
def test_a_triage_item_takes_a_category_by_code_or_label_in_any_case(session, make, typed):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    item = make.triage_item(make.run(ws))
    row = triage.set_fault_category(session, make.actor(lead), item.id, 1, typed)
    assert row.fault_category == "RESOURCE_EXHAUSTION"


def test_a_name_that_is_neither_is_still_refused(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    case = make.case(ws, fault_category="GENERAL")
    with pytest.raises(ValidationFailed) as refused:
        cases.edit_case(session, make.actor(lead), case.case_id, 1,
                        {"title": "t", "fault_category": "Databas"})
    assert refused.value.field == "fault_category"
    assert refused.value.reason.startswith("'Databas' is not a category of this workspace; use one of ")
