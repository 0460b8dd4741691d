"""Dashboard aggregates (SPEC 8), computed by hand from the rows the test creates.

These tests write verdicts and scores straight into the run rows, past the services that
keep the dashboard's roll-ups, and so rebuild the roll-ups from the rows the way
``flask dashboard rebuild`` does (``rebuild``); tests/services/test_dashboard_rollups.py
checks that the services keep them on every write."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reviewapp.actors import Actor, Role
from reviewapp.errors import Forbidden, ValidationFailed
from reviewapp.services import dashboard
from reviewapp.services.dashboard import DashboardFilters

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def rebuild(session):
    dashboard.rebuild(session, Actor.system_actor())


def _call(i, status="completed", tool="query_logs"):
    return {"id": f"c-{i}-{tool}-{status}", "tool_name": tool, "status": status,
            "arguments": {}, "error": "boom" if status == "failed" else None,
            "started_at": "2026-11-27T10:00:00Z", "completed_at": "2026-11-27T10:00:01Z"}


@pytest.fixture
def data(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    day1, day2 = "2026-11-27T08:00:00Z", "2026-11-28T23:59:00Z"
    runs = [
        make.run(ws, started_at=day1, tool_calls=[_call(1), _call(1, "failed", "vault_read")]),
        make.run(ws, started_at=day1, tool_calls=[_call(2, "failed", "vault_read")]),
        make.run(ws, started_at=day1),
        make.run(ws, started_at=day2, tool_calls=[_call(3, "failed", "node_exec"), _call(3)]),
    ]
    for run, verdict, score, verifier in zip(
        runs, ["useful", "not_useful", None, "useful"], [95, 0, 35, 100],
        ["PASS", "REJECT", None, "PASS"],
    ):
        run.feedback, run.evidence_score, run.verifier_verdict = verdict, score, verifier
    session.commit()
    make.triage_item(runs[1], created_at=NOW - timedelta(hours=2))
    make.triage_item(runs[2], state="triaged", created_at=NOW - timedelta(days=3), verdict=False)
    make.triage_item(runs[3], state="resolved", created_at=NOW - timedelta(days=40), verdict=False)
    other = make.workspace()
    make.run(other, started_at=day1).feedback = "useful"
    session.commit()
    rebuild(session)
    return type("Data", (), dict(ws=ws, lead=lead, runs=runs))


def test_dashboard_aggregates(session, make, data):
    board = dashboard.build(session, make.actor(data.lead), now=NOW)
    assert board.runs == 4
    assert [(d.day, d.runs, d.useful, d.not_useful) for d in board.usefulness] == [
        ("2026-11-27", 3, 1, 1), ("2026-11-28", 1, 1, 0)]
    assert [d.rate for d in board.usefulness] == [0.5, 1.0]
    histogram = dict(board.score_histogram)
    assert (histogram["0–9"], histogram["30–39"], histogram["90–100"]) == (1, 1, 2)
    assert sum(histogram.values()) == 4 and board.unscored == 0
    assert dict(board.verdicts) == {"PASS": 2, "LOW_CONFID": 0, "REJECT": 1, "none": 1}
    assert [(t.tool_name, t.failed, t.total) for t in board.failing_tools] == [
        ("vault_read", 2, 2), ("node_exec", 1, 1)]
    assert [(b.label, b.counts) for b in board.backlog] == [
        ("under 1 day", {"new": 1, "triaged": 0}), ("1–7 days", {"new": 0, "triaged": 1}),
        ("7–30 days", {"new": 0, "triaged": 0}), ("over 30 days", {"new": 0, "triaged": 0})]
    assert board.triage_states == {"new": 1, "triaged": 1, "resolved": 1, "wont_fix": 0}


def test_dashboard_date_range(session, make, data):
    board = dashboard.build(session, make.actor(data.lead),
                            DashboardFilters.from_params({"date_from": "2026-11-28"}), now=NOW)
    assert board.runs == 1
    assert [(t.tool_name, t.failed) for t in board.failing_tools] == [("node_exec", 1)]
    # the backlog is "now": the date range does not narrow it
    assert board.triage_states["new"] == 1


def test_dashboard_is_for_leads_of_their_own_workspaces(session, make, data):
    with pytest.raises(Forbidden):
        dashboard.build(session, make.actor(make.user(data.ws, Role.REVIEWER)))
    stranger_lead = make.user(make.workspace(), Role.LEAD)
    with pytest.raises(Forbidden):
        dashboard.build(session, make.actor(stranger_lead), DashboardFilters(workspace_id=data.ws.id))
    assert dashboard.build(session, make.actor(stranger_lead)).runs == 0


@pytest.mark.parametrize("params, field", [({"workspace": "W!"}, "workspace"),
                                           ({"date_to": "soon"}, "date_to"),
                                           ({"date_from": "2026-12-01", "date_to": "2026-11-01"}, "date_from")])
def test_dashboard_filters_name_the_field(params, field):
    with pytest.raises(ValidationFailed) as error:
        DashboardFilters.from_params(params)
    assert error.value.field == field


def test_days_without_runs_are_gaps_in_the_usefulness_series(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    for day in ("2026-11-01T10:00:00Z", "2026-11-04T10:00:00Z"):
        make.run(ws, started_at=day).feedback = "useful"
    session.commit()
    rebuild(session)
    board = dashboard.build(session, make.actor(lead), now=NOW)
    assert [(d.day, d.runs, d.rate) for d in board.usefulness] == [
        ("2026-11-01", 1, 1.0), ("2026-11-02", 0, None), ("2026-11-03", 0, None),
        ("2026-11-04", 1, 1.0)]
    assert board.runs == 2
