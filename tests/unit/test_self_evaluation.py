"""self_evaluation keys: legacy wrapping, tolerant reads, one-key merge (SPEC 5)."""

from __future__ import annotations

import pytest

from reviewapp.domain.self_evaluation import (
    COLUMN_OF_KEY,
    app_owned_keys,
    evidence_score_of,
    imported_evaluations,
    merge_key,
    read_self_evaluation,
    verifier_verdict_of,
)
from reviewapp.models import Run

RULE_ROOT = {"evidence_score": 65, "source": "rule", "factors": [{"name": "l0_exact_match"}]}
VERIFIER_ROOT = {"verdict": "PASS", "groundedness_score": 0.8, "rationale": "ok"}


@pytest.mark.parametrize("value", [None, "text", 42, [], {}])
def test_read_self_evaluation_tolerates_null_and_junk(value):
    assert read_self_evaluation(value) == {}


def test_read_wraps_an_evidence_score_root_into_rule_evaluation():
    assert read_self_evaluation(RULE_ROOT) == {"rule_evaluation": RULE_ROOT}


@pytest.mark.parametrize(
    "root", [VERIFIER_ROOT, {"groundedness_score": 0.3}, {"verdict": "REJECT"}])
def test_read_wraps_a_verdict_or_groundedness_root_into_verifier_evaluation(root):
    assert read_self_evaluation(root) == {"verifier_evaluation": root}


def test_read_splits_a_root_with_both_rule_and_verifier_fields():
    root = {**RULE_ROOT, **VERIFIER_ROOT}
    assert read_self_evaluation(root) == {"rule_evaluation": RULE_ROOT,
                                          "verifier_evaluation": VERIFIER_ROOT}


def test_read_keeps_keyed_values_and_prefers_them_over_flat_fields():
    value = {"rule_evaluation": {"evidence_score": 30}, "evidence_score": 99,
             "verifier_evaluation": "not an object"}
    assert read_self_evaluation(value) == {"rule_evaluation": {"evidence_score": 30}}


def test_merge_key_replaces_one_key_and_keeps_the_others():
    current = {"rule_evaluation": {"evidence_score": 30}, "verifier_evaluation": VERIFIER_ROOT,
               "future_key": {"x": 1}}
    merged = merge_key(current, "aiops_rule_evaluation", {"verdict": "PASS"})
    assert merged == {**current, "aiops_rule_evaluation": {"verdict": "PASS"}}
    assert merge_key(merged, "rule_evaluation", None) == {
        "verifier_evaluation": VERIFIER_ROOT, "future_key": {"x": 1},
        "aiops_rule_evaluation": {"verdict": "PASS"}}


def test_merge_key_wraps_a_legacy_root_first():
    assert merge_key(VERIFIER_ROOT, "rule_evaluation", {"evidence_score": 0}) == {
        "verifier_evaluation": VERIFIER_ROOT, "rule_evaluation": {"evidence_score": 0}}


def test_merge_key_rejects_unknown_keys():
    with pytest.raises(ValueError):
        merge_key({}, "llm_opinion", {})


def test_imported_evaluations_wraps_legacy_roots_and_ignores_nulls():
    assert imported_evaluations({"self_evaluation": VERIFIER_ROOT}) == {
        "verifier_evaluation": VERIFIER_ROOT}
    assert imported_evaluations({"self_evaluation": RULE_ROOT, "aiops_rule_evaluation": None}) == {
        "rule_evaluation": {"evidence_score": 65, "source": "rule", "factors": [
            {"name": "l0_exact_match", "delta": 0, "description": ""}]}}
    assert imported_evaluations({"self_evaluation": None}) == {}


def test_imported_evaluations_top_level_keys_win_and_gatekeeper_is_never_imported():
    doc = {"self_evaluation": {"verifier_evaluation": {"verdict": "REJECT"},
                               "citation_gatekeeper": {"verified": 99}},
           "verifier_evaluation": {"verdict": "PASS"}}
    assert imported_evaluations(doc) == {"verifier_evaluation": {"verdict": "PASS"}}


@pytest.mark.parametrize(("status", "kind", "keys"), [
    ("RUNNING", "chat", {"citation_gatekeeper"}),
    ("RUNNING", "aiops", {"citation_gatekeeper"}),
    ("SUCCESS", "chat", {"citation_gatekeeper", "rule_evaluation"}),
    ("FAILED", "aiops", {"citation_gatekeeper", "rule_evaluation", "aiops_rule_evaluation"}),
])
def test_app_owned_keys_follow_status_and_kind(status, kind, keys):
    assert app_owned_keys(status, kind) == keys


@pytest.mark.parametrize(("value", "score"), [
    ({"evidence_score": 65}, 65), ({"evidence_score": 140}, 100), ({"evidence_score": -3}, 0),
    ({"evidence_score": True}, None), ({"evidence_score": "65"}, None), (None, None), ({}, None)])
def test_evidence_score_column_copy(value, score):
    assert evidence_score_of(value) == score


@pytest.mark.parametrize(("value", "verdict"), [
    ({"verdict": "PASS"}, "PASS"), ({"verdict": "LOW_CONFID"}, "LOW_CONFID"),
    ({"verdict": "MAYBE"}, None), ({"verdict": 1}, None), (None, None)])
def test_verifier_verdict_column_copy(value, verdict):
    assert verifier_verdict_of(value) == verdict


def test_a_split_root_sends_every_rule_field_to_rule_evaluation():
    root = {"evidence_score": 40, "source": "rule", "factors": [], "llm_opinion": "thin",
            "verdict": "FAIL", "rationale": "no logs"}
    assert read_self_evaluation(root) == {
        "rule_evaluation": {"evidence_score": 40, "source": "rule", "factors": [],
                            "llm_opinion": "thin"},
        "verifier_evaluation": {"verdict": "FAIL", "rationale": "no logs"}}


def test_a_legacy_field_holding_an_object_is_still_a_legacy_root():
    assert read_self_evaluation({"verdict": {"label": "PASS"}}) == {
        "verifier_evaluation": {"verdict": {"label": "PASS"}}}
    assert read_self_evaluation({"evidence_score": {"v": 1}}) == {
        "rule_evaluation": {"evidence_score": {"v": 1}}}


def test_a_keyed_entry_that_is_not_an_object_is_dropped():
    assert read_self_evaluation({"rule_evaluation": None}) == {}
    assert read_self_evaluation({"rule_evaluation": [1], "verifier_evaluation": {"v": 1}}) == {
        "verifier_evaluation": {"v": 1}}


def test_each_copied_key_names_its_run_list_column():
    assert COLUMN_OF_KEY == {
        "rule_evaluation": ("evidence_score", evidence_score_of),
        "verifier_evaluation": ("verifier_verdict", verifier_verdict_of)}
    assert {column for column, _ in COLUMN_OF_KEY.values()} <= set(Run.__table__.columns.keys())


@pytest.mark.parametrize(("sent", "stored"), [
    # SPEC 5.1: the evidence score is an integer 0-100; the trace API publishes it so.
    ({"evidence_score": 1.805883924261248e-214}, {"evidence_score": 0, "source": "rule",
                                                  "factors": []}),
    ({"evidence_score": 250, "factors": "many"}, {"evidence_score": 100, "source": "rule",
                                                  "factors": []}),
    ({"evidence_score": 42.9, "source": "agent", "factors": [
        {"name": "x", "delta": 5, "description": "d"}, "junk", {"delta": 2.5}]},
     {"evidence_score": 42, "source": "rule", "factors": [
         {"name": "x", "delta": 5, "description": "d"},
         {"name": "", "delta": 2, "description": ""}]}),
    ({"evidence_score": 7, "factors": [{"name": "n", "delta": float("inf")}]},
     {"evidence_score": 7, "source": "rule", "factors": [
         {"name": "n", "delta": 0, "description": ""}]}),
])
def test_an_imported_rule_evaluation_is_stored_in_the_published_shape(sent, stored):
    assert imported_evaluations({"rule_evaluation": sent}) == {"rule_evaluation": stored}


@pytest.mark.parametrize("score", [None, "65", True, [65], float("nan"), float("inf")])
def test_an_imported_rule_evaluation_without_a_numeric_score_is_not_stored(score):
    assert imported_evaluations({"rule_evaluation": {"evidence_score": score}}) == {}
