"""The verdict from several reviewers (issue 16): majority, ties and "needs a decision",
each case worked out by hand."""

from __future__ import annotations

import pytest

from reviewapp.domain.consensus import DISPUTE_RULES, Consensus, consensus
from reviewapp.domain.vocabulary import UnknownValue

P, N = "positive", "negative"


@pytest.mark.parametrize(("ratings", "needed", "rule", "expected"), [
    # Fewer ratings than reviewers per run: nothing follows yet.
    ([], 2, "tie", Consensus("pending", None, 0, 0)),
    ([P], 2, "tie", Consensus("pending", None, 1, 0)),
    ([P, N], 3, "any_split", Consensus("pending", None, 1, 1)),
    # N = 1: the one rating decides.
    ([N], 1, "tie", Consensus("verdict", "not_useful", 0, 1)),
    ([P], 1, "any_split", Consensus("verdict", "useful", 1, 0)),
    # Two agree.
    ([P, P], 2, "tie", Consensus("verdict", "useful", 2, 0)),
    ([N, N], 2, "any_split", Consensus("verdict", "not_useful", 0, 2)),
    # A 1-1 tie is disputed under either rule.
    ([P, N], 2, "tie", Consensus("disputed", None, 1, 1)),
    ([N, P], 2, "any_split", Consensus("disputed", None, 1, 1)),
    # 2 to 1: the majority under "tie", a decision under "any_split".
    ([P, N, P], 3, "tie", Consensus("verdict", "useful", 2, 1)),
    ([N, P, N], 3, "tie", Consensus("verdict", "not_useful", 1, 2)),
    ([P, N, P], 3, "any_split", Consensus("disputed", None, 2, 1)),
    # More ratings than needed: all of them count (3 of 2 needed, 2-1 majority).
    ([N, N, P], 2, "tie", Consensus("verdict", "not_useful", 1, 2)),
    # 2-2 of four is a tie again.
    ([P, P, N, N], 4, "tie", Consensus("disputed", None, 2, 2)),
    ([P, P, P, P, N], 5, "tie", Consensus("verdict", "useful", 4, 1)),
])
def test_consensus(ratings, needed, rule, expected):
    assert consensus(ratings, needed, rule) == expected


def test_the_default_rule_is_tie():
    assert consensus([P, N, P], 3) == Consensus("verdict", "useful", 2, 1)
    assert DISPUTE_RULES.codes() == ("tie", "any_split")


@pytest.mark.parametrize(("ratings", "needed", "rule", "error"), [
    ([P], 0, "tie", ValueError),
    (["maybe"], 1, "tie", UnknownValue),
    ([P], 1, "coin_flip", UnknownValue),
])
def test_bad_input_is_refused(ratings, needed, rule, error):
    with pytest.raises(error):
        consensus(ratings, needed, rule)


def test_the_dispute_rules_as_a_lead_chooses_them_and_the_fields_errors_name():
    assert DISPUTE_RULES.choices() == (
        ("tie", "A tie needs a decision (otherwise the majority decides)"),
        ("any_split", "Any disagreement needs a decision"))
    with pytest.raises(UnknownValue) as error:
        consensus(["positive"], 1, "vote")
    assert error.value.name == "dispute_rule"
    with pytest.raises(UnknownValue) as error:
        consensus(["meh"], 1)
    assert error.value.name == "rating"
    with pytest.raises(ValueError, match="^needed must be at least 1$"):
        consensus([], 0)


def test_a_consensus_and_a_rule_cannot_be_changed():
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        consensus(["positive"], 1).verdict = "not_useful"
    with pytest.raises(dataclasses.FrozenInstanceError):
        DISPUTE_RULES.get("tie").label = "x"


def test_an_unknown_rule_read_through_the_registry_names_the_field():
    with pytest.raises(UnknownValue) as error:
        DISPUTE_RULES.get("vote")
    assert error.value.name == "dispute_rule"
