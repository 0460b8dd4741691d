"""Reviewer agreement service (issue 16): which ratings count, access, filters, export."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.errors import Forbidden, ValidationFailed
from reviewapp.models import DiagnosticReport, Message
from reviewapp.services import agreement
from reviewapp.services.agreement import AgreementFilters


@pytest.fixture
def world(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lead")
    ann, bob, cy = (make.user(ws, Role.REVIEWER, username=n) for n in ("ann", "bob", "cy"))
    day1, day2 = "2026-11-27T08:00:00Z", "2026-11-28T09:00:00Z"
    runs = [make.run(ws, started_at=day1) for _ in range(4)] + [make.run(ws, started_at=day2)]
    # The hand-computed table of tests/unit/test_agreement.py::test_summarise_by_hand.
    table = [{"ann": "+", "bob": "+", "cy": "-"}, {"ann": "+", "bob": "-"},
             {"ann": "-", "bob": "-", "cy": "-"}, {"ann": "+", "bob": "+"}, {"cy": "+"}]
    users = {"ann": ann, "bob": bob, "cy": cy}
    for run, by in zip(runs, table):
        for name, sign in by.items():
            make.feedback_row(run, users[name], rating="positive" if sign == "+" else "negative")
    return type("W", (), dict(ws=ws, lead=lead, users=users, runs=runs, day1=day1))


def _pair(report, a, b):
    return next(p for p in report.summary.pairs if (p.first, p.second) == (a, b))


def test_figures_from_answer_ratings(session, make, world):
    report = agreement.build(session, make.actor(world.lead), AgreementFilters(min_shared=3))
    s = report.summary
    assert (s.items, s.multi_rated, s.ratings) == (5, 4, 11)
    ab = _pair(report, "ann", "bob")
    assert (ab.shared, ab.agreed) == (4, 3) and ab.kappa == pytest.approx(0.5)
    people = {r.reviewer: (r.rated, r.with_majority, r.agreed) for r in s.reviewers}
    assert people == {"ann": (4, 3, 2), "bob": (4, 3, 2), "cy": (3, 2, 1)}
    assert report.workspaces == [(world.ws.id, world.ws.name)]


def test_only_answer_level_ratings_count(session, make, world):
    run = world.runs[4]
    ann, bob = world.users["ann"], world.users["bob"]
    # A citation, a step-less chat run's earlier assistant message and another
    # workspace's run are no answer ratings.
    make.feedback_row(run, ann, rating="negative", target_type="citation", subject_key="c1")
    two_messages = make.run(world.ws, started_at=world.day1, messages=[
        {"id": "u1", "role": "user", "content": "Q?"},
        {"id": "a1", "role": "assistant", "content": "Draft."},
        {"id": "a2", "role": "assistant", "content": "Final answer."},
        {"id": "a3", "role": "assistant", "content": "   "},
    ])
    first, final = session.scalars(select(Message.id).where(
        Message.run_pk == two_messages.id, Message.role == "assistant",
    ).order_by(Message.ordinal).limit(2)).all()
    make.feedback_row(two_messages, ann, rating="positive", target_id=first)
    make.feedback_row(two_messages, bob, rating="negative", target_id=final)
    other = make.workspace()
    make.feedback_row(make.run(other), make.user(other), rating="positive")
    # An AIOps run: its report is the answer; a rating of a step is not.
    aiops = make.aiops_run(world.ws, started_at=world.day1)
    report_id = session.scalar(select(DiagnosticReport.id).where(DiagnosticReport.run_pk == aiops.id))
    make.feedback_row(aiops, ann, rating="positive", target_type="diagnostic_report",
                      target_id=report_id)
    make.feedback_row(aiops, bob, rating="positive", target_type="diagnostic_report",
                      target_id=report_id)
    make.feedback_row(aiops, world.users["cy"], rating="negative", target_type="diagnostic_step",
                      target_id=aiops.steps[0].id)

    ratings = agreement.answer_ratings(session, [world.ws.id])
    assert ratings[two_messages.id] == {"bob": "negative"}
    assert ratings[aiops.id] == {"ann": "positive", "bob": "positive"}
    assert ratings[run.id] == {"cy": "positive"}
    assert len(ratings) == 7


def test_date_range_and_workspace(session, make, world):
    lead = make.actor(world.lead)
    report = agreement.build(session, lead, AgreementFilters.from_params(
        {"date_from": "2026-11-28", "date_to": "2026-11-28", "workspace": str(world.ws.id)}))
    assert (report.summary.items, report.summary.ratings) == (1, 1)
    assert report.summary.alpha is None


def test_access(session, make, world):
    with pytest.raises(Forbidden):
        agreement.build(session, make.actor(world.users["ann"]))
    other = make.workspace()
    other_lead = make.user(other, Role.LEAD)
    with pytest.raises(Forbidden):
        agreement.build(session, make.actor(other_lead), AgreementFilters(workspace_id=world.ws.id))
    # Their own workspace: nothing of the first one shows.
    report = agreement.build(session, make.actor(other_lead))
    assert report.summary.ratings == 0 and report.summary.pairs == []


@pytest.mark.parametrize(("params", "field"), [
    ({"min_shared": "0"}, "min_shared"), ({"min_shared": "x"}, "min_shared"),
    ({"workspace": "a b"}, "workspace"), ({"date_from": "2026-13-01"}, "date_from"),
    ({"date_from": "2026-11-29", "date_to": "2026-11-28"}, "date_from"),
])
def test_bad_filters_name_the_field(params, field):
    with pytest.raises(ValidationFailed) as caught:
        AgreementFilters.from_params(params)
    assert caught.value.field == field


def test_export_rows(session, make, world):
    report = agreement.build(session, make.actor(world.lead), AgreementFilters(min_shared=3))
    rows = list(agreement.export_rows(report))
    assert rows[0]["figure"] == "alpha" and rows[0]["items"] == 4
    kappas = {(r["reviewer"], r["other_reviewer"]): r for r in rows if r["figure"] == "kappa"}
    assert kappas[("ann", "bob")]["value"] == pytest.approx(0.5)
    assert kappas[("ann", "cy")]["value"] is None  # 2 shared < 3
    majority = {r["reviewer"]: r for r in rows if r["figure"] == "majority"}
    assert (majority["cy"]["items"], majority["cy"]["agreed"], majority["cy"]["value"]) == (2, 1, 0.5)
    assert all(set(r) == set(agreement.EXPORT_COLUMNS) for r in rows)
