"""Helpers of the feedback service tests (ratings and verdict)."""

from __future__ import annotations

import threading

from sqlalchemy import func, select

from reviewapp.db_setup import write_intent
from reviewapp.extensions import db
from reviewapp.models import Run

TARGET_TYPES = ["chat_message", "citation", "diagnostic_step", "diagnostic_report"]
MISSING_ID = 987_654


def answer_message(run: Run):
    return [m for m in run.messages if m.role == "assistant"][-1]


def target_in(make, ws, target_type: str):
    """A run of ``ws`` and (target_id, subject_id) of one target of ``target_type``."""
    if target_type in ("chat_message", "citation"):
        run = make.run(ws)
        return run, answer_message(run).id, "c1" if target_type == "citation" else None
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
