"""Review queues (issue 16): rules that fill them, deterministic sampling, no duplicates,
reservations and their expiry, the race for the next item, completion with N."""

from __future__ import annotations

import hashlib
import threading
from datetime import timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from reviewapp.actors import Actor, Role
from reviewapp.db_setup import write_intent
from reviewapp.domain.queues import in_sample, sample_slot
from reviewapp.errors import Conflict, Forbidden, ValidationFailed
from reviewapp.extensions import db
from reviewapp.models import QueueAssignment, QueueItem
from reviewapp.models.base import utcnow
from reviewapp.services import review_queues as rq
from reviewapp.services import runs

SYSTEM = Actor.system_actor()


def _slot(queue_id, run_pk):
    """The sample slot, recomputed here from its definition."""
    digest = hashlib.sha256(f"review-queue:{queue_id}:run:{run_pk}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % 100


def test_sampling_is_deterministic_and_nested():
    for q in range(1, 4):
        for pk in range(1, 300):
            assert sample_slot(q, pk) == _slot(q, pk)
            assert in_sample(q, pk, 100)
            if in_sample(q, pk, 30):
                assert in_sample(q, pk, 60)
    share = sum(in_sample(1, pk, 30) for pk in range(1, 2001)) / 2000
    assert 0.25 < share < 0.35


@pytest.fixture
def world(session, make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    reviewers = [make.user(ws, Role.REVIEWER, username=n) for n in ("ann", "bob", "cy")]
    chat = [make.run(ws) for _ in range(6)]
    aiops = make.aiops_run(ws)
    running = make.run(ws, status="RUNNING")
    other = make.workspace()
    foreign = make.run(other)
    return type("W", (), dict(ws=ws, lead=lead, reviewers=reviewers, chat=chat, aiops=aiops,
                              running=running, other=other, foreign=foreign))


def _items(session, queue):
    return sorted(session.scalars(select(QueueItem.run_pk).where(QueueItem.queue_id == queue.id)))


def test_rule_fills_from_existing_runs_once(session, make, world):
    lead = make.actor(world.lead)
    queue, added = rq.create_queue(session, lead, world.ws.id, "Chat answers", {"kind": "chat"})
    expected = sorted(r.id for r in world.chat)  # not AIOps, not RUNNING, not foreign
    assert added == 6 and _items(session, queue) == expected
    assert queue.rule == {"kind": "chat"}
    items = session.scalars(select(QueueItem).where(QueueItem.queue_id == queue.id)).all()
    assert {i.source for i in items} == {"rule"} and all(i.created_at for i in items)
    # Applying the rule again adds nothing (no duplicates, same sample).
    assert rq.fill(session, queue) == 0 and _items(session, queue) == expected


def test_sample_rate_picks_the_same_runs_every_time(session, make, world):
    lead = make.actor(world.lead)
    queue, _ = rq.create_queue(session, lead, world.ws.id, "Half", sample_percent=50)
    rateable = [r.id for r in world.chat] + [world.aiops.id]
    assert _items(session, queue) == sorted(pk for pk in rateable if _slot(queue.id, pk) < 50)
    before = _items(session, queue)
    rq.fill(session, queue)
    assert _items(session, queue) == before


def test_new_and_newly_finished_runs_enter(session, make, world):
    lead = make.actor(world.lead)
    queue, _ = rq.create_queue(session, lead, world.ws.id, "Chat", {"kind": "chat"})
    fresh = make.run(world.ws)
    assert fresh.id in _items(session, queue)
    assert world.running.id not in _items(session, queue)
    runs.finish_run(session, SYSTEM, world.ws.id, world.running.run_id,
                    {"status": "SUCCESS", "answer": "Done."})
    assert world.running.id in _items(session, queue)
    make.aiops_run(world.ws)  # does not match the rule
    assert len(_items(session, queue)) == 8
    # Re-ingesting a run already in the queue does not add it twice.
    make.run(world.ws, fresh.run_id, query="Changed question?")
    assert _items(session, queue).count(fresh.id) == 1


def test_manual_add_and_remove(session, make, world):
    lead = make.actor(world.lead)
    queue, _ = rq.create_queue(session, lead, world.ws.id, "Failed only", {"status": "FAILED"})
    assert _items(session, queue) == []
    assert rq.add_runs(session, lead, queue.id, [world.chat[0].id, world.chat[1].id]) == 2
    assert rq.add_runs(session, lead, queue.id, [world.chat[0].id, str(world.aiops.id)]) == 1
    item = session.scalar(select(QueueItem).where(QueueItem.run_pk == world.aiops.id))
    assert item.source == "manual" and item.added_by == world.lead.id
    with pytest.raises(Forbidden):
        rq.add_runs(session, lead, queue.id, [world.foreign.id])
    with pytest.raises(ValidationFailed):
        rq.add_runs(session, lead, queue.id, ["abc"])
    with pytest.raises(Forbidden):
        rq.add_runs(session, make.actor(world.reviewers[0]), queue.id, [world.chat[2].id])
    assert rq.remove_run(session, lead, queue.id, world.chat[0].id) is True
    assert rq.remove_run(session, lead, queue.id, world.chat[0].id) is False
    assert _items(session, queue) == sorted([world.chat[1].id, world.aiops.id])


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"name": ""}, "name"), ({"name": "x" * 121}, "name"),
    ({"rule": {"kind": "video"}}, "rule.kind"), ({"rule": {"score_min": "200"}}, "rule.score_min"),
    ({"rule": {"workspace": "1"}}, "rule.workspace"), ({"rule": {"reviewed": "mine"}}, "rule.reviewed"),
    ({"rule": {"colour": "red"}}, "rule.colour"), ({"rule": ["kind"]}, "rule"),
    ({"sample_percent": 0}, "sample_percent"), ({"reviewers_per_run": 6}, "reviewers_per_run"),
    ({"reservation_minutes": 0}, "reservation_minutes"), ({"blind": "yes"}, "blind"),
])
def test_bad_input_names_the_field(session, make, world, kwargs, field):
    args = {"name": "Q", **kwargs}
    with pytest.raises(ValidationFailed) as caught:
        rq.create_queue(session, make.actor(world.lead), world.ws.id, **args)
    assert caught.value.field == field


def test_create_access_and_duplicate_name(session, make, world):
    with pytest.raises(Forbidden):
        rq.create_queue(session, make.actor(world.reviewers[0]), world.ws.id, "Q")
    with pytest.raises(Forbidden):
        rq.create_queue(session, make.actor(make.user(world.other, Role.LEAD)), world.ws.id, "Q")
    rq.create_queue(session, make.actor(world.lead), world.ws.id, "Q")
    with pytest.raises(Conflict):
        rq.create_queue(session, make.actor(world.lead), world.ws.id, "Q")


def _queue(session, make, world, n=1, minutes=10):
    queue, _ = rq.create_queue(session, make.actor(world.lead), world.ws.id, f"N{n}",
                               {"kind": "chat"}, reviewers_per_run=n, reservation_minutes=minutes)
    return queue


def test_reservations_and_expiry(session, make, world):
    queue = _queue(session, make, world)
    ann, bob, cy = (make.actor(u) for u in world.reviewers)
    now = utcnow()
    first = rq.next_item(session, ann, queue.id, now=now)
    assert first.run_pk == world.chat[0].id and first.reserved_by == world.reviewers[0].id
    assert first.reserved_until == now + timedelta(minutes=10)
    # Asking again returns the item ann holds; bob gets the next one.
    assert rq.next_item(session, ann, queue.id, now=now).id == first.id
    second = rq.next_item(session, bob, queue.id, now=now)
    assert second.run_pk == world.chat[1].id
    # Nine minutes later ann's reservation still holds; at ten it is free for cy.
    assert rq.next_item(session, cy, queue.id, now=now + timedelta(minutes=9)).run_pk \
        == world.chat[2].id
    rq.release(session, cy, rq.next_item(session, cy, queue.id, now=now).id)
    later = now + timedelta(minutes=10)
    assert rq.next_item(session, cy, queue.id, now=later).id == first.id
    # ann's renewal fails (cy holds it now); bob renews his.
    with pytest.raises(Conflict):
        rq.renew(session, ann, first.id, now=later)
    assert rq.renew(session, bob, second.id, now=later) == later + timedelta(minutes=10)
    # Release (skip) frees the item at once.
    assert rq.release(session, bob, second.id) is True
    assert rq.release(session, bob, second.id) is False
    assert rq.next_item(session, ann, queue.id, now=later).id == second.id
    with pytest.raises(Forbidden):
        rq.next_item(session, make.actor(make.user(world.other)), queue.id)


def test_completion_with_two_reviewers(session, make, world):
    queue = _queue(session, make, world, n=2)
    ann, bob, cy = world.reviewers
    now = utcnow()
    item = rq.next_item(session, make.actor(ann), queue.id, now=now)
    make.feedback_row(world.chat[0], ann, rating="positive")
    # ann has rated: her next item is another; bob may take the one she still holds.
    assert rq.next_item(session, make.actor(ann), queue.id, now=now).run_pk == world.chat[1].id
    assert rq.next_item(session, make.actor(bob), queue.id, now=now).id == item.id
    # A citation rating is no answer rating: the item is not complete yet.
    make.feedback_row(world.chat[0], bob, rating="negative", target_type="citation",
                      subject_key="c1")
    assert rq.progress(session, make.actor(bob), queue.id, now=now).complete == 0
    make.feedback_row(world.chat[0], bob, rating="negative")
    p = rq.progress(session, make.actor(ann), queue.id, now=now)
    assert (p.items, p.complete, p.mine) == (6, 1, 1)
    # Complete: nobody is offered it again.
    seen = set()
    for _ in range(6):
        got = rq.next_item(session, make.actor(cy), queue.id, now=now)
        if got is None:
            break
        seen.add(got.run_pk)
        rq.release(session, make.actor(cy), got.id)
        make.feedback_row(make_run := session.get(type(world.chat[0]), got.run_pk), cy)
        assert make_run.id == got.run_pk
    assert world.chat[0].id not in seen


def _held(session, user, queue, now):
    """Ids of the queue's items the user holds at ``now``, as stored."""
    session.expire_all()
    return sorted(session.scalars(select(QueueItem.id).where(
        QueueItem.queue_id == queue.id, QueueItem.reserved_by == user.id,
        QueueItem.reserved_until > now)))


def test_one_held_item_per_reviewer_per_queue(session, make, world):
    """Asking again hands back the item I hold; once I have rated it (done for me, the
    queue still waits for a second reviewer) the next item is another and the one I rated
    is no longer mine (the walk-through: it stayed reserved to me for ten minutes, shown
    as "holding now 2"). Another queue keeps its own held item."""
    queue = _queue(session, make, world, n=2)
    ann, bob = world.reviewers[:2]
    now = utcnow()
    first = rq.next_item(session, make.actor(ann), queue.id, now=now)
    assert rq.next_item(session, make.actor(ann), queue.id, now=now).id == first.id
    assert _held(session, ann, queue, now) == [first.id]
    make.feedback_row(world.chat[0], ann, rating="positive")
    second = rq.next_item(session, make.actor(ann), queue.id, now=now)
    assert second.run_pk == world.chat[1].id
    assert _held(session, ann, queue, now) == [second.id]
    holding = {r.username: r.holding for r in rq.reviewer_progress(
        session, make.actor(world.lead), queue.id, now=now)}
    assert holding["ann"] == 1
    # The item ann rated goes to bob, who then holds it alone.
    assert rq.next_item(session, make.actor(bob), queue.id, now=now).id == first.id
    assert _held(session, bob, queue, now) == [first.id]
    # A second queue: ann holds one item there too, and keeps the first queue's.
    other, _ = rq.create_queue(session, make.actor(world.lead), world.ws.id, "Other",
                               {"kind": "chat"})
    there = rq.next_item(session, make.actor(ann), other.id, now=now)
    assert _held(session, ann, other, now) == [there.id]
    assert _held(session, ann, queue, now) == [second.id]


def test_two_reviewers_never_get_the_same_reservation(app, session, make, world):
    """Both ask at the same instant, each on its own connection, for a queue of one item."""
    queue, _ = rq.create_queue(session, make.actor(world.lead), world.ws.id, "One",
                               {"kind": "aiops"})
    assert _items(session, queue) == [world.aiops.id]
    actors = [make.actor(u) for u in world.reviewers[:2]]
    queue_id = queue.id  # plain values only: the threads must not touch this session
    session.commit()
    results: list = [None, None]
    errors: list = []
    barrier = threading.Barrier(2)

    def ask(index):
        try:
            # As a state-changing request runs it (web/hooks.py): BEGIN IMMEDIATE on SQLite.
            with app.app_context(), write_intent(), Session(db.engine) as own:
                barrier.wait()
                got = rq.next_item(own, actors[index], queue_id)
                results[index] = (got.id, got.reserved_by) if got else None
        except Exception as exc:  # reported below
            errors.append(exc)

    for _ in range(5):
        threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert sum(r is not None for r in results) == 1, results
        session.rollback()  # a fresh snapshot: see what the two connections wrote
        holder = session.scalar(select(QueueItem.reserved_by).where(QueueItem.queue_id == queue.id))
        assert holder == next(r[1] for r in results if r is not None)
        for i in range(2):
            rq.release(session, actors[i], session.scalar(
                select(QueueItem.id).where(QueueItem.queue_id == queue.id)))
        results[:] = [None, None]


def test_rule_with_failed_calls_and_text(session, make, world):
    call = {"id": "fq-1", "tool_name": "query_logs", "status": "failed", "arguments": {},
            "error": "Error: timeout", "started_at": "2026-11-27T10:00:00Z",
            "completed_at": "2026-11-27T10:00:01Z"}
    failing = make.run(world.ws, query="Why is checkout slow?", tool_calls=[call])
    make.run(world.ws, query="Why is checkout slow again?")
    queue, added = rq.create_queue(session, make.actor(world.lead), world.ws.id, "Failing",
                                   {"failed_calls": "yes", "q": "checkout"})
    assert queue.rule == {"failed_calls": "yes", "q": "checkout"}
    assert added == 1 and _items(session, queue) == [failing.id]


def _answer_id(session, run):
    from reviewapp.models import Message

    return session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                   Message.role == "assistant"))


def _stored(session, item_id):
    session.rollback()
    return session.execute(select(QueueItem.ratings_count, QueueItem.completed_at)
                           .where(QueueItem.id == item_id)).one()


def test_completion_is_stored_by_the_feedback_services(session, make, world):
    """Ratings through ``upsert_feedback`` / ``delete_feedback`` keep each item's count of
    answer raters and ``completed_at``; ``item_completion`` reads them."""
    from reviewapp.services import feedback
    from reviewapp.services.queue_completion import item_completion

    two = _queue(session, make, world, n=2)
    one = _queue(session, make, world, n=1)
    run = world.chat[0]
    item2 = session.scalar(select(QueueItem).where(QueueItem.queue_id == two.id,
                                                   QueueItem.run_pk == run.id))
    item1 = session.scalar(select(QueueItem).where(QueueItem.queue_id == one.id,
                                                   QueueItem.run_pk == run.id))
    ann, bob, cy = (make.actor(u) for u in world.reviewers)
    answer = _answer_id(session, run)
    first = feedback.upsert_feedback(session, ann, "chat_message", answer, None, "positive")
    assert _stored(session, item2.id)[0] == 1 and _stored(session, item2.id)[1] is None
    assert _stored(session, item1.id)[1] is not None  # N = 1: complete at once
    c = item_completion(session, item2)
    assert (c.count, c.needed, c.complete) == (1, 2, False)
    # The same reviewer again (a thumb switch), and a citation: still one rater.
    feedback.upsert_feedback(session, ann, "chat_message", answer, None, "negative")
    feedback.upsert_feedback(session, cy, "citation", answer, "c1", "negative")
    assert _stored(session, item2.id) == (1, None)
    feedback.upsert_feedback(session, bob, "chat_message", answer, None, "negative")
    count, completed = _stored(session, item2.id)
    assert count == 2 and completed is not None
    assert item_completion(session, item2).complete is True
    # Another rater keeps the first completion time; a delete below N clears it.
    feedback.upsert_feedback(session, cy, "chat_message", answer, None, "positive")
    assert _stored(session, item2.id) == (3, completed)
    feedback.delete_feedback(session, ann, first.id)
    assert _stored(session, item2.id) == (2, completed)
    bobs = session.scalar(select(type(first).id).where(type(first).author_id == world.reviewers[1].id,
                                                       type(first).target_type == "chat_message"))
    feedback.delete_feedback(session, bob, bobs)
    assert _stored(session, item2.id) == (1, None)
    assert _stored(session, item1.id)[0] == 1 and _stored(session, item1.id)[1] is not None
    # An AIOps run: its report is the answer-level target.
    aiops_item = session.scalar(select(QueueItem).where(QueueItem.queue_id == one.id,
                                                        QueueItem.run_pk == world.aiops.id))
    assert aiops_item is None  # the rule is chat only
    assert rq.add_runs(session, make.actor(world.lead), one.id, [world.aiops.id]) == 1
    from reviewapp.models import DiagnosticReport
    report = session.scalar(select(DiagnosticReport.id).where(DiagnosticReport.run_pk == world.aiops.id))
    feedback.upsert_feedback(session, ann, "diagnostic_report", report, None, "positive")
    aiops_item = session.scalar(select(QueueItem.id).where(QueueItem.queue_id == one.id,
                                                           QueueItem.run_pk == world.aiops.id))
    assert _stored(session, aiops_item)[0] == 1 and _stored(session, aiops_item)[1] is not None


def test_a_run_rated_before_it_entered_gets_its_count(session, make, world):
    run = world.chat[3]
    make.feedback_row(run, world.reviewers[0], rating="positive")
    make.feedback_row(run, world.reviewers[1], rating="negative")
    queue, _ = rq.create_queue(session, make.actor(world.lead), world.ws.id, "Later",
                               {"status": "FAILED"}, reviewers_per_run=2)
    assert rq.add_runs(session, make.actor(world.lead), queue.id, [run.id, world.chat[4].id]) == 2
    items = dict(session.execute(select(QueueItem.run_pk, QueueItem.ratings_count)
                                 .where(QueueItem.queue_id == queue.id)).all())
    assert items == {run.id: 2, world.chat[4].id: 0}
    assert rq.progress(session, make.actor(world.reviewers[0]), queue.id).complete == 1
    # Filled by its rule at creation too.
    filled, _ = rq.create_queue(session, make.actor(world.lead), world.ws.id, "All chat",
                                {"kind": "chat"}, reviewers_per_run=3)
    counts = dict(session.execute(select(QueueItem.run_pk, QueueItem.ratings_count)
                                  .where(QueueItem.queue_id == filled.id)).all())
    assert counts[run.id] == 2 and sum(counts.values()) == 2
    assert rq.progress(session, make.actor(world.reviewers[0]), filled.id).complete == 0


def _run_of(session, item):
    return None if item is None else item.run_pk


def test_named_reviewers_only_they_may_review(session, make, world):
    ann, bob, cy = world.reviewers
    queue, _ = rq.create_queue(session, make.actor(world.lead), world.ws.id, "Named",
                               {"kind": "chat"}, reviewers="named", named=[bob.id, ann.id])
    assert rq.next_item(session, make.actor(bob), queue.id).run_pk == world.chat[0].id
    assert rq.next_item(session, make.actor(ann), queue.id).run_pk == world.chat[1].id
    with pytest.raises(Forbidden):
        rq.next_item(session, make.actor(cy), queue.id)
    with pytest.raises(Forbidden):  # a lead who is not named does not review it either
        rq.next_item(session, make.actor(world.lead), queue.id)
    stranger = make.user(world.other, Role.REVIEWER, username="stranger")
    with pytest.raises(ValidationFailed) as caught:
        rq.create_queue(session, make.actor(world.lead), world.ws.id, "X", named=[stranger.id],
                        reviewers="named")
    # No user id in the message, and no name from outside the workspace.
    assert (caught.value.field, caught.value.reason) == (
        "named", "Only reviewers of the queue's workspace can be named (not: 1 person outside the workspace).")
    # A member who was deactivated is named by username; a made-up id counts as outside.
    gone = make.user(world.ws, Role.REVIEWER, username="gone")
    gone.active = False
    session.commit()
    with pytest.raises(ValidationFailed) as caught:
        rq.create_queue(session, make.actor(world.lead), world.ws.id, "X",
                        named=[ann.id, gone.id, stranger.id, 10**9], reviewers="named")
    assert (caught.value.field, caught.value.reason) == (
        "named", "Only reviewers of the queue's workspace can be named (not: gone and 2 people outside the workspace).")
    with pytest.raises(ValidationFailed) as caught:
        rq.update_queue(session, make.actor(world.lead), queue.id, named=[gone.id, ann.id])
    assert (caught.value.field, caught.value.reason) == (
        "named", "Only reviewers of the queue's workspace can be named (not: gone).")
    with pytest.raises(ValidationFailed) as caught:
        rq.create_queue(session, make.actor(world.lead), world.ws.id, "Y", reviewers="named")
    assert caught.value.field == "named"
    for field, value in (("reviewers", "some"), ("assignment", "lottery")):
        with pytest.raises(ValidationFailed) as caught:
            rq.create_queue(session, make.actor(world.lead), world.ws.id, "Z", **{field: value})
        assert caught.value.field == field
    # Opening the queue to all lets cy in.
    rq.update_queue(session, make.actor(world.lead), queue.id, reviewers="all")
    assert rq.next_item(session, make.actor(cy), queue.id).run_pk == world.chat[2].id


def _assignees(session, queue):
    from reviewapp.models import QueueAssignment

    rows = session.execute(select(QueueItem.run_pk, QueueAssignment.user_id)
                           .join(QueueAssignment, QueueAssignment.item_id == QueueItem.id)
                           .where(QueueItem.queue_id == queue.id)
                           .order_by(QueueItem.id, QueueAssignment.user_id)).all()
    out: dict[int, list[int]] = {}
    for run_pk, user_id in rows:
        out.setdefault(run_pk, []).append(user_id)
    return out


def test_round_robin_deals_items_in_turn(session, make, world):
    ann, bob, cy = world.reviewers
    c = [r.id for r in world.chat]
    queue, _ = rq.create_queue(session, make.actor(world.lead), world.ws.id, "Dealt",
                               {"kind": "chat"}, reviewers="named", named=[ann.id, bob.id, cy.id],
                               assignment="round_robin", reviewers_per_run=2)
    # By hand: deals of two, in the named order, continuing: (ann, bob), (cy, ann),
    # (bob, cy), (ann, bob), (cy, ann), (bob, cy).
    assert _assignees(session, queue) == {
        c[0]: sorted([ann.id, bob.id]), c[1]: sorted([cy.id, ann.id]),
        c[2]: sorted([bob.id, cy.id]), c[3]: sorted([ann.id, bob.id]),
        c[4]: sorted([cy.id, ann.id]), c[5]: sorted([bob.id, cy.id])}
    # A new run continues the turn: (ann, bob) again (12 deals made so far, 12 % 3 = 0).
    fresh = make.run(world.ws)
    assert _assignees(session, queue)[fresh.id] == sorted([ann.id, bob.id])
    # cy's items are c1, c2, c4, c5 only.
    got = []
    for _ in range(5):
        item = rq.next_item(session, make.actor(cy), queue.id)
        if item is None:
            break
        got.append(item.run_pk)
        make.feedback_row(session.get(type(world.chat[0]), item.run_pk), cy)
    assert got == [c[1], c[2], c[4], c[5]]


def test_assignment_by_hand(session, make, world):
    ann, bob, cy = world.reviewers
    lead = make.actor(world.lead)
    queue, _ = rq.create_queue(session, lead, world.ws.id, "Hand", {"kind": "chat"},
                               assignment="by_hand", reviewers_per_run=2)
    assert rq.next_item(session, make.actor(ann), queue.id) is None  # nothing assigned yet
    item = session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id,
                                                  QueueItem.run_pk == world.chat[3].id))
    assert rq.assign(session, lead, item.id, [bob.id, str(cy.id)]) == [bob.id, cy.id]
    assert rq.next_item(session, make.actor(ann), queue.id) is None
    assert rq.next_item(session, make.actor(bob), queue.id).id == item.id
    # bob holds it: cy, also assigned, does not get it while the reservation lasts.
    assert rq.next_item(session, make.actor(cy), queue.id) is None
    assert rq.assign(session, lead, item.id, [ann.id]) == [ann.id]
    assert _assignees(session, queue) == {world.chat[3].id: [ann.id]}
    with pytest.raises(ValidationFailed) as caught:
        rq.assign(session, lead, item.id, [make.user(world.other).id])
    assert (caught.value.field, caught.value.reason) == (
        "assignees", "Only reviewers who may review this queue can be assigned (not: 1 person outside the workspace).")
    # The same reviewer twice (two slots of the page's form): refused, not merged quietly,
    # and named by username (not by user id).
    with pytest.raises(ValidationFailed) as caught:
        rq.assign(session, lead, item.id, [bob.id, str(bob.id)])
    assert (caught.value.field, caught.value.reason) == ("assignees", "Choose each reviewer once (twice: bob).")
    assert _assignees(session, queue) == {world.chat[3].id: [ann.id]}
    with pytest.raises(Forbidden):
        rq.assign(session, make.actor(ann), item.id, [ann.id])
    # Becoming round-robin (N lowered to 1) deals the open items nobody is assigned (5 of
    # 6), to the workspace's reviewers by username: ann, bob, cy, lead (user…), in turn.
    rq.update_queue(session, lead, queue.id, assignment="round_robin", reviewers_per_run=1)
    dealt = _assignees(session, queue)
    assert len(dealt) == 6 and all(len(v) == 1 for v in dealt.values())
    assert dealt[world.chat[3].id] == [ann.id]


def test_update_queue_recounts_and_refills(session, make, world):
    lead = make.actor(world.lead)
    queue, _ = rq.create_queue(session, lead, world.ws.id, "Two", {"kind": "chat"},
                               reviewers_per_run=2)
    make.feedback_row(world.chat[0], world.reviewers[0], rating="positive")
    assert rq.progress(session, lead, queue.id).complete == 0
    rq.update_queue(session, lead, queue.id, reviewers_per_run=1)
    assert rq.progress(session, lead, queue.id).complete == 1
    _, added = rq.update_queue(session, lead, queue.id, rule={})  # every rateable run
    assert added == 1 and world.aiops.id in _items(session, queue)
    with pytest.raises(ValidationFailed) as caught:
        rq.update_queue(session, lead, queue.id, colour="red")
    assert caught.value.field == "colour"
    rq.create_queue(session, lead, world.ws.id, "Other")
    with pytest.raises(Conflict):
        rq.update_queue(session, lead, queue.id, name="Other")
    with pytest.raises(Forbidden):
        rq.update_queue(session, make.actor(world.reviewers[0]), queue.id, name="Mine")


def test_the_dispute_rule_is_a_queue_setting(session, make):
    """Which split of N > 1 ratings needs a lead's decision is set on create and edit
    (issue 16), a tie by default; anything else is refused naming ``dispute_rule``."""
    ws = make.workspace()
    lead = make.actor(make.user(ws, Role.LEAD))
    make.user(ws), make.user(ws)  # three may review: a 3-reviewer queue can complete
    ties, _ = rq.create_queue(session, lead, ws.id, "Ties", {}, reviewers_per_run=3)
    splits, _ = rq.create_queue(session, lead, ws.id, "Splits", {}, reviewers_per_run=3,
                                dispute_rule="any_split")
    assert (ties.dispute_rule, splits.dispute_rule) == ("tie", "any_split")
    with pytest.raises(ValidationFailed) as caught:
        rq.create_queue(session, lead, ws.id, "Odd", {}, dispute_rule="majority_of_one")
    assert caught.value.field == "dispute_rule"
    session.rollback()
    edited, _ = rq.update_queue(session, lead, splits.id, dispute_rule="tie")
    assert edited.dispute_rule == "tie"


def test_a_removed_run_does_not_come_back_through_the_rule(session, make, world):
    """A lead removed a run: editing the queue (a refill), applying the rule again or
    re-ingesting the run does not bring it back; adding it by hand does."""
    lead = make.actor(world.lead)
    queue, _ = rq.create_queue(session, lead, world.ws.id, "Chat", {"kind": "chat"})
    gone, kept = world.chat[0], world.chat[1:]
    assert rq.remove_run(session, lead, queue.id, gone.id) is True
    expected = sorted(r.id for r in kept)
    assert _items(session, queue) == expected
    # Edited: a new name and a rule that still matches the run (the rule is applied again).
    _, added = rq.update_queue(session, lead, queue.id, name="Chat answers",
                               rule={"kind": "chat", "status": "SUCCESS"})
    assert added == 0 and _items(session, queue) == expected
    assert rq.fill(session, queue) == 0 and _items(session, queue) == expected
    make.run(world.ws, gone.run_id, query="Asked again?")  # re-ingested: offered again
    assert _items(session, queue) == expected
    p = rq.progress(session, lead, queue.id)
    assert (p.items, p.complete) == (5, 0)
    # A lead adding it by hand brings it back (explicitly), as a manual item.
    assert rq.add_runs(session, lead, queue.id, [gone.id]) == 1
    assert _items(session, queue) == sorted([gone.id, *expected])
    item = session.scalar(select(QueueItem).where(QueueItem.queue_id == queue.id,
                                                  QueueItem.run_pk == gone.id))
    assert item.source == "manual"
    # Removed again: out again, and the rule still does not bring it back.
    assert rq.remove_run(session, lead, queue.id, gone.id) is True
    assert rq.fill(session, queue) == 0 and _items(session, queue) == expected
    # Another queue's removal does not affect this one's sibling.
    other, added_other = rq.create_queue(session, lead, world.ws.id, "Chat 2", {"kind": "chat"})
    assert added_other == 6 and gone.id in _items(session, other)


def test_removing_or_deactivating_a_member_lets_go_of_their_items(session, make, world):
    """The walk-through: a lead removed from the workspace still showed as "holding now 1"
    until the reservation expired. Removing a member, or deactivating an account, releases
    the items they hold (in the removal's own transaction), so the next reviewer gets them;
    and the lead's pages name no non-member as a holder (a reservation left from before)."""
    from reviewapp.services import admin

    boss = make.actor(make.user(world.ws, Role.ADMIN))
    queue = _queue(session, make, world, n=2)
    ann, bob, cy = world.reviewers
    now = utcnow()
    held = {u.username: rq.next_item(session, make.actor(u), queue.id, now=now).id
            for u in (ann, bob, cy)}
    admin.remove_member(session, boss, world.ws.id, ann.id)
    assert _held(session, ann, queue, now) == []
    admin.set_active(session, boss, world.ws.id, bob.id, False)
    assert _held(session, bob, queue, now) == []
    assert _held(session, cy, queue, now) == [held["cy"]]
    dan = make.user(world.ws, Role.REVIEWER, username="dan")
    assert rq.next_item(session, make.actor(dan), queue.id, now=now).id == held["ann"]
    # A reservation of a non-member (left from before this rule) is not shown as theirs.
    stale = session.scalars(select(QueueItem).where(QueueItem.queue_id == queue.id,
                                                    QueueItem.reserved_by.is_(None))
                            .order_by(QueueItem.id)).first()
    stale.reserved_by, stale.reserved_until = ann.id, now + timedelta(minutes=5)
    session.commit()
    lead = make.actor(world.lead)
    holding = {r.username: r.holding for r in rq.reviewer_progress(session, lead, queue.id,
                                                                      now=now)}
    assert holding.get("ann", 0) == 0 and holding.get("bob", 0) == 0
    assert holding["cy"] == 1 and holding["dan"] == 1
    _, page = rq.list_items(session, lead, queue.id, now=now)
    shown = {row.item_id: row.reserved_by for row in page.rows}
    assert shown[stale.id] is None and shown[held["cy"]] == "cy"
    assert shown[held["ann"]] == "dan" and shown[held["bob"]] is None


def _assignees_by_item(session, queue):
    """{item id: sorted assignee user ids} of the queue, as stored."""
    session.expire_all()
    found = {i: [] for i in session.scalars(select(QueueItem.id).where(QueueItem.queue_id == queue.id))}
    for item_id, user_id in session.execute(
            select(QueueAssignment.item_id, QueueAssignment.user_id)
            .join(QueueItem, QueueItem.id == QueueAssignment.item_id)
            .where(QueueItem.queue_id == queue.id)):
        found[item_id].append(user_id)
    return {k: sorted(v) for k, v in found.items()}


def test_removing_a_member_releases_their_open_assignments_and_keeps_their_finished_work(
        session, make, world):
    """A removed member's assigned items they have not rated go back: a round-robin queue
    deals each to the next reviewer of its pool in turn (so it still reaches N), a by-hand
    queue's item is left for a lead to give to someone else; an item they rated stays
    assigned to them and their rating stays. The removal's audit row counts both."""
    from reviewapp.models import AuditEvent, Feedback
    from reviewapp.services import admin

    lead = make.actor(world.lead)
    ann, bob, cy = world.reviewers
    dealt, _ = rq.create_queue(session, lead, world.ws.id, "Pairs", {"kind": "chat"},
                               reviewers_per_run=2, assignment="round_robin")
    by_hand, _ = rq.create_queue(session, lead, world.ws.id, "Picked", {"kind": "chat"},
                                 assignment="by_hand")
    before = _assignees_by_item(session, dealt)
    anns = [i for i, users in before.items() if ann.id in users]
    assert len(anns) == 3  # 6 items x 2 seats dealt over ann, bob, cy and the lead in turn
    rated_item = session.get(QueueItem, anns[0])
    rated_run = next(r for r in world.chat if r.id == rated_item.run_pk)
    make.feedback_row(rated_run, ann, rating="positive")
    picked = sorted(set(before) - set(anns))[0]
    picked_item = session.scalars(select(QueueItem).where(
        QueueItem.queue_id == by_hand.id, QueueItem.run_pk == session.get(QueueItem, picked).run_pk)).one()
    rq.assign(session, lead, picked_item.id, [ann.id])

    admin.remove_member(session, make.actor(make.user(world.ws, Role.ADMIN)), world.ws.id, ann.id)

    after = _assignees_by_item(session, dealt)
    assert after[rated_item.id] == sorted([ann.id] + [u for u in before[rated_item.id] if u != ann.id])
    pool_left = {bob.id, cy.id, world.lead.id}
    for item_id in anns[1:]:  # topped up to N = 2 from those left, keeping who was there
        kept = set(before[item_id]) - {ann.id}
        assert len(after[item_id]) == 2 and kept < set(after[item_id]) <= pool_left
    for item_id in set(before) - set(anns):
        assert after[item_id] == before[item_id]
    assert _assignees_by_item(session, by_hand)[picked_item.id] == []
    assert session.scalar(select(func.count()).select_from(Feedback).where(
        Feedback.author_id == ann.id)) == 1
    event = session.scalars(select(AuditEvent).where(AuditEvent.action == "member.remove")).one()
    assert event.before == {"role": "reviewer", "open_assignments": 2 + 1, "held_items": 0,
                            "named_reviewer_of": 0}


def test_a_removed_member_is_dealt_no_new_items_nor_handed_anyone_elses(session, make, world):
    """The new user's repro: a round-robin queue naming ann, bob, cy (2 per run). cy is
    removed: cy is no longer a named reviewer (the removal's audit row counts the queue),
    runs sent after go to ann and bob only, and the queue page does not list cy. bob is
    removed next: bob's open items are topped up from ann alone, none handed to cy. A
    named reviewer whose account is deactivated is dealt nothing either."""
    from reviewapp.models import AuditEvent
    from reviewapp.services import admin

    lead = make.actor(world.lead)
    boss = make.actor(make.user(world.ws, Role.ADMIN))
    ann, bob, cy = world.reviewers
    queue, _ = rq.create_queue(session, lead, world.ws.id, "RR", {"kind": "chat"},
                               reviewers="named", named=[ann.id, bob.id, cy.id],
                               assignment="round_robin", reviewers_per_run=2)
    admin.remove_member(session, boss, world.ws.id, cy.id)
    assert rq.named_reviewers(session, queue.id) == [ann.id, bob.id]
    event = session.scalars(select(AuditEvent).where(AuditEvent.action == "member.remove")).one()
    assert event.before["named_reviewer_of"] == 1
    fresh = [make.run(world.ws).id for _ in range(4)]
    dealt = _assignees(session, queue)
    assert {pk: dealt[pk] for pk in fresh} == {pk: sorted([ann.id, bob.id]) for pk in fresh}
    assert all(cy.id not in users for users in dealt.values())
    listed = {r.username for r in rq.reviewer_progress(session, lead, queue.id)}
    assert listed == {"ann", "bob"}

    rated_pk = world.chat[0].id
    make.feedback_row(session.get(type(world.chat[0]), rated_pk), bob, rating="positive")
    admin.remove_member(session, boss, world.ws.id, bob.id)
    after = _assignees(session, queue)
    assert after.pop(rated_pk) == sorted([ann.id, bob.id])  # bob's finished work stays his
    assert all(users == [ann.id] for users in after.values())  # 5 + 4 items nobody rated
    rated = session.scalars(select(QueueItem).where(QueueItem.run_pk == rated_pk,
                                                    QueueItem.queue_id == queue.id)).one()
    assert rq.assign(session, lead, rated.id, [ann.id, bob.id]) == [ann.id, bob.id]
    with pytest.raises(ValidationFailed):  # a lead keeps bob on it, but gives it no cy
        rq.assign(session, lead, rated.id, [ann.id, bob.id, cy.id])
    # A deactivated named reviewer is dealt nothing; by hand neither.
    dan = make.user(world.ws, Role.REVIEWER, username="dan")
    rq.update_queue(session, lead, queue.id, named=[ann.id, dan.id])
    admin.set_active(session, boss, world.ws.id, dan.id, False)
    late = make.run(world.ws)
    assert _assignees(session, queue)[late.id] == [ann.id]
    item = session.scalars(select(QueueItem).where(QueueItem.run_pk == late.id)).one()
    with pytest.raises(ValidationFailed):
        rq.assign(session, lead, item.id, [dan.id])


def test_deactivating_an_account_releases_its_open_assignments_like_removal(session, make, world):
    """New-user finding: deactivating an account freed the items it held but left its open
    assignments, so a round-robin item waited forever for someone who cannot log in.
    Deactivation now does what removal does (``release_assignments_of``) in every workspace
    of the account: an item it has not rated is dealt to the pool's others (back to N), a
    by-hand item is left for a lead, an item it rated stays assigned; the audit row counts
    them. Reactivation gives nothing back: the items went on to others; the account is in
    the pool again for the items dealt after it."""
    from reviewapp.models import AuditEvent
    from reviewapp.services import admin

    lead = make.actor(world.lead)
    ann, bob, cy = world.reviewers
    dealt, _ = rq.create_queue(session, lead, world.ws.id, "Pairs", {"kind": "chat"},
                               reviewers_per_run=2, assignment="round_robin")
    by_hand, _ = rq.create_queue(session, lead, world.ws.id, "Picked", {"kind": "chat"},
                                 assignment="by_hand")
    before = _assignees_by_item(session, dealt)
    anns = sorted(i for i, users in before.items() if ann.id in users)
    assert len(anns) == 3  # 6 items x 2 seats over ann, bob, cy and the lead (usernames)
    rated_item = session.get(QueueItem, anns[0])
    make.feedback_row(next(r for r in world.chat if r.id == rated_item.run_pk), ann)
    picked = session.scalars(select(QueueItem).where(
        QueueItem.queue_id == by_hand.id, QueueItem.run_pk != rated_item.run_pk)
        .order_by(QueueItem.id)).first()
    rq.assign(session, lead, picked.id, [ann.id])

    boss = make.actor(make.user(world.ws, Role.ADMIN))  # after the deal: in the pool now
    admin.set_active(session, boss, world.ws.id, ann.id, False)

    after = _assignees_by_item(session, dealt)
    assert ann.id in after[rated_item.id] and len(after[rated_item.id]) == 2
    for item_id in anns[1:]:
        kept = set(before[item_id]) - {ann.id}
        assert len(after[item_id]) == 2 and kept < set(after[item_id]) <= {
            bob.id, cy.id, world.lead.id, boss.user_id}
    for item_id in set(before) - set(anns):
        assert after[item_id] == before[item_id]
    assert _assignees_by_item(session, by_hand)[picked.id] == []
    event = session.scalars(select(AuditEvent).where(AuditEvent.action == "user.deactivate")).one()
    assert event.before == {"active": True, "open_assignments": 2 + 1, "held_items": 0}

    admin.set_active(session, boss, world.ws.id, ann.id, True)
    assert _assignees_by_item(session, dealt) == after  # nothing given back
    fresh = [make.run(world.ws).id for _ in range(3)]  # 3 x 2 seats: the whole pool of 5
    dealt_now = _assignees(session, dealt)
    assert {u for pk in fresh for u in dealt_now[pk]} == {ann.id, bob.id, cy.id, world.lead.id,
                                                          boss.user_id}
    activated = session.scalars(select(AuditEvent).where(AuditEvent.action == "user.activate")).one()
    assert activated.before == {"active": False}


def _stuck_round_robin_queue(session, make, world):
    """The new user's walk: a round-robin queue naming ann and bob, one reviewer per run;
    bob is removed from the workspace, ann deactivated: every item is left with nobody."""
    from reviewapp.services import admin

    lead = make.actor(world.lead)
    ann, bob, _ = world.reviewers
    boss = make.actor(make.user(world.ws, Role.ADMIN))
    queue, _ = rq.create_queue(session, lead, world.ws.id, "RR queue", {"kind": "chat"},
                               reviewers="named", named=[ann.id, bob.id],
                               assignment="round_robin")
    admin.remove_member(session, boss, world.ws.id, bob.id)
    admin.set_active(session, boss, world.ws.id, ann.id, False)
    assert _assignees_by_item(session, queue) == {i: [] for i in _assignees_by_item(session, queue)}
    return queue, lead, boss


def test_reactivating_the_only_reviewer_deals_a_stuck_round_robin_queue_again(session, make, world):
    """New-user finding: once a round-robin queue's whole pool was gone its items stayed
    with nobody for good, also after the reviewer came back. Reactivation tops up every
    open item short of its reviewers (SPEC 8, Review queues)."""
    from reviewapp.services import admin

    queue, _, boss = _stuck_round_robin_queue(session, make, world)
    ann = world.reviewers[0]
    admin.set_active(session, boss, world.ws.id, ann.id, True)
    after = _assignees_by_item(session, queue)
    assert len(after) == 6 and all(users == [ann.id] for users in after.values())
    item = rq.next_item(session, make.actor(ann), queue.id)
    assert item is not None and item.queue_id == queue.id


def test_saving_a_round_robin_queue_deals_its_items_nobody_has(session, make, world):
    """The queue's edit form naming someone who may review deals the stuck items to them."""
    queue, lead, _ = _stuck_round_robin_queue(session, make, world)
    cy = world.reviewers[2]
    rq.update_queue(session, lead, queue.id, named=[cy.id])
    after = _assignees_by_item(session, queue)
    assert len(after) == 6 and all(users == [cy.id] for users in after.values())


def test_saving_a_round_robin_queue_tops_up_items_short_of_its_reviewers(session, make, world):
    """Naming again a reviewer who was dropped (N=2, one left): each item gets them back
    as its second reviewer; a save that changes nothing deals nothing more."""
    from reviewapp.services import admin

    lead = make.actor(world.lead)
    ann, bob, _ = world.reviewers
    boss = make.actor(make.user(world.ws, Role.ADMIN))
    queue, _ = rq.create_queue(session, lead, world.ws.id, "Pairs", {"kind": "chat"},
                               reviewers_per_run=2, reviewers="named", named=[ann.id, bob.id],
                               assignment="round_robin")
    admin.remove_member(session, boss, world.ws.id, bob.id)
    assert set(map(tuple, _assignees_by_item(session, queue).values())) == {(ann.id,)}
    admin.add_member(session, boss, world.ws.id, "bob", "reviewer")  # not named again
    assert set(map(tuple, _assignees_by_item(session, queue).values())) == {(ann.id,)}
    rq.update_queue(session, lead, queue.id, named=[ann.id, bob.id])
    pair = tuple(sorted((ann.id, bob.id)))
    assert set(map(tuple, _assignees_by_item(session, queue).values())) == {pair}
    dealt = session.get(type(queue), queue.id).dealt
    rq.update_queue(session, lead, queue.id, name="Pairs again")
    assert set(map(tuple, _assignees_by_item(session, queue).values())) == {pair}
    session.expire_all()
    assert session.get(type(queue), queue.id).dealt == dealt


def test_adding_a_member_back_tops_up_a_round_robin_queue_of_all_reviewers(session, make, world):
    """An all-reviewers queue with N = the whole pool: removing bob leaves each item one
    short (the pool is smaller); adding him back gives each item to him again."""
    from reviewapp.services import admin

    lead = make.actor(world.lead)
    ann, bob, cy = world.reviewers
    boss = make.actor(make.user(world.ws, Role.ADMIN))
    everyone = sorted([world.lead.id, ann.id, bob.id, cy.id, boss.user_id])
    queue, _ = rq.create_queue(session, lead, world.ws.id, "All of us", {"kind": "chat"},
                               reviewers_per_run=5, assignment="round_robin")
    assert set(map(tuple, _assignees_by_item(session, queue).values())) == {tuple(everyone)}
    admin.remove_member(session, boss, world.ws.id, bob.id)
    without = tuple(u for u in everyone if u != bob.id)
    assert set(map(tuple, _assignees_by_item(session, queue).values())) == {without}
    admin.add_member(session, boss, world.ws.id, "bob", "reviewer")
    assert set(map(tuple, _assignees_by_item(session, queue).values())) == {tuple(everyone)}


def test_round_robin_deals_a_run_first_to_who_has_not_rated_it(session, make, world):
    """Review finding: the deal ignored earlier ratings, so a reviewer who had already
    rated a run outside the queue could be dealt it (their seat then adds no new
    rating). Of the reviewers whose turn it is, those who have not rated the run come
    first; the others only fill what is left. ann rated c0 before the queue existed."""
    ann, bob, cy = world.reviewers
    c = [r.id for r in world.chat]
    make.feedback_row(world.chat[0], ann)
    queue, _ = rq.create_queue(session, make.actor(world.lead), world.ws.id, "Dealt",
                               {"kind": "chat"}, reviewers="named", named=[ann.id, bob.id, cy.id],
                               assignment="round_robin", reviewers_per_run=2)
    # In turn (ann, bob), (cy, ann), (bob, cy), ...; c0's turn is ann's and bob's, but ann
    # rated it: bob and cy, the next who has not. The turn goes on as before.
    assert _assignees(session, queue) == {
        c[0]: sorted([bob.id, cy.id]), c[1]: sorted([cy.id, ann.id]),
        c[2]: sorted([bob.id, cy.id]), c[3]: sorted([ann.id, bob.id]),
        c[4]: sorted([cy.id, ann.id]), c[5]: sorted([bob.id, cy.id])}


def test_dealing_again_gives_a_run_first_to_who_has_not_rated_it(session, make, world):
    """The same rule when items are dealt again (here: ann removed, her open items go to
    the others in turn). Pool ann, bob, cy, dan; N = 2; dealt (ann, bob), (cy, dan), ...
    cy then rated c0. Removing ann deals c0, c2, c4 again from turn 12 over (bob, cy,
    dan): c0 would go to cy, who rated it: dan instead (three turns taken); then c2 to
    cy (turn 15), c4 to dan (turn 17)."""
    from reviewapp.services import admin

    ann, bob, cy = world.reviewers
    dan = make.user(world.ws, Role.REVIEWER, username="dan")
    c = [r.id for r in world.chat]
    boss = make.actor(make.user(world.ws, Role.ADMIN))
    queue, _ = rq.create_queue(session, make.actor(world.lead), world.ws.id, "Pairs",
                               {"kind": "chat"}, reviewers="named",
                               named=[ann.id, bob.id, cy.id, dan.id],
                               assignment="round_robin", reviewers_per_run=2)
    assert _assignees(session, queue)[c[0]] == sorted([ann.id, bob.id])
    make.feedback_row(world.chat[0], cy)
    admin.remove_member(session, boss, world.ws.id, ann.id)
    got = _assignees(session, queue)
    assert (got[c[0]], got[c[2]], got[c[4]]) == (
        sorted([bob.id, dan.id]), sorted([bob.id, cy.id]), sorted([bob.id, dan.id]))
    session.expire_all()
    assert session.get(type(queue), queue.id).dealt == 12 + 3 + 2 + 1
