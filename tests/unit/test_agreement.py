"""Agreement statistics (issue 16) against worked examples computed by hand."""

from __future__ import annotations

import dataclasses
import math
import random

import pytest

from reviewapp.domain.agreement import (
    PairAgreement,
    ReviewerAgreement,
    cohen_kappa,
    kappa_from_matrix,
    krippendorff_alpha,
    roc_auc,
    roc_auc_from_counts,
    strict_majority,
    summarise,
)
from reviewapp.services.agreement import DEFAULT_MIN_SHARED


def _pairs(table: dict[tuple[str, str], int]) -> list[tuple[str, str]]:
    return [pair for pair, n in table.items() for _ in range(n)]


# The classic 2x2 example (Wikipedia "Cohen's kappa", 50 proposals read by two editors):
# both yes 20, A yes / B no 5, A no / B yes 10, both no 15.
# p_o = 35/50 = 0.7; p_yes = 0.5 * 0.6 = 0.3; p_no = 0.5 * 0.4 = 0.2; p_e = 0.5;
# kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
CLASSIC = {("yes", "yes"): 20, ("yes", "no"): 5, ("no", "yes"): 10, ("no", "no"): 15}


def test_cohen_kappa_classic_table():
    assert cohen_kappa(_pairs(CLASSIC)) == pytest.approx(0.4)
    assert kappa_from_matrix(CLASSIC) == pytest.approx(0.4)


def test_cohen_kappa_three_categories():
    # Hand-computed: n = 10, diagonal 2 + 2 + 3 = 7 -> p_o = 0.7.
    # A's margins a:3 b:3 c:4, B's margins a:2 b:4 c:4
    # p_e = (3*2 + 3*4 + 4*4) / 100 = 34 / 100 = 0.34
    # kappa = (0.7 - 0.34) / 0.66 = 0.545454...
    table = {("a", "a"): 2, ("a", "b"): 1, ("b", "b"): 2, ("b", "c"): 1,
             ("c", "b"): 1, ("c", "c"): 3}
    assert cohen_kappa(_pairs(table)) == pytest.approx(0.36 / 0.66)
    assert kappa_from_matrix(table) == pytest.approx(0.36 / 0.66)


def test_cohen_kappa_edges():
    assert cohen_kappa([]) is None
    assert kappa_from_matrix({}) is None
    # One category throughout: p_e = 1, kappa undefined (not 1, not 0).
    assert cohen_kappa([("yes", "yes")] * 4) is None
    # Perfect agreement over two categories is 1; perfect disagreement with balanced
    # margins is -1 (p_o = 0, p_e = 0.5).
    assert cohen_kappa([("y", "y"), ("n", "n")]) == pytest.approx(1.0)
    assert cohen_kappa([("y", "n"), ("n", "y")]) == pytest.approx(-1.0)


def test_krippendorff_alpha_textbook_example_with_missing_ratings():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C:
    # 4 observers, 12 units, missing values; nominal alpha = 0.743.
    rows = {
        "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    }
    ratings = {u: {r: v[u] for r, v in rows.items() if v[u] is not None} for u in range(12)}
    assert krippendorff_alpha(ratings) == pytest.approx(0.743, abs=0.0005)


def test_krippendorff_alpha_small_binary_by_hand():
    # Units: u1 {A:+, B:+}, u2 {A:+, B:-}, u3 {A:-, B:-, C:-}, u4 {A:+} (not pairable).
    # Coincidences (each unit weighs 1/(m_u - 1)):
    #   u1: (+,+) 2;  u2: (+,-) 1, (-,+) 1;  u3: (-,-) 6 * 1/2 = 3.
    # n_+ = 2 + 1 = 3, n_- = 1 + 3 = 4, n = 7.
    # D_o = (o_+- + o_-+) / n = 2/7; D_e = 2 * n_+ * n_- / (n (n - 1)) = 24/42 = 4/7.
    # alpha = 1 - D_o / D_e = 1 - (2/7) / (4/7) = 0.5.
    ratings = {"u1": {"A": "+", "B": "+"}, "u2": {"A": "+", "B": "-"},
               "u3": {"A": "-", "B": "-", "C": "-"}, "u4": {"A": "+"}}
    assert krippendorff_alpha(ratings) == pytest.approx(0.5)


def test_krippendorff_alpha_undefined():
    assert krippendorff_alpha({}) is None
    assert krippendorff_alpha({"u": {"A": "+"}}) is None
    assert krippendorff_alpha({"u": {"A": "+", "B": "+"}, "v": {"A": "+", "B": "+"}}) is None
    # Two categories exist, but only on an item nobody else rated: nothing pairable varies.
    assert krippendorff_alpha({"u": {"A": "+", "B": "+"}, "v": {"A": "-"}}) is None


def test_strict_majority():
    assert strict_majority(["+", "+", "-"]) == "+"
    assert strict_majority(["+", "-"]) is None
    assert strict_majority([]) is None
    assert strict_majority(["-"]) == "-"


def test_summarise_by_hand():
    ratings = {
        1: {"ann": "+", "bob": "+", "cy": "-"},
        2: {"ann": "+", "bob": "-"},
        3: {"ann": "-", "bob": "-", "cy": "-"},
        4: {"ann": "+", "bob": "+"},
        5: {"cy": "+"},
    }
    s = summarise(ratings, min_shared=3)
    assert (s.items, s.multi_rated, s.ratings) == (5, 4, 11)
    pairs = {(p.first, p.second): p for p in s.pairs}
    ab = pairs[("ann", "bob")]
    # ann/bob share items 1-4: (+,+) (+,-) (-,-) (+,+): p_o = 3/4;
    # ann + 3/4, bob + 2/4: p_e = 3/4*2/4 + 1/4*2/4 = 8/16 = 0.5; kappa = 0.25/0.5 = 0.5.
    assert (ab.shared, ab.agreed, ab.enough) == (4, 3, True)
    assert ab.kappa == pytest.approx(0.5)
    ac = pairs[("ann", "cy")]
    assert (ac.shared, ac.agreed, ac.enough, ac.kappa) == (2, 1, False, None)
    assert ("bob", "cy") in pairs
    assert s.pairs[0].first == "ann" and s.pairs[0].second == "bob"  # most shared first
    people = {r.reviewer: r for r in s.reviewers}
    # ann: item 1 others (+,-) tie -> not counted; item 2 others (-) -> disagree;
    # item 3 others (-,-) -> agree; item 4 others (+) -> agree. 2 of 3.
    assert (people["ann"].rated, people["ann"].with_majority, people["ann"].agreed) == (4, 3, 2)
    # cy: item 1 others (+,+) -> disagree; item 3 (-,-) -> agree; item 5 none. 1 of 2.
    assert (people["cy"].rated, people["cy"].with_majority, people["cy"].agreed) == (3, 2, 1)
    assert people["cy"].rate == pytest.approx(0.5)
    with pytest.raises(ValueError):
        summarise(ratings, min_shared=0)


def test_roc_auc_by_hand():
    # positives 3, 5, 5; negatives 1, 5. Pairs (pos > neg = 1, tie = 1/2):
    # 3: >1 (1), <5 (0)   -> 1
    # 5: >1 (1), =5 (1/2) -> 1.5, twice -> 3
    # AUC = 4 / 6.
    assert roc_auc([3, 5, 5], [1, 5]) == pytest.approx(4 / 6)
    assert roc_auc_from_counts({1: (0, 1), 3: (1, 0), 5: (2, 1)}) == pytest.approx(4 / 6)
    assert roc_auc([30] * 5, [30] * 7) == pytest.approx(0.5)  # one score for all: chance
    assert roc_auc([2], [1]) == 1.0 and roc_auc([1], [2]) == 0.0
    assert roc_auc([], [1]) is None and roc_auc_from_counts({1: (3, 0)}) is None


def test_roc_auc_matches_the_pair_definition():
    rng = random.Random(16)
    for _ in range(50):
        pos = [rng.randint(0, 10) for _ in range(rng.randint(1, 15))]
        neg = [rng.randint(0, 10) for _ in range(rng.randint(1, 15))]
        brute = sum(1.0 if p > q else 0.5 if p == q else 0.0 for p in pos for q in neg)
        expected = brute / (len(pos) * len(neg))
        assert math.isclose(roc_auc(pos, neg), expected)
        counts: dict[int, tuple[int, int]] = {}
        for s in set(pos) | set(neg):
            counts[s] = (pos.count(s), neg.count(s))
        assert math.isclose(roc_auc_from_counts(counts), expected)


def test_krippendorff_alpha_with_exactly_two_reviewers_by_hand():
    # Coincidences: a-a 2, a-b 1, b-a 1, b-b 4; n_a = 3, n_b = 5, n = 8.
    # D_o = 2/8, D_e = 2*3*5/(8*7) = 30/56, alpha = 1 - (2/8)/(30/56) = 8/15.
    ratings = {1: {"r1": "a", "r2": "a"}, 2: {"r1": "a", "r2": "b"},
               3: {"r1": "b", "r2": "b"}, 4: {"r1": "b", "r2": "b"}}
    assert krippendorff_alpha(ratings) == pytest.approx(8 / 15)


def test_kappa_when_one_reviewer_uses_a_category_the_other_never_does():
    # ann: a, b; bob: a, a. p_o = 1/2; p_e = (1/2 * 2/2) + (1/2 * 0/2) = 1/2; kappa = 0.
    assert cohen_kappa([("a", "a"), ("b", "a")]) == pytest.approx(0.0)
    assert kappa_from_matrix({("a", "a"): 1, ("b", "a"): 1}) == pytest.approx(0.0)
    # Never the same category: p_o = 0, p_e = 0, kappa = 0 (defined, not None).
    assert kappa_from_matrix({("a", "b"): 2}) == 0.0
    assert cohen_kappa([("a", "b"), ("a", "b")]) == 0.0
    # Both always "a": p_e = 1, kappa undefined.
    assert kappa_from_matrix({("a", "a"): 3}) is None


def test_a_pair_with_exactly_the_minimum_shared_items_gets_its_kappa():
    ratings = {i: {"ann": v, "bob": w} for i, (v, w) in enumerate(
        [("+", "+"), ("+", "-"), ("-", "-"), ("-", "-")])}
    pair = summarise(ratings, min_shared=4).pairs[0]
    # p_o = 3/4; ann + 1/2, bob + 1/4: p_e = 1/8 + 3/8 = 1/2; kappa = (3/4 - 1/2) / (1/2) = 1/2.
    assert (pair.shared, pair.enough, pair.observed) == (4, True, 0.75)
    assert pair.kappa == pytest.approx(0.5)
    assert summarise(ratings, min_shared=5).pairs[0].kappa is None
    assert summarise(ratings, min_shared=1).min_shared == 1
    with pytest.raises(ValueError, match="^min_shared must be at least 1$"):
        summarise(ratings, min_shared=0)


def test_the_default_minimum_is_the_agreement_pages():
    assert summarise({}).min_shared == DEFAULT_MIN_SHARED
    assert PairAgreement("a", "b", 0, 0, None, False).observed is None


@pytest.mark.parametrize("row", [PairAgreement("a", "b", 1, 1, None, False),
                                 ReviewerAgreement("a", 1, 0, 0), summarise({})])
def test_the_figures_cannot_be_changed(row):
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.first = "x"


def test_agreement_with_decisions_by_hand():
    from reviewapp.domain.agreement import DecisionAgreement, decision_agreement

    ratings = {
        1: {"ann": "positive", "bob": "negative"},   # decided useful: ann agrees
        2: {"ann": "positive", "bob": "negative"},   # decided not_useful: bob agrees
        3: {"ann": "negative", "bob": "negative", "cy": "positive"},  # not_useful: ann, bob
        4: {"ann": "positive", "cy": "negative"},    # no decision: does not count
    }
    decisions = {1: "useful", 2: "not_useful", 3: "not_useful", 9: "useful"}
    got = decision_agreement(ratings, decisions, {"useful": "positive", "not_useful": "negative"})
    # ann: items 1, 2, 3 -> agrees on 1 and 3 = 2/3; bob: 1, 2, 3 -> 2 and 3 = 2/3;
    # cy: item 3 only -> 0/1.
    assert got == [DecisionAgreement("ann", 3, 2), DecisionAgreement("bob", 3, 2),
                   DecisionAgreement("cy", 1, 0)]
    assert got[0].rate == 2 / 3 and got[2].rate == 0.0
    assert DecisionAgreement("dee", 0, 0).rate is None


def test_a_decision_agreement_row_cannot_be_changed():
    import dataclasses

    from reviewapp.domain.agreement import DecisionAgreement

    row = DecisionAgreement("ann", 3, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.agreed = 3
    assert (row.agreed, row.rate) == (2, 2 / 3)
