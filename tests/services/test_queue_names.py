"""A queue's name is trimmed and unique in its workspace ignoring case (new-user walk:
"Team review" and "team review " were both accepted and both listed). Create and
rename refuse a name another queue of the workspace has, whatever its case and spaces,
naming that queue as it is stored; another workspace may use it. Duplicates saved before
this rule stay editable: a queue keeps its own name (any case) without a refusal."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.errors import Conflict, ValidationFailed
from reviewapp.models import ReviewQueue
from reviewapp.services import review_queues as rq

TAKEN = "The workspace already has a queue named 'Team review'."


def _names(session, ws):
    return sorted(session.scalars(select(ReviewQueue.name).where(ReviewQueue.workspace_id == ws.id)))


def test_create_refuses_a_name_taken_ignoring_case_and_spaces(session, make):
    ws = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    queue, _ = rq.create_queue(session, lead, ws.id, "  Team review ")
    assert queue.name == "Team review"
    for name in ("team review ", "TEAM REVIEW", "Team review", "\tteam Review"):
        with pytest.raises(Conflict) as taken:
            rq.create_queue(session, lead, ws.id, name)
        assert taken.value.message == TAKEN
        session.rollback()
    with pytest.raises(ValidationFailed) as refused:  # beside another refused field
        rq.create_queue(session, lead, ws.id, "team review", sample_percent=0)
    assert refused.value.problems["name"] == TAKEN
    session.rollback()
    with pytest.raises(Conflict):  # the check without saving says the same
        rq.check_queue(session, lead, ws.id, name="team REVIEW")
    session.rollback()
    assert _names(session, ws) == ["Team review"]
    other = make.workspace()
    elsewhere, _ = rq.create_queue(session, make.actor(make.user(other, Role.LEAD)), other.id,
                                   "team review")
    assert elsewhere.name == "team review"


def test_rename_refuses_a_name_taken_ignoring_case_but_a_queue_keeps_its_own(session, make):
    ws = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    rq.create_queue(session, lead, ws.id, "Team review")
    mine, _ = rq.create_queue(session, lead, ws.id, "Mine")
    with pytest.raises(Conflict) as taken:
        rq.update_queue(session, lead, mine.id, name=" team REVIEW")
    assert taken.value.message == TAKEN
    session.rollback()
    renamed, _ = rq.update_queue(session, lead, mine.id, name="MINE ")
    assert renamed.name == "MINE"
    assert _names(session, ws) == ["MINE", "Team review"]


def test_duplicates_saved_before_the_rule_stay_editable(session, make):
    ws = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    first, _ = rq.create_queue(session, lead, ws.id, "Team review")
    second = ReviewQueue(workspace_id=ws.id, name="team review ", rule={})  # as saved before
    session.add(second)
    session.commit()
    # Each keeps its name through an edit of something else (the form sends the name too)...
    rq.update_queue(session, lead, second.id, name="team review ", sample_percent=50)
    rq.update_queue(session, lead, first.id, name="Team review", blind=True)
    assert sorted(row.queue.name for row in rq.list_queues(session, lead)) == \
        ["Team review", "team review"]  # trimmed as it is saved
    session.refresh(first)
    session.refresh(second)
    assert (first.blind, second.sample_percent) == (True, 50)
    # ... and a third is refused, naming the first of them.
    with pytest.raises(Conflict) as taken:
        rq.create_queue(session, lead, ws.id, "TEAM review")
    assert taken.value.message == TAKEN
