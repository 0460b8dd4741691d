"""Blind review (issue 16): until a reviewer has rated the answer of a run in a blind
queue, no reader shows them another reviewer's rating, the run's verdict or its case —
called here through the services directly, every reader in turn."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.errors import Forbidden
from reviewapp.models import Case, Membership, Message
from reviewapp.services import blind, cases, feedback, review, runs, trace
from reviewapp.services import review_queues as rq


def _answer(session, run):
    return session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                   Message.role == "assistant"))


@pytest.fixture
def world(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lea")
    ann = make.user(ws, Role.REVIEWER, username="ann")
    bob = make.user(ws, Role.REVIEWER, username="bob")
    run = make.run(ws)
    open_run = make.run(ws)  # in no blind queue
    queue, _ = rq.create_queue(session, make.actor(lead), ws.id, "Blind", {}, blind=True)
    rq.remove_run(session, make.actor(lead), queue.id, open_run.id)
    rq.add_runs(session, make.actor(lead), queue.id, [run.id])
    answer = _answer(session, run)
    # Ann rates the answer useful (a case is made), with a comment; also a citation.
    feedback.upsert_feedback(session, make.actor(ann), "chat_message", answer, None, "positive",
                             comment="Ann's secret comment")
    feedback.upsert_feedback(session, make.actor(ann), "citation", answer, "c1", "negative")
    feedback.upsert_feedback(session, make.actor(ann), "chat_message", _answer(session, open_run),
                             None, "positive")
    return type("W", (), dict(ws=ws, lead=lead, ann=ann, bob=bob, run=run, open_run=open_run,
                              queue=queue, answer=answer))


def _case_id(session, run):
    return session.scalar(select(Case.case_id).where(Case.diagnosis_id == run.run_id))


def test_blindness_is_decided_per_viewer(session, make, world):
    bob, ann, lead = make.actor(world.bob), make.actor(world.ann), make.actor(world.lead)
    assert blind.is_blind(session, bob, world.run.id) is True
    assert blind.is_blind(session, ann, world.run.id) is False  # she rated the answer
    assert blind.is_blind(session, lead, world.run.id) is False  # leads see everything
    assert blind.is_blind(session, bob, world.open_run.id) is False  # not in a blind queue
    assert blind.blind_runs(session, bob, [world.run.id, world.open_run.id]) == {world.run.id}


def test_every_reader_hides_others_until_bob_rates_the_answer(session, make, world):
    bob = make.actor(world.bob)
    run = world.run
    assert run.feedback == "useful" and _case_id(session, run) is not None

    detail = runs.get_run_detail(session, bob, run.id)
    assert detail.blind and detail.verdict is None and detail.case_id is None
    assert detail.summary == {}
    assert runs.get_timeline(session, bob, run.id).summary == {}
    verdict = runs.get_verdict(session, bob, run.id)
    assert verdict.verdict is None and verdict.blind
    state = review.target_state(session, bob, "chat_message", world.answer, None)
    assert state.summary is None
    got = trace.get_trace(session, bob, run.run_id)
    assert got.verdict is None and got.feedback == [] and got.has_feedback is False
    page = runs.list_runs(session, bob)
    assert page.blind == {run.id}
    useful = runs.list_runs(session, bob, filters=runs.RunFilters(feedback="useful"))
    assert [r.id for r in useful.runs] == [world.open_run.id]
    assert [row.case.case_id for row in cases.list_cases(session, bob).rows] == [
        _case_id(session, world.open_run)]
    with pytest.raises(Forbidden):
        cases.get_case(session, bob, _case_id(session, run))

    # Bob rates a citation: still blind (only the answer counts). His own rating shows.
    review.rate_target(session, bob, "citation", world.answer, "c2", "positive")
    got = trace.get_trace(session, bob, run.run_id)
    assert [(f.author, f.feedback.subject_key) for f in got.feedback] == [("bob", "c2")]
    assert runs.get_run_detail(session, bob, run.id).verdict is None

    # Bob rates the answer: everything shows.
    state = review.rate_target(session, bob, "chat_message", world.answer, None, "negative")
    assert state.summary.positive_reviewers == ("ann",)
    assert state.summary.negative_reviewers == ("bob",)
    detail = runs.get_run_detail(session, bob, run.id)
    assert not detail.blind and detail.verdict == run.feedback
    got = trace.get_trace(session, bob, run.run_id)
    assert sorted(f.author for f in got.feedback) == ["ann", "ann", "bob", "bob"]
    assert "Ann's secret comment" in [f.feedback.comment for f in got.feedback]
    assert runs.list_runs(session, bob).blind == frozenset()


def test_leads_and_the_rater_see_everything(session, make, world):
    for user in (world.lead, world.ann):
        actor = make.actor(user)
        detail = runs.get_run_detail(session, actor, world.run.id)
        assert not detail.blind and detail.verdict == "useful"
        assert detail.case_id == _case_id(session, world.run)
        assert sorted(f.author for f in trace.get_trace(session, actor, world.run.run_id)
                      .feedback) == ["ann", "ann"]


def test_a_queue_that_is_not_blind_hides_nothing(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ann, bob = make.user(ws, Role.REVIEWER), make.user(ws, Role.REVIEWER)
    run = make.run(ws)
    rq.create_queue(session, make.actor(lead), ws.id, "Open pair", {}, reviewers_per_run=2)
    feedback.upsert_feedback(session, make.actor(ann), "chat_message", _answer(session, run),
                             None, "negative")
    detail = runs.get_run_detail(session, make.actor(bob), run.id)
    assert not detail.blind and len(detail.summary) == 1


def test_rating_the_answer_of_an_aiops_run_without_report_ends_its_blindness(session, make, world):
    """An AIOps run without a report is rated on its answer (agreement's answer-level
    rule). Another run's report must not count: the blind rule's "has a report" check
    belongs to this run (it was uncorrelated, so any report anywhere kept Bob blind)."""
    bob, lead = make.actor(world.bob), make.actor(world.lead)
    make.aiops_run(world.ws)  # a run with a report, in no queue
    bare = make.aiops_run(world.ws, report=None)
    rq.add_runs(session, lead, world.queue.id, [bare.id])
    assert blind.is_blind(session, bob, bare.id) is True
    answer = _answer(session, bare)
    assert answer is not None
    feedback.upsert_feedback(session, bob, "chat_message", answer, None, "negative",
                             reason="incorrect")
    assert blind.is_blind(session, bob, bare.id) is False
    assert bare.id not in blind.blind_runs(session, bob, [bare.id, world.run.id])


def test_the_case_list_checks_blindness_only_where_a_run_can_be_blind(session, make, world):
    """``blind_workspaces``: a workspace the actor leads, or without a blind queue, has
    no blind run for them, so the case list leaves the per-row check out of its rows
    (issue 18); where a run can be blind the check stays and hides its case."""
    other = make.workspace()  # no blind queue
    led = make.workspace()
    for ws, role in ((other, Role.REVIEWER), (led, Role.LEAD)):
        session.add(Membership(user_id=world.bob.id, workspace_id=ws.id, role=role.value))
    session.commit()
    bob = make.actor(world.bob)
    assert blind.blind_workspaces(session, bob, [world.ws.id, other.id, led.id]) == (
        {led.id}, {world.ws.id})
    assert blind.blind_workspaces(session, make.actor(world.lead), [world.ws.id]) == (
        {world.ws.id}, frozenset())
    make.case(other, title="other's case")
    statements = []

    def listed(actor):
        from sqlalchemy import event

        from reviewapp.extensions import db

        def seen(conn, cursor, statement, *args):
            statements.append(statement)

        event.listen(db.engine, "before_cursor_execute", seen)
        try:
            return {row.case.title for row in cases.list_cases(session, actor).rows}
        finally:
            event.remove(db.engine, "before_cursor_execute", seen)

    titles = listed(bob)
    assert "other's case" in titles and len(titles) == 2  # the blind run's case is not
    case_reads = [s for s in statements if "FROM case_library" in s]
    # The count and the page: one workspace's arm of three checks blindness.
    assert case_reads and all(s.count("review_queue.blind") == 1 for s in case_reads)
    statements.clear()
    assert len(listed(make.actor(world.lead))) == 2  # both cases of world.ws
    case_reads = [s for s in statements if "FROM case_library" in s]
    assert case_reads and not any("review_queue.blind" in s for s in case_reads)
