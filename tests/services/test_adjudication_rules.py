"""Rules of a lead's decision (issue 16, new-user report): the case a decision makes names
the lead who decided."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import Case, Message
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
