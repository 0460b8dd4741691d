"""Agreement per review queue and with the leads' decisions (issue 16), against values
worked out by hand."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.errors import Forbidden
from reviewapp.models import Message
from reviewapp.services import adjudication, agreement, feedback
from reviewapp.services import review_queues as rq


def test_queue_filter_and_agreement_with_decisions(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lea")
    ann, bob = make.user(ws, username="ann"), make.user(ws, username="bob")
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {"q": "Queued"},
                               reviewers_per_run=2)
    queued = [make.run(ws, query=f"Queued {i}?") for i in range(3)]
    outside = make.run(ws, query="Elsewhere?")

    def rate(user, run, rating):
        answer = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                         Message.role == "assistant"))
        feedback.upsert_feedback(session, make.actor(user), "chat_message", answer, None, rating)

    # Queued runs: (+,+) (+,-) (-,+); outside: (-,-).
    for run, (a, b) in zip(queued, (("positive", "positive"), ("positive", "negative"),
                                    ("negative", "positive"))):
        rate(ann, run, a)
        rate(bob, run, b)
    rate(ann, outside, "negative")
    rate(bob, outside, "negative")
    assert sorted(r.id for r in queued) == sorted(
        pk for pk in agreement.answer_ratings(session, [ws.id], queue_id=queue.id))

    # The two ties go to the lead: run 1 decided useful (ann right), run 2 useful (bob).
    adjudication.decide(session, make.actor(lead), queued[1].id, "useful")
    adjudication.decide(session, make.actor(lead), queued[2].id, "useful")

    everything = agreement.build(session, make.actor(lead), agreement.AgreementFilters(
        workspace_id=ws.id, min_shared=1))
    in_queue = agreement.build(session, make.actor(lead), agreement.AgreementFilters(
        workspace_id=ws.id, min_shared=1, queue_id=queue.id))
    # All four runs: ann/bob agree on 2 of 4; kappa: p_o = 1/2, ann + 2/4, bob + 2/4,
    # p_e = 1/2 -> kappa 0. The queue's three: agree on 1 of 3; ann + 2/3, bob + 2/3,
    # p_e = 4/9 + 1/9 = 5/9, kappa = (1/3 - 5/9) / (1 - 5/9) = -1/2.
    assert everything.summary.pairs[0].kappa == pytest.approx(0.0)
    assert in_queue.summary.pairs[0].kappa == pytest.approx(-0.5)
    assert in_queue.summary.items == 3 and everything.summary.items == 4
    assert in_queue.queues == [(queue.id, "Pairs")]
    # Decisions: ann agreed on run 1 only (1/2), bob on run 2 only (1/2).
    assert [(d.reviewer, d.decided, d.agreed) for d in in_queue.decisions] == [
        ("ann", 2, 1), ("bob", 2, 1)]
    rows = list(agreement.export_rows(in_queue))
    assert [(r["reviewer"], r["items"], r["agreed"]) for r in rows
            if r["figure"] == "decision"] == [("ann", 2, 1), ("bob", 2, 1)]

    other = make.workspace()
    other_lead = make.user(other, Role.LEAD)
    with pytest.raises(Forbidden):
        agreement.build(session, make.actor(other_lead),
                        agreement.AgreementFilters(queue_id=queue.id))
