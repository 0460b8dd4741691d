"""Bulk "Add to queue" with a run a queue cannot take among the checked ones (new-user
walk, 38_add_failed_running): the banner named only the refused run, and the valid run
was silently not added either. The rule stays what it was — one refused run refuses the
whole add, nothing is added — and the refusal says so: nothing was added, how many of
the checked runs were refused and why, naming every one of them (it cut the list at
five, "and 2 more", which left the lead hunting for the rest)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.errors import ValidationFailed
from reviewapp.models import QueueItem
from reviewapp.services import review_queues as rq


def _failed(make, ws, run_id):
    """A FAILED AIOps run with no answer and no report: nothing to rate at answer level."""
    return make.aiops_run(ws, run_id, status="FAILED", answer=None, report=None)


def _items(session, queue):
    return list(session.scalars(select(QueueItem.run_pk).where(QueueItem.queue_id == queue.id)))


def test_one_refused_run_refuses_the_add_and_the_refusal_says_nothing_was_added(session, make):
    ws = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    good, bad = make.run(ws, "good-1"), _failed(make, ws, "failed-1")
    queue, _ = rq.create_queue(session, lead, ws.id, "Picked", {"kind": "aiops", "status": "SUCCESS"})
    with pytest.raises(ValidationFailed) as refused:
        rq.add_runs(session, lead, queue.id, [good.id, bad.id])
    assert refused.value.field == "runs"
    assert refused.value.reason == (
        "Nothing was added: 1 of the 2 checked runs has nothing to rate at answer level "
        "(no answer, no report), so its item could never complete: failed-1. "
        "Uncheck it and add again.")
    assert _items(session, queue) == []
    assert rq.add_runs(session, lead, queue.id, [good.id]) == 1


def test_every_refused_run_is_named(session, make):
    ws = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    bad = [_failed(make, ws, f"failed-{i}") for i in range(7)]
    queue, _ = rq.create_queue(session, lead, ws.id, "Picked", {"kind": "chat"})
    with pytest.raises(ValidationFailed) as refused:
        rq.add_runs(session, lead, queue.id, [run.id for run in bad])
    assert refused.value.reason == (
        "Nothing was added: none of the 7 checked runs has anything to rate at answer level "
        "(no answer, no report), so their items could never complete: "
        + ", ".join(f"failed-{i}" for i in range(7)) + ".")
    assert _items(session, queue) == []
    with pytest.raises(ValidationFailed) as one:
        rq.add_runs(session, lead, queue.id, [bad[0].id])
    assert one.value.reason == (
        "Nothing was added: the checked run has nothing to rate at answer level "
        "(no answer, no report), so its item could never complete: failed-0.")
