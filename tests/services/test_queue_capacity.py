"""A queue asking N reviewers per run needs N people who may review it (issue: a new user
created a 3-reviewer queue in a workspace of two: its items could never complete), and a
refused queue form says everything wrong at once (one error per submit before)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from reviewapp.actors import Actor, Role
from reviewapp.errors import ValidationFailed
from reviewapp.models import ReviewQueue
from reviewapp.services import admin
from reviewapp.services import review_queues as rq

SYSTEM = Actor.system_actor()


@pytest.fixture
def team(session, make):
    """A workspace of a lead, two reviewers, an inactive reviewer and an admin of another
    workspace only: three people may review (lead, ann, bob)."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD, username="lead")
    ann = make.user(ws, Role.REVIEWER, username="ann")
    bob = make.user(ws, Role.REVIEWER, username="bob")
    gone = make.user(ws, Role.REVIEWER, username="gone")
    gone.active = False
    make.user(make.workspace(), Role.ADMIN, username="elsewhere")
    make.user(ws, Role.ADMIN, username="boss")
    session.commit()
    return type("T", (), dict(ws=ws, lead=lead, ann=ann, bob=bob, gone=gone,
                              actor=make.actor(lead)))


def _queues(session) -> int:
    return session.scalar(select(func.count()).select_from(ReviewQueue))


def test_a_queue_asks_no_more_reviewers_than_may_review(session, team):
    # lead, ann, bob and boss (admin) may review: 4 active members with reviewer role or above.
    queue, _ = rq.create_queue(session, team.actor, team.ws.id, "Four", reviewers_per_run=4)
    assert queue.reviewers_per_run == 4
    with pytest.raises(ValidationFailed) as refused:
        rq.create_queue(session, team.actor, team.ws.id, "Five", reviewers_per_run=5)
    assert refused.value.field == "reviewers_per_run"
    assert refused.value.reason == ("This queue asks 5 reviewers per run, but only 4 members of the "
                                    "workspace may review it: its items could never complete.")
    assert _queues(session) == 1


def test_named_reviewers_bound_the_reviewers_per_run(session, team):
    with pytest.raises(ValidationFailed) as refused:
        rq.create_queue(session, team.actor, team.ws.id, "Pair", reviewers_per_run=2,
                        reviewers="named", named=[team.ann.id])
    assert refused.value.field == "reviewers_per_run"
    assert refused.value.reason == ("This queue asks 2 reviewers per run, but only 1 named reviewer "
                                    "may review it: its items could never complete.")
    queue, _ = rq.create_queue(session, team.actor, team.ws.id, "Pair", reviewers_per_run=2,
                               reviewers="named", named=[team.ann.id, team.bob.id])
    # Raising N past the pool on edit is refused too; the queue stays as it was.
    with pytest.raises(ValidationFailed) as edit:
        rq.update_queue(session, team.actor, queue.id, reviewers_per_run=3)
    assert edit.value.field == "reviewers_per_run"
    session.refresh(queue)
    assert queue.reviewers_per_run == 2


def test_every_refused_field_is_reported_at_once(session, team):
    with pytest.raises(ValidationFailed) as refused:
        rq.create_queue(session, team.actor, team.ws.id, "  ", {"kind": "chatty"},
                        sample_percent=0, reviewers_per_run=2, reservation_minutes=0,
                        reviewers="named", named=[])
    problems = refused.value.problems
    assert sorted(problems) == ["name", "named", "reservation_minutes", "rule.kind",
                                "sample_percent"]
    assert problems["name"] == "Must be 1 to 120 characters."
    assert problems["named"] == "Name at least one reviewer, or let all review."
    assert refused.value.details == {"fields": problems}
    assert _queues(session) == 0


def test_the_check_alone_reports_without_writing(session, team):
    with pytest.raises(ValidationFailed) as refused:
        rq.check_queue(session, team.actor, team.ws.id, reviewers_per_run=5, reviewers="all",
                       named=[])
    assert list(refused.value.problems) == ["reviewers_per_run"]
    rq.check_queue(session, team.actor, team.ws.id, reviewers_per_run=2, reviewers="all")
    assert _queues(session) == 0


def test_a_queue_keeps_working_when_members_leave_and_says_it_cannot_complete(session, team):
    queue, _ = rq.create_queue(session, team.actor, team.ws.id, "Pair", reviewers_per_run=2,
                               reviewers="named", named=[team.ann.id, team.bob.id])
    assert rq.capacity(session, team.actor, queue.id) == rq.QueueCapacity(needed=2, able=2)
    admin.remove_member(session, SYSTEM, team.ws.id, team.bob.id)
    capacity = rq.capacity(session, team.actor, queue.id)
    assert capacity == rq.QueueCapacity(needed=2, able=1) and capacity.short
    # The queue stays, and a lead may still rename it without lowering N ...
    renamed, _ = rq.update_queue(session, team.actor, queue.id, name="Pair (one left)",
                                 reviewers_per_run=2, reviewers="named",
                                 named=[team.ann.id])
    assert renamed.name == "Pair (one left)"
    # ... but not raise N; letting everyone review fills it again.
    with pytest.raises(ValidationFailed):
        rq.update_queue(session, team.actor, queue.id, reviewers_per_run=3)
    rq.update_queue(session, team.actor, queue.id, reviewers="all")
    assert not rq.capacity(session, team.actor, queue.id).short


def test_a_taken_name_is_a_conflict_alone_and_one_more_field_beside_others(session, team):
    from reviewapp.errors import Conflict

    rq.create_queue(session, team.actor, team.ws.id, "Taken")
    with pytest.raises(Conflict):
        rq.create_queue(session, team.actor, team.ws.id, "Taken")
    with pytest.raises(ValidationFailed) as refused:
        rq.create_queue(session, team.actor, team.ws.id, "Taken", sample_percent=0)
    assert refused.value.problems == {
        "name": "The workspace already has a queue named 'Taken'.",
        "sample_percent": "Must be a whole number from 1 to 100."}
    assert _queues(session) == 1


def test_the_queues_list_carries_each_queues_capacity_for_its_leads(session, team, make):
    """The list where leads manage queues says which are short, from the same value as the
    queue's own page (``capacity``); a reviewer's rows carry none (not theirs to fix)."""
    pair, _ = rq.create_queue(session, team.actor, team.ws.id, "Pair", reviewers_per_run=2,
                              reviewers="named", named=[team.ann.id, team.bob.id])
    solo, _ = rq.create_queue(session, team.actor, team.ws.id, "Solo")
    admin.remove_member(session, SYSTEM, team.ws.id, team.bob.id)
    rows = {row.queue.name: row for row in rq.list_queues(session, team.actor)}
    assert rows["Pair"].capacity == rq.capacity(session, team.actor, pair.id) == rq.QueueCapacity(2, 1)
    assert rows["Pair"].capacity.short and rows["Pair"].capacity.reason
    assert rows["Solo"].capacity == rq.capacity(session, team.actor, solo.id)
    assert not rows["Solo"].capacity.short
    assert [row.capacity for row in rq.list_queues(session, make.actor(team.ann))] == [None, None]


def test_the_shortage_reads_one_reviewer_in_the_singular():
    """New-user finding: the queue page said "asks 1 reviewers per run"."""
    from reviewapp.services.queue_settings import capacity_reason

    assert capacity_reason(1, 0, "named").startswith("asks 1 reviewer per run, but ")
    assert capacity_reason(2, 1, "all").startswith("asks 2 reviewers per run, but ")
    assert rq.QueueCapacity(needed=1, able=0).reason.startswith("asks 1 reviewer per run")
