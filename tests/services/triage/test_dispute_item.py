"""A run whose verdict leaves not_useful because its pair of reviewers now disagree (a
dispute, SPEC 6.2) has its triage item handled like any verdict leaving not_useful: it
is resolved automatically with a note in its history, and a lead's not_useful decision
reopens it as any not_useful verdict does (SPEC 3, 8)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.domain.triage_flow import RESOLVED_DISPUTED
from reviewapp.domain.vocabulary import UnknownValue
from reviewapp.models import Message, TriageItem
from reviewapp.services import adjudication, feedback, triage
from reviewapp.services import review_queues as rq
from reviewapp.services.feedback.verdict_triage import close_item_automatically


@pytest.fixture
def pair(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lea")
    ann, bob = (make.user(ws, Role.REVIEWER, username=n) for n in ("ann", "bob"))
    run = make.run(ws)
    rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {}, reviewers_per_run=2,
                    reviewers="named", named=[ann.id, bob.id])
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                     Message.role == "assistant"))

    def rate(user, rating):
        feedback.upsert_feedback(session, make.actor(user), "chat_message", answer, None, rating)
        session.refresh(run)

    return type("Pair", (), dict(ws=ws, lead=make.actor(lead), ann=ann, bob=bob, run=run, rate=rate))


def _item(session, run):
    session.expire_all()
    return session.scalars(select(TriageItem).where(TriageItem.run_pk == run.id)).one()


def _history(session, lead, item):
    return [(e.action, e.automatic, e.detail) for e in triage.get_item(session, lead, item.id).item_events]


def test_the_wording_of_the_note():
    assert RESOLVED_DISPUTED == "the run is disputed: waiting for a lead's decision"


def test_a_dispute_resolves_the_item_the_not_useful_verdict_opened(session, pair):
    pair.rate(pair.ann, "negative")
    pair.rate(pair.bob, "negative")
    assert pair.run.feedback == "not_useful"
    opened = _item(session, pair.run)
    assert (opened.state, opened.opened_reason, opened.version) == ("new", "not_useful", 1)

    pair.rate(pair.bob, "positive")  # 1 up, 1 down: a tie, the lead decides
    assert pair.run.feedback is None
    item = _item(session, pair.run)
    assert (item.state, item.version, item.note) == ("resolved", 2, None)
    assert item.resolved_at is not None
    assert _history(session, pair.lead, item) == [
        ("auto_resolved", True, "the run is disputed: waiting for a lead's decision")]
    assert adjudication.disputed(session, pair.lead).total == 1


def test_a_not_useful_decision_reopens_it(session, pair):
    pair.rate(pair.ann, "negative")
    pair.rate(pair.bob, "negative")
    pair.rate(pair.bob, "positive")
    adjudication.decide(session, pair.lead, pair.run.id, "not_useful", "the answer is wrong")
    session.refresh(pair.run)
    assert pair.run.feedback == "not_useful"
    item = _item(session, pair.run)
    assert (item.state, item.resolved_at, item.opened_reason, item.version) == ("new", None, "not_useful", 3)
    assert _history(session, pair.lead, item) == [
        ("auto_resolved", True, "the run is disputed: waiting for a lead's decision"),
        ("auto_reopened", True, "the run was judged not useful again")]


def test_a_useful_decision_leaves_it_resolved(session, pair):
    pair.rate(pair.ann, "negative")
    pair.rate(pair.bob, "negative")
    pair.rate(pair.bob, "positive")
    result = adjudication.decide(session, pair.lead, pair.run.id, "useful", "")
    assert result.case_id is not None
    item = _item(session, pair.run)
    assert (item.state, item.version) == ("resolved", 2)
    assert [e[0] for e in _history(session, pair.lead, item)] == ["auto_resolved"]


def test_a_lead_s_closed_item_is_left_alone(session, pair):
    """Only an open item is resolved automatically (as for a useful verdict): one a lead
    marked "won't fix" keeps its state and gets no note."""
    pair.rate(pair.ann, "negative")
    pair.rate(pair.bob, "negative")
    item = _item(session, pair.run)
    triage.move(session, pair.lead, item.id, item.version, "wont_fix")
    pair.rate(pair.bob, "positive")
    item = _item(session, pair.run)
    assert item.state == "wont_fix"
    assert [e[0] for e in _history(session, pair.lead, item)] == ["moved"]


def test_a_negative_citation_rating_left_keeps_it_open(session, make, pair):
    """As when the last answer rating is taken back (RESOLVED_NO_NEGATIVE): a negative
    rating of another part of the run is still something to triage."""
    pair.rate(pair.ann, "negative")
    pair.rate(pair.bob, "negative")
    answer = session.scalar(select(Message.id).where(Message.run_pk == pair.run.id,
                                                     Message.role == "assistant"))
    feedback.upsert_feedback(session, make.actor(pair.ann), "citation", answer, "c1", "negative")
    pair.rate(pair.bob, "positive")
    assert pair.run.feedback is None
    item = _item(session, pair.run)
    assert (item.state, item.version) == ("new", 1) and _history(session, pair.lead, item) == []


def test_the_app_resolves_an_item_only_for_a_reason_with_a_label(session, make):
    """Each automatic reason has the label the item's state shows (one registry): a reason
    it does not hold is refused, before anything is written."""
    ws = make.workspace()
    item = make.triage_item(make.run(ws))
    with pytest.raises(UnknownValue):
        close_item_automatically(session, item.run, "because I said so")
    session.rollback()
    assert session.get(TriageItem, item.id).state == "new"
