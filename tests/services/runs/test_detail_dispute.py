"""A disputed run on its page (issue 16, new-user finding): the header read "No verdict
yet" for a run whose team-review queue's reviewers split. The page's read model names the
dispute (its governing queue) exactly while the adjudication list holds the run, and
whether the viewer may open that list (a lead or an admin of the run's workspace)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import Message
from reviewapp.services import adjudication, feedback, runs
from reviewapp.services import review_queues as rq
from reviewapp.services.runs import Dispute


@pytest.fixture
def world(session, make):
    ws = make.workspace()
    lead, boss = make.user(ws, Role.LEAD, username="lea"), make.user(ws, Role.ADMIN, username="boss")
    ann, bob, cy = (make.user(ws, Role.REVIEWER, username=n) for n in ("ann", "bob", "cy"))
    run = make.run(ws, query="Why did checkout fail?")
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                     Message.role == "assistant"))

    def queue(**options):
        return rq.create_queue(session, make.actor(lead), ws.id, "Pairs", {},
                               reviewers_per_run=2, **options)[0]

    def rate(user, rating):
        feedback.upsert_feedback(session, make.actor(user), "chat_message", answer, None, rating)
        session.refresh(run)

    def seen_by(user):
        """(the page's dispute, the verdict badge's dispute) for ``user``."""
        return (runs.get_run_detail(session, make.actor(user), run.id).dispute,
                runs.get_verdict(session, make.actor(user), run.id).dispute)

    def listed():
        return [i.run.id for i in adjudication.disputed(session, make.actor(lead)).items]

    return type("W", (), dict(ws=ws, lead=lead, boss=boss, ann=ann, bob=bob, cy=cy, run=run,
                              queue=queue, rate=rate, seen_by=seen_by, listed=listed))


def test_a_split_run_is_disputed_on_its_page_until_a_lead_decides(session, make, world):
    queue = world.queue()
    assert world.seen_by(world.ann) == (None, None)
    world.rate(world.ann, "positive")
    assert world.seen_by(world.ann) == (None, None) and world.listed() == []  # 1 of 2
    world.rate(world.bob, "negative")
    assert world.run.feedback is None and world.listed() == [world.run.id]
    for user in (world.ann, world.bob, world.cy):  # reviewers: the badge, no way to decide
        assert world.seen_by(user) == (Dispute(queue.id, False),) * 2, user.username
    for user in (world.lead, world.boss):
        assert world.seen_by(user) == (Dispute(queue.id, True),) * 2, user.username
    adjudication.decide(session, make.actor(world.lead), world.run.id, "useful")
    assert world.listed() == []
    assert world.seen_by(world.ann) == (None, None) and world.seen_by(world.lead) == (None, None)


@pytest.mark.parametrize(("rule", "disputed"), [("tie", False), ("any_split", True)])
def test_a_majority_is_disputed_only_under_any_split(session, make, world, rule, disputed):
    queue = world.queue(dispute_rule=rule)
    world.rate(world.ann, "positive")
    world.rate(world.bob, "negative")
    world.rate(world.cy, "positive")
    assert world.run.feedback == (None if disputed else "useful")
    expected = Dispute(queue.id, False) if disputed else None
    assert world.seen_by(world.ann) == (expected, expected)
    assert world.listed() == ([world.run.id] if disputed else [])


def test_a_rating_that_does_not_count_for_a_named_queue_is_no_side(session, make, world):
    """A queue naming ann and bob: cy's rating (not named) makes no dispute with ann's."""
    queue = world.queue(reviewers="named", named=[world.ann.id, world.bob.id])
    world.rate(world.ann, "positive")
    world.rate(world.cy, "negative")
    assert world.seen_by(world.lead) == (None, None) and world.listed() == []
    world.rate(world.bob, "negative")
    assert world.seen_by(world.lead) == (Dispute(queue.id, True),) * 2
    assert world.listed() == [world.run.id]


def test_a_blind_reviewer_who_has_not_rated_sees_no_dispute(session, make, world):
    queue = world.queue(blind=True)
    world.rate(world.ann, "positive")
    world.rate(world.bob, "negative")
    detail = runs.get_run_detail(session, make.actor(world.cy), world.run.id)
    assert (detail.blind, detail.dispute) == (True, None)
    assert runs.get_verdict(session, make.actor(world.cy), world.run.id).dispute is None
    assert world.seen_by(world.ann) == (Dispute(queue.id, False),) * 2
    assert world.seen_by(world.lead) == (Dispute(queue.id, True),) * 2


def test_a_run_of_a_one_reviewer_queue_is_never_disputed(session, make, world):
    rq.create_queue(session, make.actor(world.lead), world.ws.id, "Singles", {})
    world.rate(world.ann, "positive")
    world.rate(world.bob, "negative")
    assert world.run.feedback == "not_useful"
    assert world.seen_by(world.lead) == (None, None)
