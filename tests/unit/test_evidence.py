"""Evidence score rules (SPEC 5.1): a table of cases computed by hand, and properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewapp.domain.evidence import (
    RULES,
    RULES_BY_NAME,
    CallStats,
    Rule,
    ToolCallFact,
    call_stats,
    evaluate_stats,
    score_evidence,
)

OK = ToolCallFact("completed")
BAD = ToolCallFact("failed")
OPEN = ToolCallFact("started")
L0 = ToolCallFact("completed", "L0", 1, True)
L1 = ToolCallFact("completed", "L1", 2, True)
MISS = ToolCallFact("completed", None, 0, True)

SUCCESS_20 = ("has_successful_tool_call", 30, "successful tool calls: 20")

# (id, status, calls, expected score, expected factors as (name, delta, description))
CASES = [
    ("seed_example_20_calls_one_L0", "SUCCESS", [OK] * 19 + [L0], 65,
     [SUCCESS_20, ("l0_exact_match", 35, "calls with an L0 exact hit: 1")]),
    ("failed_run_with_successful_calls", "FAILED", [OK] * 5, 0,
     [("execution_failed", 0, "run status: FAILED (tool calls: 5)")]),
    ("failed_run_without_calls_is_execution_failed_first", "FAILED", [], 0,
     [("execution_failed", 0, "run status: FAILED (tool calls: 0)")]),
    ("failed_run_with_L0_hits", "FAILED", [L0, L0], 0,
     [("execution_failed", 0, "run status: FAILED (tool calls: 2)")]),
    ("no_tool_call", "SUCCESS", [], 0, [("no_tool_call", 0, "tool calls: 0")]),
    ("all_calls_failed_clamps_to_zero", "SUCCESS", [BAD] * 3, 0,
     [("all_tool_calls_failed", -20, "failed tool calls: 3 of 3")]),
    ("retrieval_without_hits", "SUCCESS", [OK, MISS], 20,
     [("has_successful_tool_call", 30, "successful tool calls: 2"),
      ("retrieval_no_hit", -10, "retrieval calls without a hit: 1")]),
    ("L1_only", "SUCCESS", [L1], 50,
     [("has_successful_tool_call", 30, "successful tool calls: 1"),
      ("l1_semantic_match", 20, "calls with an L1 semantic hit: 1 (no L0 hit)")]),
    ("L0_and_L1_only_L0_counts", "SUCCESS", [L1, L0], 65,
     [("has_successful_tool_call", 30, "successful tool calls: 2"),
      ("l0_exact_match", 35, "calls with an L0 exact hit: 1")]),
    ("only_calls_without_end_event", "SUCCESS", [OPEN, OPEN], 0, []),
    ("failed_retrieval_and_failed_call", "SUCCESS",
     [BAD, ToolCallFact("failed", None, 0, True)], 0,
     [("retrieval_no_hit", -10, "retrieval calls without a hit: 1"),
      ("all_tool_calls_failed", -20, "failed tool calls: 2 of 2")]),
    ("failed_call_with_L0_hit_still_counts", "SUCCESS", [ToolCallFact("failed", "L0", 1, True)], 15,
     [("l0_exact_match", 35, "calls with an L0 exact hit: 1"),
      ("all_tool_calls_failed", -20, "failed tool calls: 1 of 1")]),
    ("one_success_one_failure", "SUCCESS", [OK, BAD], 30,
     [("has_successful_tool_call", 30, "successful tool calls: 1")]),
    ("L1_hit_and_a_miss_is_not_no_hit", "SUCCESS", [L1, MISS], 50,
     [("has_successful_tool_call", 30, "successful tool calls: 2"),
      ("l1_semantic_match", 20, "calls with an L1 semantic hit: 1 (no L0 hit)")]),
    ("L0_level_with_zero_hits_is_no_hit", "SUCCESS", [ToolCallFact("completed", "L0", 0, True)], 20,
     [("has_successful_tool_call", 30, "successful tool calls: 1"),
      ("retrieval_no_hit", -10, "retrieval calls without a hit: 1")]),
    ("L0_level_with_unknown_count_is_a_hit", "SUCCESS",
     [ToolCallFact("completed", "L0", None, True)], 65,
     [("has_successful_tool_call", 30, "successful tool calls: 1"),
      ("l0_exact_match", 35, "calls with an L0 exact hit: 1")]),
    ("hits_without_level_are_neither_L0_nor_L1", "SUCCESS",
     [ToolCallFact("completed", None, 5, True)], 30,
     [("has_successful_tool_call", 30, "successful tool calls: 1")]),
    ("evidence_refs_only_makes_a_retrieval_call", "SUCCESS",
     [ToolCallFact("completed", None, None, True)], 20,
     [("has_successful_tool_call", 30, "successful tool calls: 1"),
      ("retrieval_no_hit", -10, "retrieval calls without a hit: 1")]),
    ("started_and_failed_is_not_all_failed", "SUCCESS", [OPEN, BAD], 0, []),
    ("started_call_with_L0_facts", "SUCCESS", [ToolCallFact("started", "L0", 3, True)], 35,
     [("l0_exact_match", 35, "calls with an L0 exact hit: 1")]),
    ("mixed_run_counts_every_call", "SUCCESS", [L0, L0, L1, L1, L1, BAD, OK, OK, OK, OK], 65,
     [("has_successful_tool_call", 30, "successful tool calls: 9"),
      ("l0_exact_match", 35, "calls with an L0 exact hit: 2")]),
    ("single_non_retrieval_success", "SUCCESS", [OK], 30,
     [("has_successful_tool_call", 30, "successful tool calls: 1")]),
    ("several_misses", "SUCCESS", [MISS, MISS, MISS], 20,
     [("has_successful_tool_call", 30, "successful tool calls: 3"),
      ("retrieval_no_hit", -10, "retrieval calls without a hit: 3")]),
]


@pytest.mark.parametrize(("status", "calls", "score", "factors"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_evidence_score_table(status, calls, score, factors):
    result = score_evidence(status, calls)
    assert result == {
        "evidence_score": score,
        "source": "rule",
        "factors": [{"name": n, "delta": d, "description": desc} for n, d, desc in factors],
    }


def test_evidence_score_running_run_is_not_scored():
    assert score_evidence("RUNNING", [OK, L0]) is None


def test_evidence_rules_are_in_spec_order_and_registered_by_name():
    assert [r.name for r in RULES] == [
        "execution_failed", "no_tool_call", "has_successful_tool_call", "l0_exact_match",
        "l1_semantic_match", "retrieval_no_hit", "all_tool_calls_failed"]
    assert {name: rule.delta for name, rule in RULES_BY_NAME.items()} == {
        "execution_failed": 0, "no_tool_call": 0, "has_successful_tool_call": 30,
        "l0_exact_match": 35, "l1_semantic_match": 20, "retrieval_no_hit": -10,
        "all_tool_calls_failed": -20}


def test_evidence_score_accepts_a_chosen_rule_subset():
    """Rules can be picked by name from the registry (STYLE 7.5)."""
    rules = (RULES_BY_NAME["has_successful_tool_call"], RULES_BY_NAME["l1_semantic_match"])
    assert score_evidence("SUCCESS", [L1])["evidence_score"] == 50
    assert score_evidence("SUCCESS", [L1, L0], rules)["evidence_score"] == 30


facts = st.builds(
    ToolCallFact,
    status=st.sampled_from(["started", "completed", "failed"]),
    match_level=st.sampled_from([None, "L0", "L1"]),
    hit_count=st.one_of(st.none(), st.integers(min_value=0, max_value=50)),
    retrieval=st.booleans(),
)
statuses = st.sampled_from(["SUCCESS", "FAILED"])


@given(statuses, st.lists(facts, max_size=30))
def test_evidence_score_stays_within_0_and_100(status, calls):
    result = score_evidence(status, calls)
    assert 0 <= result["evidence_score"] <= 100
    names = [f["name"] for f in result["factors"]]
    assert not ("l0_exact_match" in names and "l1_semantic_match" in names)


@given(statuses, st.lists(facts, max_size=30),
       st.sampled_from(["started", "completed", "failed"]),
       st.one_of(st.none(), st.integers(min_value=1, max_value=50)))
def test_evidence_score_adding_an_L0_hit_never_lowers_it(status, calls, call_status, hits):
    before = score_evidence(status, calls)["evidence_score"]
    after = score_evidence(status, calls + [ToolCallFact(call_status, "L0", hits, True)])
    assert after["evidence_score"] >= before


@given(statuses, st.lists(facts, max_size=30), st.randoms(use_true_random=False))
def test_evidence_score_ignores_the_order_of_tool_calls(status, calls, rnd):
    shuffled = list(calls)
    rnd.shuffle(shuffled)
    assert score_evidence(status, shuffled) == score_evidence(status, calls)


def test_only_the_two_zero_score_rules_stop():
    # SPEC 5.1: execution_failed and no_tool_call are "score 0, stop"; the rest add.
    assert {name: rule.stop for name, rule in RULES_BY_NAME.items()} == {
        "execution_failed": True, "no_tool_call": True, "has_successful_tool_call": False,
        "l0_exact_match": False, "l1_semantic_match": False, "retrieval_no_hit": False,
        "all_tool_calls_failed": False}


def test_a_table_whose_sum_leaves_0_to_100_is_clamped():
    """SPEC 5.1: "clamp to [0, 100]" (the spec's own table never leaves the range)."""
    stats = call_stats("SUCCESS", [OK])
    up = Rule("up", lambda s: True, 150, lambda s: "up")
    down = Rule("down", lambda s: True, -150, lambda s: "down")
    assert evaluate_stats(stats, (up,))["evidence_score"] == 100
    assert evaluate_stats(stats, (up, down, down))["evidence_score"] == 0
    assert evaluate_stats(stats, (up, down))["evidence_score"] == 0
    assert evaluate_stats(stats, (down, up))["factors"] == [
        {"name": "down", "delta": -150, "description": "down"},
        {"name": "up", "delta": 150, "description": "up"}]


def test_every_call_failed_needs_at_least_one_call():
    rule = (RULES_BY_NAME["all_tool_calls_failed"],)
    assert evaluate_stats(call_stats("SUCCESS", []), rule)["factors"] == []
    assert [f["name"] for f in evaluate_stats(call_stats("SUCCESS", [BAD]), rule)["factors"]] == [
        "all_tool_calls_failed"]


def test_call_stats_counts_each_kind_once():
    calls = [OK, BAD, OPEN, L0, L1, MISS, ToolCallFact("failed", None, 3, True),
             ToolCallFact("completed", "L0", 0, True), ToolCallFact("completed", None, None, True),
             ToolCallFact("started", "L1", None, False), ("completed", "L2", None, False)]
    assert call_stats("SUCCESS", calls) == CallStats(
        status="SUCCESS", total=11, completed=7, failed=2,
        # retrieval: L0, L1, MISS, failed 3 hits, L0 with 0 hits, the flagged one, started L1, L2
        retrieval=8,
        # with a hit: L0, L1, the 3 hits, started L1 (unknown count is trusted)
        retrieval_with_hit=4, l0_hits=1, l1_hits=2)
