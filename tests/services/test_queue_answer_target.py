"""Review queues take in only runs with an answer-level target (session 11 new user's
finding). A queue completes an item on answer-level ratings (``queue_completion``: a
chat run's answer message, an AIOps run's report, or its answer when it has no report),
so a run with nothing to rate there (the demo's ``demo-aiops-disk-pressure``: FAILED, one
step, no answer, no report) stayed 0/1 forever, "next" skipped it and the queue's
progress stuck below 100 %. Now the fill rule (``runs.queue_fill``) asks for an
answer-level target at the initial fill, for each run offered by ingest and on a
refill; a finished run that loses its target leaves the queue's open items; a lead
cannot add such a run by hand.

Expected values worked out from the demo runs (``services.demo.DEMO_RUNS``): three chat
runs with an answer message, ``demo-aiops-payment-errors`` (SUCCESS, a report),
``demo-aiops-disk-pressure`` (FAILED, a step only) and ``demo-chat-running``."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Actor, Role
from reviewapp.errors import ValidationFailed
from reviewapp.models import DiagnosticReport, QueueAssignment, QueueItem, Run
from reviewapp.models.base import utcnow
from reviewapp.services import demo, feedback
from reviewapp.services import review_queues as rq
from reviewapp.services.demo import DEMO_RUNS

SYSTEM = Actor.system_actor()
DISK = "demo-aiops-disk-pressure"
PAYMENT = "demo-aiops-payment-errors"
CHATS = ("demo-chat-checkout-502", "demo-chat-redis-rotate", "demo-chat-latency-zh")


def _pk(session, ws, run_id):
    return session.scalar(select(Run.id).where(Run.workspace_id == ws.id, Run.run_id == run_id))


def _items(session, queue):
    """The run ids (strings) of the queue's items, sorted."""
    return sorted(session.scalars(select(Run.run_id).join(QueueItem, QueueItem.run_pk == Run.id)
                                  .where(QueueItem.queue_id == queue.id)))


def _doc(run_id, **changes):
    body = next({k: v for k, v in d.items() if k != "run_id"} for d in DEMO_RUNS
                if d["run_id"] == run_id)
    return {**body, **changes}


@pytest.fixture
def people(make, ws):
    lead = make.actor(make.user(ws, Role.LEAD, username="lea"))
    ann = make.actor(make.user(ws, Role.REVIEWER, username="ann"))
    return lead, ann


def test_the_initial_fill_leaves_out_a_run_with_no_answer_level_target(session, ws, people):
    lead, ann = people
    demo.load(session, SYSTEM, ws.id)
    aiops, added = rq.create_queue(session, lead, ws.id, "AIOps", {"kind": "aiops"})
    assert added == 1 and _items(session, aiops) == [PAYMENT]  # not the disk-pressure run
    everything, added_all = rq.create_queue(session, lead, ws.id, "All", {})
    assert added_all == 4 and _items(session, everything) == sorted([*CHATS, PAYMENT])
    # Rating the one report completes the AIOps queue: 1 of 1, not 1 of 2.
    report = session.scalar(select(DiagnosticReport.id).where(
        DiagnosticReport.run_pk == _pk(session, ws, PAYMENT)))
    feedback.upsert_feedback(session, ann, "diagnostic_report", report, None, "positive")
    p = rq.progress(session, lead, aiops.id)
    assert (p.items, p.complete, p.left) == (1, 1, 0)
    assert rq.next_item(session, ann, aiops.id, now=utcnow()) is None


def test_an_ingested_run_enters_only_with_an_answer_level_target(session, make, ws, people):
    lead, _ = people
    aiops, added = rq.create_queue(session, lead, ws.id, "AIOps", {"kind": "aiops"})
    assert added == 0
    demo.load(session, SYSTEM, ws.id)  # each run offered to the queue as it is stored
    assert _items(session, aiops) == [PAYMENT]
    # Re-ingested with a report: it has something to rate now, and enters.
    make.run(ws, DISK, **_doc(DISK, report={"content": "# Disk\nnode-7 unreachable."}))
    assert _items(session, aiops) == sorted([DISK, PAYMENT])


def test_a_refill_leaves_it_out_too(session, ws, people):
    lead, _ = people
    demo.load(session, SYSTEM, ws.id)
    queue, added = rq.create_queue(session, lead, ws.id, "Chat", {"kind": "chat"})
    assert added == 3
    _, refilled = rq.update_queue(session, lead, queue.id, rule={"kind": "aiops"})
    assert refilled == 1 and _items(session, queue) == sorted([*CHATS, PAYMENT])
    _, again = rq.update_queue(session, lead, queue.id, rule={"status": "FAILED"})
    assert again == 0 and DISK not in _items(session, queue)


def test_a_finished_run_that_loses_its_answer_leaves_the_open_items(session, make, ws, people):
    """An AIOps run with no report whose answer is an agent message, re-sent without it
    (unrated, so it goes; its step stays, so the run is still "rateable"): its open item
    leaves, with the reservation and the assignment on it; sent again with an answer, it
    comes back by the rule."""
    lead, ann = people
    steps = [{"id": "s1", "name": "Look", "status": "done", "summary": "disk 93 %"}]
    said = [{"id": "a1", "role": "assistant", "content": "Rotate the logs."}]
    run = make.aiops_run(ws, "lose-1", answer=None, report=None, messages=said, steps=steps)
    kept = make.aiops_run(ws, "keep-1")
    queue, added = rq.create_queue(session, lead, ws.id, "AIOps", {"kind": "aiops"},
                                   assignment="round_robin")
    assert added == 2 and _items(session, queue) == ["keep-1", "lose-1"]
    held = rq.next_item(session, ann, queue.id, now=utcnow())
    assert held is not None and held.run_pk == run.id
    held_id = held.id
    assigned = select(QueueAssignment.id).where(QueueAssignment.item_id == held_id)
    assert session.scalar(assigned) is not None  # round-robin: dealt to ann
    make.aiops_run(ws, "lose-1", answer=None, report=None, messages=[], steps=steps)
    assert session.scalar(select(Run.rateable).where(Run.id == run.id)) is True
    assert _items(session, queue) == ["keep-1"]
    assert session.scalar(assigned) is None
    p = rq.progress(session, lead, queue.id)
    assert (p.items, p.complete, p.reserved) == (1, 0, 0)
    # The answer is back (as the run's answer field): the rule takes it in again.
    make.aiops_run(ws, "lose-1", answer="Rotate the logs.", report=None, messages=[], steps=steps)
    assert _items(session, queue) == ["keep-1", "lose-1"]
    back = session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id,
                                                  QueueItem.run_pk == run.id))
    assert back.source == "rule" and back.id != held_id
    assert kept.id in set(session.scalars(select(QueueItem.run_pk)))


def test_a_running_run_added_by_hand_stays_while_it_runs(session, make, ws, people):
    lead, _ = people
    live = make.run(ws, "live-1", answer=None, status="RUNNING",
                    messages=[{"id": "u1", "role": "user", "content": "Healthy?"}])
    queue, added = rq.create_queue(session, lead, ws.id, "Live", {"kind": "chat"})
    assert added == 0
    assert rq.add_runs(session, lead, queue.id, [live.id]) == 1
    make.run(ws, "live-1", answer=None, status="RUNNING",  # a partial re-send
             messages=[{"id": "u1", "role": "user", "content": "Healthy? (again)"}])
    assert _items(session, queue) == ["live-1"]


def test_a_lead_cannot_add_a_finished_run_with_nothing_to_rate_by_hand(session, ws, people):
    lead, _ = people
    demo.load(session, SYSTEM, ws.id)
    queue, _ = rq.create_queue(session, lead, ws.id, "Chat", {"kind": "chat"})
    disk, payment = _pk(session, ws, DISK), _pk(session, ws, PAYMENT)
    with pytest.raises(ValidationFailed) as refused:
        rq.add_runs(session, lead, queue.id, [payment, disk])
    assert refused.value.field == "runs" and DISK in refused.value.message
    assert PAYMENT not in refused.value.message
    assert _items(session, queue) == sorted(CHATS)  # nothing added
    assert rq.add_runs(session, lead, queue.id, [payment]) == 1
