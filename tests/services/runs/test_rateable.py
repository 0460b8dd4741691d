"""``diagnosis_run.rateable`` (services/runs/rateable.py) follows every write that
changes whether a run can be rated — a new run, re-ingest adding or removing its parts,
finish — and the review queue's next run follows it and the ratings (rating,
withdrawing a rating). Each expected value is stated by hand from the SPEC 6.1 / 8 rule
(finished, with an assistant message with text, a step or a report); the stored column
is also checked against the rule read from the run's rows."""

from __future__ import annotations

from sqlalchemy import select

from reviewapp.actors import Actor, Role
from reviewapp.models import Message, QueueItem, Run
from reviewapp.services import feedback, review_queues, unrated_runs
from reviewapp.services.runs import finish_run, upsert_run
from reviewapp.services.runs.rateable import rateable_rule

SYSTEM = Actor.system_actor()
QUESTION = {"id": "u1", "role": "user", "content": "Why 502?"}
ANSWER = {"id": "a1", "role": "assistant", "content": "Pods were OOM-killed."}


def _stored(session, run_id: str) -> bool:
    """The run's stored flag, after checking it against the rule on its rows."""
    session.expire_all()
    stored, rule = session.execute(
        select(Run.rateable, rateable_rule()).where(Run.run_id == run_id)).one()
    assert bool(stored) == bool(rule)
    return bool(stored)


def _put(session, ws, run_id: str, **doc):
    body = {"kind": "chat", "query": "Why 502?", "status": "SUCCESS", **doc}
    return upsert_run(session, SYSTEM, ws.id, run_id, body).run


def test_a_run_is_rateable_once_finished_with_an_answer(session, make, ws):
    reviewer = make.actor(make.user(ws))
    run = _put(session, ws, "r1", status="RUNNING", messages=[QUESTION, ANSWER])
    assert _stored(session, "r1") is False  # still going
    assert unrated_runs.next_run(session, reviewer).run_pk is None
    finish_run(session, SYSTEM, ws.id, "r1", {"status": "SUCCESS"})
    assert _stored(session, "r1") is True
    assert unrated_runs.next_run(session, reviewer).run_pk == run.id


def test_finish_with_the_answer_alone_makes_it_rateable(session, make, ws):
    """The answer sent only with finish becomes the answer message (run-answer)."""
    _put(session, ws, "r1", status="RUNNING", messages=[QUESTION])
    assert _stored(session, "r1") is False
    finish_run(session, SYSTEM, ws.id, "r1", {"status": "FAILED", "answer": "Gave up: OOM."})
    assert _stored(session, "r1") is True


def test_re_ingest_adding_and_removing_the_answer(session, make, ws):
    reviewer = make.actor(make.user(ws))
    run = _put(session, ws, "r1", messages=[QUESTION])
    assert _stored(session, "r1") is False  # finished, nothing to rate
    _put(session, ws, "r1", messages=[QUESTION, {**ANSWER, "content": " \u3000\n"}])
    assert _stored(session, "r1") is False  # blanks only are no answer text
    _put(session, ws, "r1", messages=[QUESTION, ANSWER])
    assert _stored(session, "r1") is True
    assert unrated_runs.next_run(session, reviewer).run_pk == run.id
    _put(session, ws, "r1", messages=[QUESTION])  # the unrated answer is deleted
    assert session.scalars(select(Message.message_id).where(Message.run_pk == run.id)).all() == ["u1"]
    assert _stored(session, "r1") is False
    assert unrated_runs.next_run(session, reviewer).run_pk is None


def test_a_rated_answer_stays_and_so_does_the_run(session, make, ws):
    """Re-ingest never deletes a rated part (SPEC 10), so the run stays rateable."""
    reviewer = make.actor(make.user(ws))
    run = _put(session, ws, "r1", messages=[QUESTION, ANSWER])
    answer = session.scalar(select(Message).where(Message.run_pk == run.id, Message.message_id == "a1"))
    feedback.upsert_feedback(session, reviewer, "chat_message", answer.id, None, "positive")
    _put(session, ws, "r1", messages=[QUESTION])
    assert _stored(session, "r1") is True


def test_an_aiops_run_with_steps_or_a_report(session, make, ws):
    steps = [{"id": "s1", "name": "Check disk", "status": "done", "summary": "95 %"}]
    _put(session, ws, "steps", kind="aiops", messages=[], steps=steps)
    _put(session, ws, "report", kind="aiops", messages=[], report={"content": "# Disk full"})
    _put(session, ws, "neither", kind="aiops", messages=[], steps=[])
    assert [_stored(session, r) for r in ("steps", "report", "neither")] == [True, True, False]
    _put(session, ws, "steps", kind="aiops", messages=[], steps=[])  # its unrated step goes
    assert _stored(session, "steps") is False
    _put(session, ws, "neither", kind="aiops", messages=[], steps=steps)
    assert _stored(session, "neither") is True


def test_rating_and_withdrawing_move_the_queue(session, make, ws):
    """Ratings do not change the flag; the queue reads them: rated runs drop out,
    a withdrawn rating brings the run back."""
    reviewer = make.actor(make.user(ws))
    older = _put(session, ws, "older", messages=[QUESTION, ANSWER])
    newer = _put(session, ws, "newer", messages=[QUESTION, ANSWER])
    assert unrated_runs.next_run(session, reviewer).run_pk == newer.id
    answer = session.scalar(select(Message).where(Message.run_pk == newer.id, Message.message_id == "a1"))
    rating = feedback.upsert_feedback(session, reviewer, "chat_message", answer.id, None, "negative")
    assert _stored(session, "newer") is True
    state = unrated_runs.next_run(session, reviewer)
    assert state.run_pk == older.id
    assert (state.progress.reviewed, state.progress.total) == (1, 2)
    feedback.delete_feedback(session, reviewer, rating.id)
    state = unrated_runs.next_run(session, reviewer)
    assert state.run_pk == newer.id
    assert (state.progress.reviewed, state.progress.total) == (0, 2)


def test_a_queue_rule_offers_a_run_when_it_becomes_rateable(session, make, ws):
    """The team-review queues' rule reads the flag right after the write that set it."""
    lead = make.actor(make.user(ws, Role.LEAD))
    queue, _ = review_queues.create_queue(session, lead, ws.id, "All")
    run = _put(session, ws, "r1", status="RUNNING", messages=[QUESTION, ANSWER])
    items = select(QueueItem.run_pk).where(QueueItem.queue_id == queue.id)
    assert session.scalars(items).all() == []
    finish_run(session, SYSTEM, ws.id, "r1", {"status": "SUCCESS"})
    assert session.scalars(items).all() == [run.id]
