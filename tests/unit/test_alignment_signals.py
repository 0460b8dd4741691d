"""The signal registry's predictions (issue 16)."""

from __future__ import annotations

import dataclasses

import pytest

from reviewapp.domain.alignment import SCORE_BANDS, SIGNALS, predicted, score_band
from reviewapp.domain.vocabulary import UnknownValue


def test_predictions():
    score, verifier, aiops, outcome = (SIGNALS.get(c) for c in (
        "evidence_score", "verifier_verdict", "aiops_verdict", "external_outcome"))
    assert [predicted(score, v, 50) for v in (49, 50, 100, 0, None)] == [
        "not_useful", "useful", "useful", "not_useful", None]
    assert [predicted(verifier, v) for v in ("PASS", "LOW_CONFID", "REJECT", "pass", None)] == [
        "useful", "not_useful", "not_useful", None, None]
    assert [predicted(aiops, v) for v in ("PASS", "WARN", "FAIL")] == [
        "useful", "not_useful", "not_useful"]
    assert [predicted(outcome, v) for v in ("Pass", "FAIL", "success", "timeout")] == [
        "useful", "not_useful", "useful", None]
    assert "PASS → useful" in verifier.mapping_text()
    assert "≥ 70" in score.mapping_text(70)


def test_score_bands_cover_0_to_100_once():
    covered = [score_band(s) for s in range(101)]
    for index, (_, low, high) in enumerate(SCORE_BANDS):
        assert [s for s in range(101) if covered[s] == index] == list(range(low, high + 1))
    assert score_band(-5) == 0 and score_band(130) == 9


def test_score_bands_are_the_ten_bands_of_ten_with_the_last_closed_at_100():
    # Written out by hand: 0-9, 10-19, ..., 80-89, then 90-100 (a score of 100 has a band).
    expected = [("0–9", 0, 9), ("10–19", 10, 19), ("20–29", 20, 29), ("30–39", 30, 39),
                ("40–49", 40, 49), ("50–59", 50, 59), ("60–69", 60, 69), ("70–79", 70, 79),
                ("80–89", 80, 89), ("90–100", 90, 100)]
    assert list(SCORE_BANDS) == expected


def test_external_outcome_words_in_any_case():
    for word in ("pass", "PASSED", "Success"):
        assert predicted(SIGNALS.get("external_outcome"), word) == "useful"
    for word in ("fail", "Failed", "FAILURE"):
        assert predicted(SIGNALS.get("external_outcome"), word) == "not_useful"


def test_by_default_a_score_of_half_or_more_predicts_useful():
    score = SIGNALS.get("evidence_score")
    assert [predicted(score, v) for v in (49, 50)] == ["not_useful", "useful"]
    assert score.mapping_text() == "score ≥ 50 → useful; below → not useful"


def test_the_signals_read_as_the_alignment_page_shows_them():
    assert SIGNALS.choices() == (
        ("evidence_score", "Evidence score"), ("verifier_verdict", "Verifier verdict"),
        ("aiops_verdict", "AIOps rule verdict"), ("external_outcome", "External outcome"))
    verifier, outcome = SIGNALS.get("verifier_verdict"), SIGNALS.get("external_outcome")
    assert verifier.values == ("PASS", "LOW_CONFID", "REJECT")
    assert verifier.mapping_text() == (
        "PASS → useful; LOW_CONFID, REJECT → not useful; anything else: no prediction")
    assert outcome.mapping_text() == ("pass, passed, success → useful; fail, failed, failure → "
                                      "not useful; anything else: no prediction")
    with pytest.raises(UnknownValue) as error:
        SIGNALS.get("latency")
    assert error.value.name == "signal"
    with pytest.raises(dataclasses.FrozenInstanceError):
        verifier.useful = ()


def test_the_rule_reads_in_the_verifiers_labels_for_people():
    verifier, outcome = SIGNALS.get("verifier_verdict"), SIGNALS.get("external_outcome")
    assert verifier.mapping_text(labelled=True) == (
        "Pass → useful; Low confidence, Reject → not useful; anything else: no prediction")
    assert [verifier.value_text(v) for v in ("LOW_CONFID", "WEIRD")] == ["Low confidence", "WEIRD"]
    assert outcome.mapping_text(labelled=True) == outcome.mapping_text()  # no registry: as sent
    assert SIGNALS.get("evidence_score").mapping_text(70, labelled=True) == (
        "score ≥ 70 → useful; below → not useful")


def test_a_run_without_a_value_is_the_none_row():
    """The matrix row of runs without a value reads "none" on the page and in the
    downloads' ``value`` column (the services test counts the rows under it)."""
    from reviewapp.domain.alignment import NO_VALUE

    assert NO_VALUE == "none"
