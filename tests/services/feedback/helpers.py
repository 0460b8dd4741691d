"""Helpers of the feedback service tests (ratings and verdict)."""

from __future__ import annotations

import threading

from sqlalchemy import func, select

from reviewapp.db_setup import write_intent
from reviewapp.extensions import db
from reviewapp.models import Run

TARGET_TYPES = ["chat_message", "citation", "diagnostic_step", "diagnostic_report",
                "tool_call", "conversation_turn"]
MISSING_ID = 987_654
CALL_ID = "call-flight-1"


def answer_message(run: Run):
    return [m for m in run.messages if m.role == "assistant"][-1]


def chat_run_with_turns(make, ws, **doc):
    """A multi-turn chat run: user, assistant turn "a1" (a tool call, not the answer),
    tool result, answer "a2"; two tool calls, ``CALL_ID`` (failed) and "call-2"."""
    return make.run(ws, **{
        "messages": [
            {"id": "u1", "role": "user", "content": "Change my flight to HAT170."},
            {"id": "a1", "role": "assistant", "content": "Let me look that up.",
             "metadata": {"tool_call_ids": [CALL_ID]}},
            {"id": "t1", "role": "tool", "content": "not available"},
            {"id": "a2", "role": "assistant", "content": "Your flight was updated."},
        ],
        "tool_calls": [
            {"id": CALL_ID, "tool_name": "update_reservation_flights", "status": "failed",
             "arguments": {"flight_number": "HAT170"}, "error": "flight not available"},
            {"id": "call-2", "tool_name": "get_reservation_details", "status": "completed",
             "arguments": {"reservation_id": "ZFA04Y"}, "output": "ok"},
        ],
    } | doc)


def turn_of(run: Run):
    """The assistant message of ``chat_run_with_turns`` that is not the answer."""
    return next(m for m in run.messages if m.message_id == "a1")


def target_in(make, ws, target_type: str):
    """A run of ``ws`` and (target_id, subject_id) of one target of ``target_type``."""
    if target_type in ("chat_message", "citation"):
        run = make.run(ws)
        return run, answer_message(run).id, "c1" if target_type == "citation" else None
    if target_type == "tool_call":
        run = chat_run_with_turns(make, ws)
        return run, run.id, CALL_ID
    if target_type == "conversation_turn":
        run = chat_run_with_turns(make, ws)
        return run, turn_of(run).id, None
    run = make.aiops_run(ws)
    if target_type == "diagnostic_step":
        return run, run.steps[0].id, None
    return run, run.report.id, None


def count(session, model, *where) -> int:
    return session.scalar(select(func.count()).select_from(model).where(*where))


def fresh(session, obj):
    session.expire_all()
    return session.get(type(obj), obj.id)


def in_threads(app, n: int, work) -> list:
    """Run ``work(i)`` in ``n`` threads started together, each with its own app context,
    session and SQLite write intent. Returns results (exceptions included)."""
    barrier = threading.Barrier(n)
    results: list = [None] * n

    def target(i: int) -> None:
        with app.app_context():
            try:
                barrier.wait(timeout=30)
                with write_intent():
                    results[i] = work(i)
            except Exception as exc:  # noqa: BLE001 - reported by the assertion below
                results[i] = exc
            finally:
                db.session.remove()

    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    return results


def disputed_by_tie(session, make, ws, run) -> None:
    """Two new reviewers of ``ws`` rate ``run``'s answer helpful and not helpful: in a
    queue with two reviewers per run, the run is disputed (a lead may decide it)."""
    from reviewapp.models import Message
    from reviewapp.services import feedback

    session.refresh(run)
    answer = session.scalar(select(Message.id).where(Message.run_pk == run.id,
                                                     Message.role == "assistant"))
    for rating in ("positive", "negative"):
        feedback.upsert_feedback(session, make.actor(make.user(ws)), "chat_message", answer,
                                 None, rating)
