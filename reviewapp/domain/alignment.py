"""The automatic signals a lead can hold against people's verdicts (issue 16 "How well
the automatic evaluation agrees with people", S001 §10.6), one registry row each, and
the rule that turns a signal's value into the verdict it stands for. Pure: stdlib only.

A signal *predicts* ``useful`` or ``not_useful`` (SPEC 6.2 verdict codes); a value no
mapping names (an unknown external outcome, a missing verdict) predicts nothing and the
run counts as "no signal" — it stays in the confusion matrix but not in κ.

* ``evidence_score`` (``rule_evaluation``, S001 §4, 0-100): useful when the score is at
  least the report's threshold (default ``DEFAULT_THRESHOLD``); its own figure is the
  threshold-free ROC AUC of score -> useful;
* ``verifier_verdict`` (SPEC 5): PASS -> useful; LOW_CONFID and REJECT -> not useful (the
  verifier did not vouch for the answer);
* ``aiops_verdict`` (``aiops_rule_evaluation.verdict``, SPEC 5.3): PASS -> useful; WARN
  and FAIL -> not useful;
* ``external_outcome`` (a benchmark's own label, e.g. tau-bench reward, compared
  case-insensitively): pass / passed / success -> useful; fail / failed / failure ->
  not useful.
"""

from __future__ import annotations

from dataclasses import dataclass

from .verdicts import VERDICTS, VERIFIER_VERDICTS, VerifierVerdictRow
from .vocabulary import Registry

USEFUL, NOT_USEFUL = VERDICTS.codes()
DEFAULT_THRESHOLD = 50
NO_VALUE = "none"


@dataclass(frozen=True)
class SignalRow:
    """One signal: ``code``; ``label`` as shown; ``useful`` / ``not_useful`` the values
    (lower case for ``case_insensitive`` signals) that predict each verdict; ``values``
    the order the confusion matrix lists them in (other values follow, sorted);
    ``scored``: the value is a 0-100 score compared with a threshold instead;
    ``names``: the registry that labels the values (the verifier's), if any."""

    code: str
    label: str
    useful: tuple[str, ...] = ()
    not_useful: tuple[str, ...] = ()
    case_insensitive: bool = False
    scored: bool = False
    names: Registry[VerifierVerdictRow] | None = None

    @property
    def values(self) -> tuple[str, ...]:
        return self.useful + self.not_useful

    def value_text(self, value: str) -> str:
        """How a value reads: its label in ``names`` ("Low confidence"), else itself."""
        return self.names.label(value) if self.names is not None and value in self.names else value

    def mapping_text(self, threshold: int = DEFAULT_THRESHOLD, *, labelled: bool = False) -> str:
        """How values predict a verdict ("PASS → useful; ..."); ``labelled``: the values
        as people read them (``value_text``: "Pass → useful; ..."), for the page."""
        if self.scored:
            return f"score ≥ {threshold} → useful; below → not useful"
        read = self.value_text if labelled else str
        return (f"{', '.join(map(read, self.useful))} → useful; "
                f"{', '.join(map(read, self.not_useful))} → not useful; anything else: no prediction")


SIGNALS: Registry[SignalRow] = Registry("signal", (
    SignalRow("evidence_score", "Evidence score", scored=True),
    SignalRow("verifier_verdict", "Verifier verdict", ("PASS",), ("LOW_CONFID", "REJECT"),
              names=VERIFIER_VERDICTS),
    SignalRow("aiops_verdict", "AIOps rule verdict", ("PASS",), ("WARN", "FAIL")),
    SignalRow("external_outcome", "External outcome", ("pass", "passed", "success"),
              ("fail", "failed", "failure"), case_insensitive=True),
))


def predicted(row: SignalRow, value: str | int | None,
              threshold: int = DEFAULT_THRESHOLD) -> str | None:
    """The verdict ``value`` of signal ``row`` stands for, or ``None`` (no prediction)."""
    if value is None:
        return None
    if row.scored:
        return USEFUL if int(value) >= threshold else NOT_USEFUL
    text = str(value).lower() if row.case_insensitive else str(value)
    if text in row.useful:
        return USEFUL
    if text in row.not_useful:
        return NOT_USEFUL
    return None


SCORE_BANDS: tuple[tuple[str, int, int], ...] = tuple(
    (f"{low}–{low + 9}" if low < 90 else "90–100", low, low + 9 if low < 90 else 100)
    for low in range(0, 100, 10))
"""(label, lowest, highest) score of each band, inclusive: the dashboard's histogram bands."""


def score_band(score: int) -> int:
    """The index in ``SCORE_BANDS`` of a 0-100 score (out-of-range scores are clamped)."""
    return max(0, min(9, int(score) // 10))
