"""The one fault-category vocabulary of triage and cases (domain/fault_categories.py,
SPEC 7): the default list, a workspace's own list (GENERAL always kept as the default),
and the old codes mapped on read."""

from __future__ import annotations

import dataclasses

import pytest

from reviewapp.domain.fault_categories import (
    FAULT_CATEGORIES,
    GROUPS,
    category_named,
    grouped,
    normalise,
    workspace_categories,
)
from reviewapp.domain.vocabulary import UnknownValue

# By hand: incident categories (what broke, the case library's view; GENERAL first, the
# default of SPEC 3 / 7), then agent categories (what the agent got wrong, triage's view).
INCIDENT_ROWS = [
    ("GENERAL", "General / other"), ("RESOURCE_EXHAUSTION", "Resource exhaustion"),
    ("DATABASE", "Database"), ("NETWORK", "Network"), ("DEPLOYMENT", "Deployment"),
    ("DEPENDENCY", "Dependency"), ("AUTH", "Authentication / authorisation"),
    ("CONFIGURATION", "Configuration"), ("CAPACITY", "Capacity")]
AGENT_ROWS = [
    ("NO_EVIDENCE", "No evidence"), ("RETRIEVAL_MISS", "Retrieval miss"),
    ("TOOL_FAILURE", "Tool failure"), ("UNGROUNDED_CLAIM", "Ungrounded claim"),
    ("WRONG_ROOT_CAUSE", "Wrong root cause"), ("INCOMPLETE_ANSWER", "Incomplete answer"),
    ("UNSAFE_ADVICE", "Unsafe advice"), ("CITATION_PROBLEM", "Citation problem"),
    ("KNOWLEDGE_GAP", "Knowledge gap")]


def test_the_default_list_its_labels_and_groups():
    assert [(c.code, c.label, c.group) for c in FAULT_CATEGORIES] == (
        [(code, label, "incident") for code, label in INCIDENT_ROWS]
        + [(code, label, "agent") for code, label in AGENT_ROWS])
    assert GROUPS == {"incident": "Incident (what broke)",
                      "agent": "Agent (what the agent got wrong)"}
    with pytest.raises(UnknownValue) as error:
        FAULT_CATEGORIES.get("OTHER")
    assert error.value.name == "fault_category"
    with pytest.raises(dataclasses.FrozenInstanceError):
        FAULT_CATEGORIES.get("DATABASE").group = "agent"


def test_old_codes_are_mapped_and_others_kept():
    assert normalise("OTHER") == "GENERAL"
    assert normalise("DATABASE") == "DATABASE"
    assert normalise("SOMETHING_NEW") == "SOMETHING_NEW"
    assert normalise(None) is None
    assert normalise("") == ""


def _rows(registry):
    return [(c.code, c.label, c.group) for c in registry]


def test_a_workspace_list_keeps_general_first_and_reads_codes_and_rows():
    own = workspace_categories({"fault_categories": [
        "DATABASE", "FLAKY_TEST", {"code": "BAD_PROMPT", "label": "Prompt trouble", "group": "agent"},
        {"code": "QUOTA", "label": "", "group": "nonsense"}, {"code": "LATE_PAGE"}, "DATABASE"]})
    assert _rows(own) == [
        ("GENERAL", "General / other", "incident"), ("DATABASE", "Database", "incident"),
        ("FLAKY_TEST", "Flaky test", "incident"), ("BAD_PROMPT", "Prompt trouble", "agent"),
        ("QUOTA", "Quota", "incident"), ("LATE_PAGE", "Late page", "incident")]
    with pytest.raises(UnknownValue) as error:
        own.get("NETWORK")
    assert error.value.name == "fault_category"


def test_a_workspace_list_that_holds_general_keeps_it_where_it_is():
    own = workspace_categories({"fault_categories": ["NETWORK", "GENERAL"]})
    assert own.codes() == ("NETWORK", "GENERAL")


@pytest.mark.parametrize("settings", [
    None, {}, {"fault_categories": []}, {"fault_categories": "DATABASE"},
    {"fault_categories": ["DATABASE", "lower_case"]}, {"fault_categories": ["DATABASE", 7]},
    {"fault_categories": [{"label": "no code"}]}, {"fault_categories": [{"code": "bad code"}]},
    {"other_setting": ["NETWORK"]}])
def test_anything_but_a_list_of_codes_or_rows_means_the_default_list(settings):
    assert workspace_categories(settings) is FAULT_CATEGORIES


def test_a_tuple_works_like_a_list():
    assert workspace_categories({"fault_categories": ("GENERAL", "NETWORK")}).codes() == (
        "GENERAL", "NETWORK")


def test_grouped_splits_the_categories_by_kind_in_the_groups_order_leaving_empty_ones_out():
    """The triage page's select shows the categories under their kind (new-user walk)."""
    assert [(label, [(r.code, r.label) for r in rows]) for label, rows in grouped(FAULT_CATEGORIES)] == [
        ("Incident (what broke)", INCIDENT_ROWS), ("Agent (what the agent got wrong)", AGENT_ROWS)]
    own = workspace_categories({"fault_categories": [{"code": "SLOW_TOOL", "group": "agent"}, "PAYMENTS"]})
    assert [(label, [r.code for r in rows]) for label, rows in grouped(own)] == [
        ("Incident (what broke)", ["GENERAL", "PAYMENTS"]), ("Agent (what the agent got wrong)", ["SLOW_TOOL"])]
    only_incident = workspace_categories({"fault_categories": ["GENERAL", "PAYMENTS"]})
    assert [label for label, _ in grouped(only_incident)] == ["Incident (what broke)"]


@pytest.mark.parametrize("typed, expected", [
    ("DATABASE", "DATABASE"),                        # the code as stored
    ("database", "DATABASE"), ("DataBase", "DATABASE"),  # the code in another case
    ("Resource exhaustion", "RESOURCE_EXHAUSTION"),  # the label
    ("resource EXHAUSTION", "RESOURCE_EXHAUSTION"),  # the label in another case
    ("Disk full", "DISK_FULL"),                      # a workspace's own label
    ("Databas", None), ("DATABASE_X", None), ("", None),
])
def test_category_named_takes_a_code_or_a_label_in_any_case(typed, expected):
    categories = workspace_categories({"fault_categories": [
        "DATABASE", "RESOURCE_EXHAUSTION", {"code": "DISK_FULL", "label": "Disk full"}]})
    assert category_named(categories, typed) == expected


def test_category_named_prefers_the_exact_code_to_another_row_s_label():
    """A code typed exactly names its own row even when another row's label reads the same
    ignoring case ("Db" labelled on DB_LEGACY, code DB on another row)."""
    categories = workspace_categories({"fault_categories": [
        {"code": "DB_LEGACY", "label": "db"}, {"code": "DB", "label": "Database"}]})
    assert category_named(categories, "DB") == "DB"
    assert category_named(categories, "db") == "DB_LEGACY"
