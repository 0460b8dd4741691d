"""How well the automatic evaluation agrees with people (issue 16, S001 §10.6): for the
runs that carry a human verdict (``run.feedback``, SPEC 6.2: set by reviewers' answer
ratings or the verdict API), one report per automatic signal (``domain/alignment.py``):
its confusion matrix against the verdict, Cohen's κ of the verdict it predicts against
the human one, and the runs where they disagree — the list a lead works through. The
evidence score also gets its score bands with the useful rate of each and the ROC AUC of
score -> useful (``domain/agreement.roc_auc_from_counts``). Tool calls (issue 19) get their
own comparison: "the call failed" (``tool_call_audit.status``) against each reviewer's
rating of the call, "failed" standing for "not helpful".

Access, workspaces and days as the dashboard and the agreement page
(``agreement.lead_workspaces`` / ``run_time_conditions``). The figures come from one
GROUP BY over the judged runs; each signal's disagreements are one counted, limited
query (newest runs first).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from sqlalchemy import String, and_, false, func, or_, select, type_coerce
from sqlalchemy.orm import Session

from ..actors import Actor
from ..domain.agreement import kappa_from_matrix, roc_auc_from_counts
from ..domain.alignment import (
    DEFAULT_THRESHOLD,
    NO_VALUE,
    NOT_USEFUL,
    SCORE_BANDS,
    SIGNALS,
    USEFUL,
    SignalRow,
    predicted,
    score_band,
)
from ..models import Feedback, Run, TargetType, ToolCall, ToolCallStatus
from . import rollups
from .agreement import lead_workspaces, run_time_conditions, with_workspace_id
from .params import choice_param, date_range_params, int_param, workspace_ref

DISAGREEMENTS_SHOWN = 25
TOOL_CALL_SIGNAL = "tool_call_failed"
EXPORT_CAP = 10_000
QUERY_CHARS = 120
MATRIX_COLUMNS = ("signal", "value", "predicts", "useful", "not_useful", "kappa", "auc",
                  "runs")
DISAGREEMENT_COLUMNS = ("signal", "run_pk", "run_id", "signal_value", "predicts",
                        "human_verdict", "query")


@dataclass(frozen=True)
class AlignmentFilters:
    """``workspace_id`` (``None``: every workspace the actor leads), inclusive UTC days,
    ``threshold``: the evidence score (0-100) from which the score predicts useful."""

    workspace_id: int | None = None
    date_from: date | None = None
    date_to: date | None = None
    threshold: int = DEFAULT_THRESHOLD
    workspace_slug: str | None = None  # ``?workspace=demo``; ``build`` sets its id

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> AlignmentFilters:
        """Parse query-string values (the workspace an id or a short name,
        ``params.workspace_ref``). Raises ``ValidationFailed`` naming the field
        (``workspace``, ``date_from``, ``date_to``, ``threshold``)."""
        threshold = int_param(params, "threshold", 0, 100)
        workspace = workspace_ref(params)
        return cls(workspace if isinstance(workspace, int) else None, *date_range_params(params),
                   threshold=DEFAULT_THRESHOLD if threshold is None else threshold,
                   workspace_slug=workspace if isinstance(workspace, str) else None)

    def as_params(self) -> dict[str, str]:
        """The query-string form (blank values left out), for links and exports."""
        params = {"workspace": self.workspace_id or self.workspace_slug, "date_from": self.date_from,
                  "date_to": self.date_to,
                  "threshold": None if self.threshold == DEFAULT_THRESHOLD else self.threshold}
        return {k: str(v) for k, v in params.items() if v is not None}


@dataclass(frozen=True)
class MatrixRow:
    """Runs whose signal has ``value`` (``"none"``: no value), by human verdict;
    ``predicts`` the verdict the value stands for (``None``: no prediction)."""

    value: str
    predicts: str | None
    useful: int
    not_useful: int

    @property
    def runs(self) -> int:
        return self.useful + self.not_useful

    @property
    def useful_rate(self) -> float | None:
        """useful / runs in [0, 1], ``None`` without runs."""
        return self.useful / self.runs if self.runs else None


@dataclass(frozen=True)
class DisagreeingRun:
    """A judged run whose signal predicts the other verdict. ``query`` is the run's
    question cut to ``QUERY_CHARS`` characters (stored redacted; the page escapes it)."""

    run_pk: int
    run_id: str
    signal_value: str
    predicts: str
    human_verdict: str
    query: str


@dataclass(frozen=True)
class SignalReport:
    """One signal against the human verdict.

    ``matrix``: one row per value; ``predicted``: runs whose value predicts a verdict
    (what κ rests on), ``agreed`` of them predict the human verdict; ``kappa`` (``None``:
    undefined); ``disagreements``: the newest ``DISAGREEMENTS_SHOWN`` of the
    ``disagreement_total`` disagreeing runs. Evidence score only: ``bands`` (the matrix by
    score band, unscored runs left out) and ``auc`` over ``auc_useful`` useful and
    ``auc_not_useful`` not-useful scored runs."""

    code: str
    label: str
    mapping: str
    matrix: list[MatrixRow]
    predicted: int
    agreed: int
    kappa: float | None
    disagreements: list[DisagreeingRun]
    disagreement_total: int
    bands: list[MatrixRow] = field(default_factory=list)
    auc: float | None = None
    auc_useful: int = 0
    auc_not_useful: int = 0

    @property
    def without_prediction(self) -> int:
        return sum(row.runs for row in self.matrix) - self.predicted


@dataclass(frozen=True)
class ToolCallAlignment:
    """The tool-call ratings in range (one per reviewer and call, SPEC 6.1 ``tool_call``)
    by whether the call failed and how it was rated; "failed" predicts "negative" (not
    helpful). ``kappa``: Cohen's κ of that prediction against the ratings (``None``:
    undefined or no rating)."""

    failed_negative: int = 0
    failed_positive: int = 0
    ok_negative: int = 0
    ok_positive: int = 0

    @property
    def ratings(self) -> int:
        return self.failed_negative + self.failed_positive + self.ok_negative + self.ok_positive

    @property
    def agreed(self) -> int:
        return self.failed_negative + self.ok_positive

    @property
    def kappa(self) -> float | None:
        return kappa_from_matrix({
            ("negative", "negative"): self.failed_negative,
            ("negative", "positive"): self.failed_positive,
            ("positive", "negative"): self.ok_negative,
            ("positive", "positive"): self.ok_positive,
        }) if self.ratings else None


@dataclass(frozen=True)
class AlignmentReport:
    """The page: filters, the (id, name) workspaces the actor leads, the judged runs
    (``useful`` + ``not_useful``) and one report per signal in registry order.
    ``score_mode``: over *all* runs in range, judged or not, (the most common evidence
    score, the runs with it, the scored runs) — lowest score on a tie; ``None`` when no
    run is scored. It shows when the score cannot rank runs at all (tau-bench: 182 of 200
    runs score exactly 30). ``tool_calls``: failed calls against their ratings, over the
    runs in range whether judged or not."""

    filters: AlignmentFilters
    workspaces: list[tuple[int, str]]
    useful: int
    not_useful: int
    signals: list[SignalReport]
    score_mode: tuple[int, int, int] | None = None
    tool_calls: ToolCallAlignment = field(default_factory=ToolCallAlignment)

    @property
    def judged(self) -> int:
        return self.useful + self.not_useful

    @property
    def score_cannot_rank(self) -> bool:
        """True when more than half of the scored runs in range share the one most common
        evidence score (``score_mode``): the page then warns that the score cannot rank
        them."""
        if self.score_mode is None:
            return False
        _, runs, scored = self.score_mode
        return runs * 2 > scored


def _aiops_verdict() -> Any:
    """``self_evaluation.aiops_rule_evaluation.verdict`` as text (JSON path, both
    databases)."""
    return type_coerce(
        Run.self_evaluation["aiops_rule_evaluation"]["verdict"].as_string(), String)


def _column(row: SignalRow) -> Any:
    if row.code == "evidence_score":
        return Run.evidence_score
    if row.code == "verifier_verdict":
        return Run.verifier_verdict
    if row.code == "aiops_verdict":
        return _aiops_verdict()
    if row.code == "external_outcome":
        return func.lower(Run.external_outcome)
    raise ValueError(f"signal without a column: {row.code}")


def _disagreement_condition(row: SignalRow, threshold: int) -> Any:
    """SQL: the run's signal predicts the verdict the person did not give."""
    column = _column(row)
    if row.scored:
        return or_(and_(column >= threshold, Run.feedback == NOT_USEFUL),
                   and_(column < threshold, Run.feedback == USEFUL))
    clauses = []
    if row.useful:
        clauses.append(and_(column.in_(row.useful), Run.feedback == NOT_USEFUL))
    if row.not_useful:
        clauses.append(and_(column.in_(row.not_useful), Run.feedback == USEFUL))
    return or_(*clauses) if clauses else false()


def build(session: Session, actor: Actor, filters: AlignmentFilters | None = None,
          shown: int = DISAGREEMENTS_SHOWN) -> AlignmentReport:
    """The report for ``filters`` (``shown`` disagreeing runs listed per signal). Raises
    ``Forbidden`` when the actor leads no workspace or names one they do not lead."""
    filters = with_workspace_id(session, filters or AlignmentFilters())
    workspaces, ws_ids = lead_workspaces(session, actor, filters.workspace_id)
    conds = [*run_time_conditions(ws_ids, filters.date_from, filters.date_to),
             Run.feedback.is_not(None)]
    columns = [_column(row).label(row.code) for row in SIGNALS]
    grouped = session.execute(
        select(*columns, Run.feedback, func.count()).where(*conds)
        .group_by(*columns, Run.feedback)
    ).all()
    useful = sum(int(r[-1]) for r in grouped if r[-2] == USEFUL)
    not_useful = sum(int(r[-1]) for r in grouped if r[-2] == NOT_USEFUL)
    signals = []
    for index, row in enumerate(SIGNALS):
        counts: dict[Any, list[int]] = {}
        for r in grouped:
            slot = counts.setdefault(r[index], [0, 0])
            slot[0 if r[-2] == USEFUL else 1] += int(r[-1])
        disagreeing = _disagreements(session, row, conds, filters.threshold, shown)
        total = int(session.scalar(select(func.count()).select_from(Run).where(
            *conds, _disagreement_condition(row, filters.threshold))) or 0)
        signals.append(_signal_report(row, counts, filters.threshold, disagreeing, total))
    by_score = session.execute(
        select(Run.evidence_score, func.count())
        .where(*conds[:-1], Run.evidence_score.is_not(None)).group_by(Run.evidence_score)
    ).all()
    mode = None
    if by_score:
        top, runs = min(by_score, key=lambda r: (-int(r[1]), r[0]))
        mode = (int(top), int(runs), sum(int(n) for _, n in by_score))
    return AlignmentReport(filters, workspaces, useful, not_useful, signals, mode,
                           _tool_calls(session, conds[:-1]))


def _tool_calls(session: Session, run_conds: list[Any]) -> ToolCallAlignment:
    """The tool-call ratings of the runs ``run_conds`` select, counted by (the call
    failed, the rating): one GROUP BY."""
    failed = ToolCall.status == ToolCallStatus.FAILED.value
    counts = {(bool(f), rating): int(n) for f, rating, n in session.execute(
        select(failed, Feedback.rating, func.count())
        .join(Run, Run.id == Feedback.run_pk)
        .join(ToolCall, and_(ToolCall.workspace_id == Feedback.workspace_id,
                             ToolCall.id == Feedback.subject_key,
                             ToolCall.run_pk == Feedback.run_pk))
        .where(Feedback.target_type == TargetType.TOOL_CALL.value, *run_conds)
        .group_by(failed, Feedback.rating))}
    return ToolCallAlignment(counts.get((True, "negative"), 0), counts.get((True, "positive"), 0),
                             counts.get((False, "negative"), 0), counts.get((False, "positive"), 0))


def _signal_report(row: SignalRow, counts: Mapping[Any, list[int]], threshold: int,
                   disagreeing: list[DisagreeingRun], total: int) -> SignalReport:
    """The figures of one signal from ``{value: [useful, not_useful]}``."""
    pairs: dict[tuple[str, str], int] = {}
    for value, (u, n) in counts.items():
        guess = predicted(row, value, threshold)
        if guess is not None:
            pairs[(guess, USEFUL)] = pairs.get((guess, USEFUL), 0) + u
            pairs[(guess, NOT_USEFUL)] = pairs.get((guess, NOT_USEFUL), 0) + n
    matrix_pairs = {k: v for k, v in pairs.items() if v}
    n_predicted = sum(pairs.values())
    agreed = pairs.get((USEFUL, USEFUL), 0) + pairs.get((NOT_USEFUL, NOT_USEFUL), 0)
    report: dict[str, Any] = {}
    if row.scored:
        bands = [[0, 0] for _ in SCORE_BANDS]
        scored: dict[float, tuple[int, int]] = {}
        for value, (u, n) in counts.items():
            if value is None:
                continue
            bands[score_band(value)][0] += u
            bands[score_band(value)][1] += n
            scored[float(value)] = (u, n)
        matrix = [MatrixRow(f"≥ {threshold}", USEFUL,
                            sum(u for v, (u, _) in counts.items() if v is not None and v >= threshold),
                            sum(n for v, (_, n) in counts.items() if v is not None and v >= threshold)),
                  MatrixRow(f"< {threshold}", NOT_USEFUL,
                            sum(u for v, (u, _) in counts.items() if v is not None and v < threshold),
                            sum(n for v, (_, n) in counts.items() if v is not None and v < threshold))]
        report = dict(
            bands=[MatrixRow(label, None, u, n) for (label, _, _), (u, n) in zip(SCORE_BANDS, bands)],
            auc=roc_auc_from_counts(scored),
            auc_useful=sum(u for u, _ in scored.values()),
            auc_not_useful=sum(n for _, n in scored.values()))
    else:
        named = {v for v in counts if v is not None}
        order = [v for v in row.values if v in named]
        order += sorted(named - set(order))
        matrix = [MatrixRow(v, predicted(row, v), *counts[v]) for v in order]
    if None in counts:
        matrix.append(MatrixRow(NO_VALUE, None, *counts[None]))
    return SignalReport(
        code=row.code, label=row.label, mapping=row.mapping_text(threshold, labelled=True), matrix=matrix,
        predicted=n_predicted, agreed=agreed,
        kappa=kappa_from_matrix(matrix_pairs) if n_predicted else None,
        disagreements=disagreeing, disagreement_total=total, **report)


def _disagreements(session: Session, row: SignalRow, conds: list[Any], threshold: int,
                   limit: int) -> list[DisagreeingRun]:
    column = _column(row)
    run_time = rollups.run_time()
    found = session.execute(
        select(Run.id, Run.run_id, column, Run.feedback, func.substr(Run.query, 1, QUERY_CHARS))
        .where(*conds, _disagreement_condition(row, threshold))
        .order_by(run_time.desc(), Run.id.desc()).limit(limit)
    ).all()
    return [DisagreeingRun(pk, run_id, str(value), predicted(row, value, threshold) or "",
                           verdict, query or "")
            for pk, run_id, value, verdict, query in found]


def matrix_rows(report: AlignmentReport) -> Iterator[dict[str, Any]]:
    """Every signal's confusion matrix as rows of ``MATRIX_COLUMNS`` (CSV / JSONL): one
    row per value (the evidence score: per band, then per side of the threshold) and a
    closing ``value = "*"`` row with κ, the AUC (evidence score) and the runs κ rests on.
    Then ``signal = "tool_call_failed"``: ``failed`` / ``not failed`` rows counting the
    calls' positive ratings as ``useful`` and negative ones as ``not_useful``, and its
    ``*`` row (``runs`` = the ratings κ rests on)."""
    for s in report.signals:
        for r in [*s.bands, *s.matrix]:
            yield {"signal": s.code, "value": r.value, "predicts": r.predicts,
                   "useful": r.useful, "not_useful": r.not_useful, "kappa": None,
                   "auc": None, "runs": r.runs}
        yield {"signal": s.code, "value": "*", "predicts": None, "useful": None,
               "not_useful": None, "kappa": s.kappa, "auc": s.auc, "runs": s.predicted}
    t = report.tool_calls
    for value, predicts, positive, negative in (
            ("failed", "negative", t.failed_positive, t.failed_negative),
            ("not failed", "positive", t.ok_positive, t.ok_negative)):
        yield {"signal": TOOL_CALL_SIGNAL, "value": value, "predicts": predicts,
               "useful": positive, "not_useful": negative, "kappa": None, "auc": None,
               "runs": positive + negative}
    yield {"signal": TOOL_CALL_SIGNAL, "value": "*", "predicts": None, "useful": None,
           "not_useful": None, "kappa": t.kappa, "auc": None, "runs": t.ratings}


def disagreement_rows(session: Session, actor: Actor, filters: AlignmentFilters
                      ) -> Iterator[dict[str, Any]]:
    """Every signal's disagreeing runs (at most ``EXPORT_CAP`` each) as rows of
    ``DISAGREEMENT_COLUMNS``. Access is checked before the first row (``Forbidden``)."""
    _, ws_ids = lead_workspaces(session, actor, with_workspace_id(session, filters).workspace_id)
    conds = [*run_time_conditions(ws_ids, filters.date_from, filters.date_to),
             Run.feedback.is_not(None)]
    batches = [(row, _disagreements(session, row, conds, filters.threshold, EXPORT_CAP))
               for row in SIGNALS]

    def rows() -> Iterator[dict[str, Any]]:
        for row, found in batches:
            for d in found:
                yield {"signal": row.code, "run_pk": d.run_pk, "run_id": d.run_id,
                       "signal_value": d.signal_value, "predicts": d.predicts,
                       "human_verdict": d.human_verdict, "query": d.query}
    return rows()


EXPORT_TABLES = ("matrix", "disagreements")


def open_export(session: Session, actor: Actor, params: Mapping[str, Any]
                ) -> tuple[str, tuple[str, ...], Iterator[dict[str, Any]]]:
    """(file name stem, columns, rows) of the download ``params`` ask for: the filters
    plus ``table`` = ``matrix`` (default, ``matrix_rows``) or ``disagreements``
    (``disagreement_rows``). Access and every parameter are checked before it returns:
    ``ValidationFailed`` naming the field, ``Forbidden``."""
    filters = AlignmentFilters.from_params(params)
    table = choice_param(params, "table", EXPORT_TABLES) or "matrix"
    if table == "disagreements":
        return ("alignment-disagreements", DISAGREEMENT_COLUMNS,
                disagreement_rows(session, actor, filters))
    return "alignment", MATRIX_COLUMNS, matrix_rows(build(session, actor, filters))
