"""The workspace settings page's rules (SPEC 8: reason list, fault categories, negative part
ratings, AIOps evidence tools, time zone): how each text box becomes the stored value,
which input is refused with which reason, and how a stored value is shown again. The
limits are the ones the page's own error messages state (100 lines, 80-character labels,
codes of 80 / 64 characters, group names of 40, tool names of 120, zone names of 64)."""

from __future__ import annotations

import pytest

from reviewapp.domain.workspace_settings import (
    SETTINGS,
    parse_categories,
    parse_evidence_tools,
    parse_flag,
    parse_reasons,
    parse_time_zone,
    show_categories,
    show_evidence_tools,
    show_reasons,
    time_zone_of,
)


def _error(parse, text: str) -> str:
    with pytest.raises(ValueError) as raised:
        parse(text)
    return str(raised.value)


# --------------------------------------------------------------------------- reasons

def test_reasons_parse_code_label_and_polarity_per_line():
    text = "incorrect\n\n  wrong_tool | Wrong tool | Positive \nnice_touch || either\nslow | Slow"
    assert parse_reasons(text) == [
        {"code": "incorrect", "label": "Incorrect", "polarity": "negative"},   # a default's own
        {"code": "wrong_tool", "label": "Wrong tool", "polarity": "positive"},
        {"code": "nice_touch", "label": "Nice touch", "polarity": "either"},   # label from code
        {"code": "slow", "label": "Slow", "polarity": "negative"},             # omitted: negative
    ]
    assert parse_reasons("other") == [{"code": "other", "label": "Other", "polarity": "either"}]


@pytest.mark.parametrize(("text", "message"), [
    ("", "list at least one reason"),
    ("   \n\n", "list at least one reason"),
    ("Bad", "line 1: 'Bad' is not a code (lowercase letters, digits, _)"),
    ("ok\n9lives", "line 2: '9lives' is not a code (lowercase letters, digits, _)"),
    ("a\nb\na", "line 3: 'a' is listed twice"),
    ("a | A | sideways", "line 1: polarity must be one of negative, positive, either"),
    ("incorrect | Incorrect | positive", "line 1: 'incorrect' belongs to negative ratings only; it cannot be positive"),
    ("incorrect | Incorrect | either", "line 1: 'incorrect' belongs to negative ratings only; it cannot be either"),
    ("a | " + "L" * 81, "line 1: the label is longer than 80 characters"),
    ("x" + "y" * 80, "line 1: '" + "x" + "y" * 39 + "' is not a code (lowercase letters, digits, _)"),
])
def test_reasons_refuse_bad_lines_naming_the_line(text, message):
    assert _error(parse_reasons, text) == message


def test_reason_limits_at_their_edges():
    assert parse_reasons("x" + "y" * 79)[0]["code"] == "x" + "y" * 79             # an 80-character code
    assert parse_reasons("a | " + "L" * 80)[0]["label"] == "L" * 80                # an 80-character label
    assert len(parse_reasons("\n".join(f"r{i}" for i in range(100)))) == 100     # 100 lines
    assert _error(parse_reasons, "\n".join(f"r{i}" for i in range(101))) == "at most 100 lines"
    # blank lines are not lines of the list
    assert len(parse_reasons("\n\n".join(f"r{i}" for i in range(100)))) == 100


def test_reasons_show_as_lines_and_the_defaults_when_unset():
    assert show_reasons({}) == ("incorrect | Incorrect | negative\nincomplete | Incomplete | negative\n"
                                "citation | Citation | negative\nunsafe | Unsafe | negative\n"
                                "other | Other | either")
    stored = {"feedback_reasons": [{"code": "slow", "label": "Slow", "polarity": "positive"}]}
    assert show_reasons(stored) == "slow | Slow | positive"


# --------------------------------------------------------------------------- categories

def test_categories_parse_and_general_is_always_kept_first():
    assert parse_categories("DB | Database\nNO_DOCS | | Agent") == [
        {"code": "GENERAL", "label": "General / other", "group": "incident"},
        {"code": "DB", "label": "Database", "group": "incident"},
        {"code": "NO_DOCS", "label": "No docs", "group": "agent"},
    ]
    assert parse_categories("X\nGENERAL | Misc") == [
        {"code": "X", "label": "X", "group": "incident"},
        {"code": "GENERAL", "label": "Misc", "group": "incident"},
    ]


@pytest.mark.parametrize(("text", "message"), [
    ("db", "line 1: 'db' is not a code (capital letters, digits, _)"),
    ("A\nA", "line 2: 'A' is listed twice"),
    ("A | a | people", "line 1: group must be one of incident, agent"),
    ("A | " + "L" * 81, "line 1: the label is longer than 80 characters"),
    ("A" * 65, "line 1: '" + "A" * 40 + "' is not a code (capital letters, digits, _)"),
    ("\n".join(f"C{i}" for i in range(101)), "at most 100 lines"),
    ("", "list at least one category (write GENERAL to keep only the default)"),
    (" \n\t\n", "list at least one category (write GENERAL to keep only the default)"),
])
def test_categories_refuse_bad_lines(text, message):
    assert _error(parse_categories, text) == message


def test_categories_show_as_lines():
    stored = {"fault_categories": [{"code": "DB", "label": "Database", "group": "agent"}]}
    assert show_categories(stored) == "GENERAL | General / other | incident\nDB | Database | agent"
    assert show_categories({}).splitlines()[0] == "GENERAL | General / other | incident"
    assert len(show_categories({}).splitlines()) == 18


# --------------------------------------------------------------------------- evidence tools

def test_evidence_tools_parse_group_colon_tools():
    text = "logs: query_logs, loki.query\n\n traces : jaeger/search ,x:y-1 ,\n"
    assert parse_evidence_tools(text) == {"logs": ["query_logs", "loki.query"],
                                          "traces": ["jaeger/search", "x:y-1"]}
    assert parse_evidence_tools("g" + "h" * 39 + ": " + "t" * 120) == {"g" + "h" * 39: ["t" * 120]}


@pytest.mark.parametrize(("text", "message"), [
    ("", "list at least one group"),
    (" \n", "list at least one group"),
    ("logs query_logs", "line 1: write 'group: tool, tool' (group: lowercase letters, digits, _)"),
    ("a: x\nLogs: y", "line 2: write 'group: tool, tool' (group: lowercase letters, digits, _)"),
    ("g" + "h" * 40 + ": t", "line 1: write 'group: tool, tool' (group: lowercase letters, digits, _)"),
    ("a: x\na: y", "line 2: group 'a' is listed twice"),
    ("a: ", "line 1: list tool names (letters, digits, _ . : / -), not ''"),
    ("a: ok, b@d", "line 1: list tool names (letters, digits, _ . : / -), not 'b@d'"),
    ("a: " + "t" * 121, "line 1: list tool names (letters, digits, _ . : / -), not '" + "t" * 40 + "'"),
    ("\n".join(f"g{i}: t" for i in range(101)), "at most 100 groups"),
])
def test_evidence_tools_refuse_bad_lines(text, message):
    assert _error(parse_evidence_tools, text) == message


def test_evidence_tools_at_one_hundred_groups_are_accepted():
    assert len(parse_evidence_tools("\n".join(f"g{i}: t" for i in range(100)))) == 100


def test_evidence_tools_show_the_stored_groups_else_the_defaults():
    assert show_evidence_tools({"aiops_evidence_tools": {"logs": ["a", "b"], "x": ["c"]}}) == "logs: a, b\nx: c"
    assert show_evidence_tools({"aiops_evidence_tools": {}}) == show_evidence_tools({})
    assert show_evidence_tools({}) == (
        "knowledge: knowledge_search, search_knowledge, lookup_knowledge, kb_search, retrieve_docs\n"
        "logs: query_logs, search_logs, logs_query, loki_query\n"
        "metrics: query_metrics, prometheus_query, metrics_query, promql")


# --------------------------------------------------------------------------- flag, time zone

@pytest.mark.parametrize(("text", "on"), [
    ("1", True), ("on", True), (" TRUE ", True), ("yes", True),
    ("", False), (None, False), ("0", False), ("off", False), ("False", False), ("no", False),
])
def test_a_checkbox_is_on_or_off(text, on):
    assert parse_flag(text) is on


def test_a_checkbox_refuses_anything_else():
    assert _error(parse_flag, "maybe") == "must be on or off"


@pytest.mark.parametrize(("text", "name"), [
    ("Europe/Berlin", "Europe/Berlin"), ("  UTC ", "UTC"), ("", "UTC"), (None, "UTC"),
    ("America/Argentina/Buenos_Aires", "America/Argentina/Buenos_Aires"),
])
def test_a_time_zone_is_an_iana_name_default_utc(text, name):
    assert parse_time_zone(text) == name


@pytest.mark.parametrize(("text", "shown"), [
    ("Mars/Olympus", "Mars/Olympus"), ("../etc/passwd", "../etc/passwd"), ("x" * 65, "x" * 64),
])
def test_a_time_zone_that_is_no_name_is_refused(text, shown):
    assert _error(parse_time_zone, text) == f"'{shown}' is not a time zone name (e.g. UTC, Europe/Berlin)"


# --------------------------------------------------------------------------- the registry

def test_the_settings_page_rows_in_order_with_their_widgets():
    assert [(s.code, s.widget) for s in SETTINGS] == [
        ("feedback_reasons", "lines"), ("triage_negative_targets", "checkbox"),
        ("fault_categories", "lines"), ("aiops_evidence_tools", "lines"), ("time_zone", "text")]
    assert [s.label for s in SETTINGS] == [
        "Reasons for ratings", "Negative part ratings open triage items",
        "Fault categories (triage and cases)", "AIOps evidence tools", "Time zone"]


def test_each_setting_shows_its_stored_value_or_the_default():
    flag, zone = SETTINGS.get("triage_negative_targets"), SETTINGS.get("time_zone")
    assert flag.show({"triage_negative_targets": True}) == "1"
    assert flag.show({"triage_negative_targets": "yes"}) == ""   # only a stored True is on
    assert flag.show({}) == ""
    assert zone.show({"time_zone": "Asia/Tokyo"}) == "Asia/Tokyo"
    assert zone.show({}) == "UTC"
    assert flag.parse is parse_flag and zone.parse is parse_time_zone


def test_each_setting_explains_its_format_on_the_page():
    helps = {s.code: s.help for s in SETTINGS}
    assert helps == {
        "feedback_reasons": "One per line: code | label | polarity (negative, positive or either). "
                            "A default reason keeps its polarity: 'incorrect' never goes with a thumbs-up.",
        "triage_negative_targets": "A thumbs-down on a citation, step or report also puts the run in the "
                                   "not-useful queue (Opened by: negative rating of a part).",
        "fault_categories": "One per line: CODE | label | group (incident or agent). Triage and the case "
                            "library offer exactly these; anything else is refused.",
        "aiops_evidence_tools": "One group per line: group: tool, tool. Tool calls by these names count as "
                                "evidence in the AIOps checks (new scores; re-score older runs with "
                                "flask runs rescore).",
        "time_zone": "An IANA name (e.g. Europe/Berlin). Applies to the times on the run, triage item and case "
                     "pages as sent by the server (seen without JavaScript); lists and other pages show UTC "
                     "there, and with JavaScript every time shows in the viewer's own zone.",
    }


def test_a_stored_value_is_described_in_one_readable_line():
    """The audit log shows a change in one line: a checkbox on / off, groups of tools
    `group: tool, tool` separated by `; `, a value never set as the default applied
    then, marked "(default)"."""
    flag, zone, tools = (SETTINGS.get(code) for code in ("triage_negative_targets", "time_zone",
                                                         "aiops_evidence_tools"))
    assert (flag.describe(True), flag.describe(False), flag.describe(None)) == ("on", "off", "(default) off")
    assert (zone.describe("Asia/Tokyo"), zone.describe(None)) == ("Asia/Tokyo", "(default) UTC")
    assert tools.describe({"logs": ["a"]}) == "logs: a"
    assert tools.describe({"logs": ["a", "b"], "metrics": ["m"]}) == "logs: a, b; metrics: m"
    assert tools.describe(None) == "(default) " + "; ".join(show_evidence_tools({}).splitlines())


def test_reasons_and_categories_are_described_by_their_labels_comma_separated():
    reasons, categories = SETTINGS.get("feedback_reasons"), SETTINGS.get("fault_categories")
    assert reasons.describe([{"code": "tone", "label": "Wrong tone", "polarity": "negative"},
                             {"code": "unsafe", "label": "Unsafe", "polarity": "negative"}]
                            ) == "Wrong tone, Unsafe"
    assert reasons.describe(None) == "(default) Incorrect, Incomplete, Citation, Unsafe, Other"
    assert categories.describe([{"code": "GENERAL", "label": "General", "group": "incident"},
                                {"code": "DB", "label": "Database", "group": "agent"}]
                               ) == "General, Database"


def test_a_setting_row_cannot_be_changed():
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        SETTINGS.get("time_zone").label = "Zone"


def test_evidence_tools_name_the_first_bad_tool():
    assert _error(parse_evidence_tools, "a: ok, b@d, c@e") == (
        "line 1: list tool names (letters, digits, _ . : / -), not 'b@d'")


def test_an_unknown_setting_is_refused_naming_the_field():
    from reviewapp.domain.vocabulary import UnknownValue

    with pytest.raises(UnknownValue) as raised:
        SETTINGS.get("colour")
    assert str(raised.value) == ("setting: 'colour' is not one of feedback_reasons, triage_negative_targets, "
                                 "fault_categories, aiops_evidence_tools, time_zone")


@pytest.mark.parametrize(("settings", "zone"), [
    (None, "UTC"),
    ({}, "UTC"),
    ({"time_zone": ""}, "UTC"),
    ({"time_zone": 5}, "UTC"),
    ({"time_zone": "Mars/Olympus_Mons"}, "UTC"),  # stored once, no longer resolves
    ({"time_zone": "Europe/Berlin"}, "Europe/Berlin"),
    ({"time_zone": "America/New_York", "flag": "on"}, "America/New_York"),
])
def test_time_zone_of_a_workspace_is_its_setting_or_utc(settings, zone):
    assert time_zone_of(settings) == zone
