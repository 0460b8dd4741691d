"""The run page's view of an external outcome (domain/outcome.py, SPEC 8): label,
source, reward, checks, missed actions and other facts, each list capped at 50 items and
each value at 300 characters so that no detail makes the page long."""

from __future__ import annotations

import dataclasses

import pytest

from reviewapp.domain.outcome import Check, outcome_view


def test_nothing_to_show_is_none():
    assert outcome_view(None, None) is None
    assert outcome_view("", {}) is None
    assert outcome_view(None, []) is None


def test_a_label_alone_and_a_detail_that_is_not_an_object():
    view = outcome_view("pass", None)
    assert (view.label, view.source, view.reward, view.checks, view.facts, view.hidden) == (
        "pass", None, None, [], [], 0)
    assert outcome_view("fail", [1, "two"]).facts == [("detail", '[1, "two"]')]
    assert outcome_view(None, "judged by hand").facts == [("detail", "judged by hand")]
    assert outcome_view("fail", "").facts == []


def test_an_sregym_style_detail():
    view = outcome_view("fail", {
        "source": "sregym", "reward": 0.5, "task_id": 7, "problem": "数据库 down", "pods": ["数据库"],
        "checks": [{"name": "detection", "passed": True},
                   {"name": "mitigation", "passed": False, "detail": "pod still crashing"},
                   {"name": "empty note", "passed": True, "detail": ""},
                   {"name": "recovery", "passed": True},
                   {"passed": False}, {"name": "no verdict"}, "not a check"],
        "missed_actions": [{"name": "update_user", "kwargs": {"id": 3}},
                           {"name": "refund", "arguments": {"amount": 5}},
                           {"name": "noop", "kwargs": {}}, {"name": "bare"}, "plain", 12]})
    assert (view.label, view.source, view.reward, view.hidden) == ("fail", "sregym", 0.5, 0)
    assert view.checks == [Check("detection", True), Check("mitigation", False, "pod still crashing"),
                           Check("empty note", True), Check("recovery", True),
                           Check("check", False)]
    assert view.passed_checks == 3
    assert view.missed_actions == ['update_user({"id": 3})', 'refund({"amount": 5})', "noop",
                                   "bare", "plain", "12"]
    assert view.facts == [("task_id", "7"), ("problem", "数据库 down"), ("pods", '["数据库"]')]
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.checks[0].passed = False
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.label = "pass"


@pytest.mark.parametrize(("reward", "shown"), [(1, 1), (0, 0), (0.25, 0.25), (True, None),
                                               ("1", None), (None, None)])
def test_only_a_number_is_a_reward(reward, shown):
    assert outcome_view("pass", {"reward": reward}).reward == shown


def test_a_source_that_is_not_text_is_not_shown():
    assert outcome_view("pass", {"source": 3}).source is None


def test_a_value_is_cut_at_300_characters():
    assert outcome_view("pass", {"note": "x" * 300}).facts == [("note", "x" * 300)]
    assert outcome_view("pass", {"note": "x" * 301}).facts == [("note", "x" * 300 + "…")]
    assert outcome_view("pass", {"source": "s" * 301}).source == "s" * 300 + "…"


def test_each_list_shows_50_items_and_counts_the_rest_as_hidden():
    fifty = outcome_view("pass", {
        "checks": [{"name": f"c{i}", "passed": True} for i in range(50)],
        "missed_actions": [f"a{i}" for i in range(50)],
        **{f"k{i}": i for i in range(50)}})
    assert (len(fifty.checks), len(fifty.missed_actions), len(fifty.facts), fifty.hidden) == (
        50, 50, 50, 0)
    more = outcome_view("pass", {
        "checks": [{"name": f"c{i}", "passed": i % 2 == 0} for i in range(53)],
        "missed_actions": [f"a{i}" for i in range(51)],
        **{f"k{i}": i for i in range(52)}})
    assert (len(more.checks), len(more.missed_actions), len(more.facts)) == (50, 50, 50)
    assert more.hidden == 3 + 1 + 2
    assert more.checks[-1] == Check("c49", False) and more.missed_actions[-1] == "a49"
    assert more.facts[-1] == ("k49", "49")
