"""Rules of a lead's decision (issue 16, new-user report): the case a decision makes names
the lead who decided; only a disputed (or already decided) run can be decided."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.errors import Conflict, ValidationFailed
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


def test_a_stale_page_cannot_reverse_a_decision(session, make, world):
    """Two tabs rendered before any decision: the first decides, the second is refused
    with the current decision; deciding again names the decision it replaces."""
    _dispute(world)
    lead = make.actor(world.lead)
    first = adjudication.decide(session, lead, world.run.id, "useful", expected_decision="")
    with pytest.raises(Conflict) as stale:
        adjudication.decide(session, lead, world.run.id, "not_useful", expected_decision="")
    assert (stale.value.details["verdict"], stale.value.details["lead"]) == (
        "Useful", "lea-decides")
    assert "decided meanwhile" in stale.value.message
    session.rollback()
    session.refresh(world.run)
    assert world.run.feedback == "useful"
    assert [d.id for d in session.scalars(select(VerdictDecision))] == [first.decision_id]
    case = session.scalars(select(Case).where(Case.diagnosis_id == world.run.run_id)).one()
    assert case.withdrawn_at is None
    # On purpose, from a fresh page: the latest decision's id is carried.
    again = adjudication.decide(session, lead, world.run.id, "not_useful",
                                expected_decision=str(first.decision_id))
    session.refresh(world.run)
    assert world.run.feedback == "not_useful" and again.decision_id != first.decision_id
    with pytest.raises(Conflict):  # the page that showed the first decision is stale now
        adjudication.decide(session, lead, world.run.id, "useful",
                            expected_decision=first.decision_id)
    with pytest.raises(ValidationFailed) as bad:
        adjudication.decide(session, lead, world.run.id, "useful", expected_decision="latest")
    assert bad.value.field == "decision"
