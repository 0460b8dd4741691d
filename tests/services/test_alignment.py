"""The alignment report (issue 16) against a small hand-made set of judged runs.

Runs (human verdict, evidence score, verifier verdict, external outcome):
  r1 useful      80  PASS        "PASS" (upper case: compared case-insensitively)
  r2 useful      30  LOW_CONFID  pass
  r3 not_useful  30  REJECT      fail
  r4 not_useful  60  PASS        fail
  r5 useful      30  -           -
  r6 not_useful  -   REJECT      weird
  r7 (no verdict) 90 PASS        pass          -> not in the report
  a1 useful      65  AIOps PASS
  a2 not_useful  30  AIOps FAIL
"""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from reviewapp.actors import Actor, Role
from reviewapp.errors import Forbidden, ValidationFailed
from reviewapp.models import Run
from reviewapp.services import alignment, importers
from reviewapp.services.alignment import AlignmentFilters

from ..shared_data import tau_bench_file


@pytest.fixture
def world(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    day = "2026-11-27T08:00:00Z"
    spec = {
        "r1": ("useful", 80, "PASS", "PASS"), "r2": ("useful", 30, "LOW_CONFID", "pass"),
        "r3": ("not_useful", 30, "REJECT", "fail"), "r4": ("not_useful", 60, "PASS", "fail"),
        "r5": ("useful", 30, None, None), "r6": ("not_useful", None, "REJECT", "weird"),
        "r7": (None, 90, "PASS", "pass"),
    }
    runs = {}
    for name, (verdict, score, verifier, outcome) in spec.items():
        run = make.run(ws, name, started_at=day)
        run.feedback, run.evidence_score, run.verifier_verdict = verdict, score, verifier
        run.external_outcome = outcome
        runs[name] = run
    for name, verdict, score, rule in (("a1", "useful", 65, "PASS"),
                                       ("a2", "not_useful", 30, "FAIL")):
        run = make.aiops_run(ws, name, started_at=day)
        run.feedback, run.evidence_score, run.verifier_verdict = verdict, score, None
        run.external_outcome = None
        run.self_evaluation = {"aiops_rule_evaluation": {"source": "rule", "verdict": rule,
                                                         "checks": []}}
        runs[name] = run
    other = make.workspace()
    stranger = make.run(other, "x1", started_at=day)
    stranger.feedback, stranger.evidence_score = "useful", 10
    session.commit()
    return type("W", (), dict(ws=ws, lead=lead, runs=runs))


def _signal(report, code):
    return next(s for s in report.signals if s.code == code)


def _matrix(signal):
    return {r.value: (r.useful, r.not_useful) for r in signal.matrix}


def test_report_matches_hand_computed_values(session, make, world):
    report = alignment.build(session, make.actor(world.lead))
    assert (report.useful, report.not_useful) == (4, 4)

    score = _signal(report, "evidence_score")
    # useful scores 80 30 30 65 vs not-useful 30 60 30: wins 3 + 1 + 1 + 3 = 8 of 12.
    assert score.auc == pytest.approx(8 / 12)
    assert (score.auc_useful, score.auc_not_useful) == (4, 3)
    bands = {b.value: (b.useful, b.not_useful) for b in score.bands}
    assert (bands["30–39"], bands["60–69"], bands["80–89"], bands["0–9"]) == (
        (2, 2), (1, 1), (1, 0), (0, 0))
    assert _matrix(score) == {"≥ 50": (2, 1), "< 50": (2, 2), "none": (0, 1)}
    # (pred, human): UU 2, UN 1, NU 2, NN 2 -> p_o 4/7, p_e 24/49, kappa 4/25.
    assert (score.predicted, score.agreed) == (7, 4)
    assert score.kappa == pytest.approx(4 / 25)
    assert score.disagreement_total == 3
    assert {d.run_id for d in score.disagreements} == {"r2", "r4", "r5"}

    verifier = _signal(report, "verifier_verdict")
    assert _matrix(verifier) == {"PASS": (1, 1), "LOW_CONFID": (1, 0), "REJECT": (0, 2),
                                 "none": (2, 1)}
    # UU 1, UN 1, NU 1, NN 2 -> p_o 3/5, p_e 13/25, kappa 1/6.
    assert (verifier.predicted, verifier.agreed) == (5, 3)
    assert verifier.kappa == pytest.approx(1 / 6)
    assert sorted(d.run_id for d in verifier.disagreements) == ["r2", "r4"]
    r4 = next(d for d in verifier.disagreements if d.run_id == "r4")
    assert (r4.signal_value, r4.predicts, r4.human_verdict) == ("PASS", "useful", "not_useful")

    aiops = _signal(report, "aiops_verdict")
    assert _matrix(aiops) == {"PASS": (1, 0), "FAIL": (0, 1), "none": (3, 3)}
    assert (aiops.predicted, aiops.agreed, aiops.kappa) == (2, 2, 1.0)
    assert aiops.disagreement_total == 0

    outcome = _signal(report, "external_outcome")
    assert _matrix(outcome) == {"pass": (2, 0), "fail": (0, 2), "weird": (0, 1), "none": (2, 1)}
    assert (outcome.predicted, outcome.agreed, outcome.kappa) == (4, 4, 1.0)
    assert outcome.without_prediction == 4


def test_threshold_and_shown(session, make, world):
    report = alignment.build(session, make.actor(world.lead), AlignmentFilters(threshold=70),
                             shown=1)
    score = _signal(report, "evidence_score")
    # >= 70: r1 (U). < 70: U r2 r5 a1, N r3 r4 a2. UU 1, NU 3, NN 3 -> p_o 4/7;
    # pred margins U 1, N 6; human U 4, N 3: p_e (4 + 18) / 49 = 22/49; kappa 6/27.
    assert score.kappa == pytest.approx((28 / 49 - 22 / 49) / (27 / 49))
    assert score.auc == pytest.approx(8 / 12)  # threshold-free
    assert score.disagreement_total == 3 and len(score.disagreements) == 1


def test_score_concentration_over_all_runs(session, make, world):
    report = alignment.build(session, make.actor(world.lead))
    # Scores of all 9 runs in range (judged or not): 30 x4, 80, 60, 90, 65 (r6 unscored).
    assert report.score_mode == (30, 4, 8)


def test_access_and_filters(session, make, world):
    with pytest.raises(Forbidden):
        alignment.build(session, make.actor(make.user(world.ws, Role.REVIEWER)))
    with pytest.raises(ValidationFailed) as caught:
        AlignmentFilters.from_params({"threshold": "101"})
    assert caught.value.field == "threshold"
    report = alignment.build(session, make.actor(world.lead),
                             AlignmentFilters.from_params({"date_from": "2026-11-28"}))
    assert report.judged == 0 and _signal(report, "evidence_score").auc is None
    assert all(s.kappa is None for s in report.signals)


def test_exports(session, make, world):
    lead = make.actor(world.lead)
    report = alignment.build(session, lead)
    rows = list(alignment.matrix_rows(report))
    summary = {r["signal"]: r for r in rows if r["value"] == "*"}
    assert summary["verifier_verdict"]["kappa"] == pytest.approx(1 / 6)
    assert summary["evidence_score"]["auc"] == pytest.approx(8 / 12)
    assert all(set(r) == set(alignment.MATRIX_COLUMNS) for r in rows)
    found = list(alignment.disagreement_rows(session, lead, AlignmentFilters()))
    assert sorted((r["signal"], r["run_id"]) for r in found) == [
        ("evidence_score", "r2"), ("evidence_score", "r4"), ("evidence_score", "r5"),
        ("verifier_verdict", "r2"), ("verifier_verdict", "r4")]
    with pytest.raises(Forbidden):
        alignment.disagreement_rows(session, make.actor(make.user()), AlignmentFilters())


def test_tau_bench_shows_the_score_cannot_rank(session, make):
    """The 200 real tau-bench runs: 182 score exactly 30 (S001 §4: +30 for a successful
    tool call, nothing else applies to this data), the rest 0. With verdicts that follow
    the benchmark's reward (a stand-in for reviewers), the AUC is barely above chance;
    expected values from the raw file with plain ``json``."""
    records = json.loads(tau_bench_file().read_text())
    ws = make.workspace("tau")
    lead = make.user(ws, Role.LEAD)
    importers.import_files(session, Actor.system_actor(), ws.id, [str(tau_bench_file())],
                           fmt="tau-bench")
    session.commit()
    report = alignment.build(session, make.actor(lead))
    assert report.judged == 0 and report.score_mode == (30, 182, 200)

    def score(record):
        ok = any(m["role"] == "tool" and not (m.get("content") or "").startswith("Error:")
                 for m in record["traj"])
        return 30 if ok else 0
    useful = [score(r) for r in records if r["reward"] == 1]
    not_useful = [score(r) for r in records if r["reward"] != 1]
    pairs = sum(1.0 if u > n else 0.5 if u == n else 0.0 for u in useful for n in not_useful)
    for run in session.scalars(select(Run).where(Run.workspace_id == ws.id)):
        run.feedback = "useful" if run.external_outcome == "pass" else "not_useful"
    session.commit()
    report = alignment.build(session, make.actor(lead))
    assert (report.useful, report.not_useful) == (84, 116)
    evidence = _signal(report, "evidence_score")
    assert evidence.auc == pytest.approx(pairs / (len(useful) * len(not_useful)))
    assert evidence.kappa == pytest.approx(0.0)  # threshold 50: every run predicted not useful
    assert _signal(report, "external_outcome").kappa == pytest.approx(1.0)


# --- tool calls: failed against rated not helpful (issue 19) ------------------------------


def test_tool_call_failed_against_rated_negative(session, make):
    """Each reviewer's rating of a tool call is one human judgment; "the call failed"
    predicts "not helpful". Hand-counted: failed & negative 3, failed & positive 1,
    ok & negative 1, ok & positive 3 -> p_o 6/8, p_e (4*4 + 4*4) / 64 = 1/2, κ 1/2."""
    from reviewapp.services import feedback

    from .feedback.helpers import CALL_ID, chat_run_with_turns, turn_of

    day = "2026-11-27T08:00:00Z"
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    r1, r2, r3 = (make.actor(make.user(ws)) for _ in range(3))
    a = chat_run_with_turns(make, ws, started_at=day)
    b = chat_run_with_turns(make, ws, started_at=day, tool_calls=[
        {"id": "b-1", "tool_name": "book", "status": "failed", "error": "no seat"},
        {"id": "b-2", "tool_name": "book", "status": "completed", "output": "ok"},
        {"id": "b-3", "tool_name": "book", "status": "failed", "error": "never rated"}])
    rate = feedback.upsert_feedback
    for actor, run, call, rating in (
            (r1, a, CALL_ID, "negative"), (r2, a, CALL_ID, "negative"), (r3, a, CALL_ID, "positive"),
            (r1, a, "call-2", "positive"), (r2, a, "call-2", "negative"),
            (r1, b, "b-1", "negative"), (r1, b, "b-2", "positive"), (r2, b, "b-2", "positive")):
        rate(session, actor, "tool_call", run.id, call, rating)
    rate(session, r1, "conversation_turn", turn_of(a).id, None, "negative")  # not a call
    other = make.workspace()
    stranger = make.actor(make.user(other))
    c = chat_run_with_turns(make, other, started_at=day, tool_calls=[
        {"id": "c-1", "tool_name": "book", "status": "failed", "error": "x"}])
    rate(session, stranger, "tool_call", c.id, "c-1", "positive")  # another workspace
    session.commit()

    calls = alignment.build(session, make.actor(lead)).tool_calls
    assert (calls.failed_negative, calls.failed_positive, calls.ok_negative,
            calls.ok_positive) == (3, 1, 1, 3)
    assert (calls.ratings, calls.agreed) == (8, 6)
    assert calls.kappa == pytest.approx(0.5)
    later = alignment.build(session, make.actor(lead),
                            AlignmentFilters.from_params({"date_from": "2026-11-28"}))
    assert later.tool_calls.ratings == 0 and later.tool_calls.kappa is None
    rows = [r for r in alignment.matrix_rows(alignment.build(session, make.actor(lead)))
            if r["signal"] == "tool_call_failed"]
    assert [(r["value"], r["useful"], r["not_useful"]) for r in rows[:2]] == [
        ("failed", 1, 3), ("not failed", 3, 1)]
    assert rows[-1]["kappa"] == pytest.approx(0.5) and rows[-1]["runs"] == 8
