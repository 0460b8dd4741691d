"""Rules of a lead's decision (issue 16, new-user report): the case a decision makes names
the lead who decided; only a disputed (or already decided) run can be decided."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.errors import ValidationFailed
from reviewapp.models import Case, Message, VerdictDecision
from reviewapp.services import adjudication, feedback
from reviewapp.services import review_queues as rq


@pytest.fixture
def world(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lea-decides")
    ann, bob = make.user(ws, Role.REVIEWER), make.user(ws, Role.REVIEWER)
    run = make.run(ws)
    rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {}, reviewers_per_run=2)
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                     Message.role == "assistant"))

    def rate(user, rating):
        feedback.upsert_feedback(session, make.actor(user), "chat_message", answer, None, rating)
        session.refresh(run)

    return type("W", (), dict(ws=ws, lead=lead, ann=ann, bob=bob, run=run, rate=rate))


def _dispute(world):
    world.rate(world.ann, "positive")
    world.rate(world.bob, "negative")
    assert world.run.feedback is None


def test_the_case_of_a_decision_names_the_lead(session, make, world):
    _dispute(world)
    result = adjudication.decide(session, make.actor(world.lead), world.run.id, "useful")
    case = session.scalars(select(Case).where(Case.diagnosis_id == world.run.run_id)).one()
    assert (case.case_id, case.created_by) == (result.case_id, "lea-decides")


@pytest.mark.parametrize("ratings", [(), ("positive",), ("positive", "positive")])
def test_a_run_nobody_disagrees_on_cannot_be_decided(session, make, world, ratings):
    for user, rating in zip((world.ann, world.bob), ratings):
        world.rate(user, rating)
    before = world.run.feedback
    with pytest.raises(ValidationFailed) as refused:
        adjudication.decide(session, make.actor(world.lead), world.run.id, "useful")
    assert refused.value.field == "run" and "is not disputed" in refused.value.message
    session.rollback()
    session.refresh(world.run)
    assert world.run.feedback == before
    assert session.scalars(select(VerdictDecision)).all() == []
