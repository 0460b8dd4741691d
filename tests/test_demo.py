"""Demo data (issue: foundation): loading twice gives the same row counts."""

from __future__ import annotations

from sqlalchemy import func, select

from reviewapp.models import (
    DiagnosisSession,
    DiagnosticReport,
    DiagnosticStep,
    Message,
    Run,
    ToolCall,
    Workspace,
)
from reviewapp.services.demo import DEMO_EVENTS, DEMO_RUNS


def _counts(session):
    return {m.__name__: session.scalar(select(func.count()).select_from(m))
            for m in (Workspace, DiagnosisSession, Run, Message, DiagnosticStep, DiagnosticReport, ToolCall)}


def test_demo_load_twice_gives_the_same_row_counts(runner, session):
    first = runner.invoke(args=["demo", "load"])
    assert first.exit_code == 0, first.output
    counts = _counts(session)
    second = runner.invoke(args=["demo", "load"])
    assert second.exit_code == 0, second.output
    assert f"0 created, 0 updated, {len(DEMO_RUNS)} unchanged" in second.output
    session.expire_all()
    assert _counts(session) == counts
    expected_calls = sum(len(d.get("tool_calls", [])) for d in DEMO_RUNS) + len(
        {e["id"] for e in DEMO_EVENTS})
    assert counts["ToolCall"] == expected_calls
    assert counts["Run"] == len(DEMO_RUNS)
    assert counts["DiagnosisSession"] == len(DEMO_RUNS) + 1  # plus the legacy session


def test_demo_covers_every_tool_call_state(runner, session):
    runner.invoke(args=["demo", "load"])
    rows = session.scalars(select(ToolCall)).all()
    assert {r.status for r in rows} == {"started", "completed", "failed"}
    assert any(r.compensated for r in rows)
    assert any(r.status == "started" and r.completed_at is None and r.duration_ms is None for r in rows)
    assert {r.match_level for r in rows} >= {"L0", "L1", None}
    assert any(r.hit_count == 0 for r in rows)
    statuses = set(session.scalars(select(Run.status)))
    assert statuses == {"RUNNING", "SUCCESS", "FAILED"}
    legacy = session.scalars(select(DiagnosisSession).where(DiagnosisSession.query.is_not(None))).one()
    assert legacy.self_evaluation["evidence_score"] == 65 and not legacy.runs


def test_demo_bootstrap_creates_three_roles_and_prints_passwords(runner, session):
    result = runner.invoke(args=["demo", "bootstrap"])
    assert result.exit_code == 0, result.output
    for name in ("admin", "lead", "reviewer"):
        assert f"username: {name}" in result.output
    again = runner.invoke(args=["demo", "bootstrap"])
    assert "nothing to bootstrap" in again.output


def test_demo_bootstrap_names_the_address_the_app_serves_on(runner, session):
    """Second new-user walk: ``make run PORT=5058`` served on 5058 and printed "Log in at
    http://127.0.0.1:5000". ``make run`` passes its address (``--url``); 5000 by default."""
    result = runner.invoke(args=["demo", "bootstrap", "--url", "http://127.0.0.1:5058"])
    assert result.exit_code == 0, result.output
    assert "Log in at http://127.0.0.1:5058 with:" in result.output
    assert "5000" not in result.output
