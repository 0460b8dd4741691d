"""Ingest API for agents (SPEC 4, 9): token-authenticated, JSON, CSRF-exempt.

* ``PUT  /api/ingest/runs/<run_id>``          create or upsert a run document
* ``POST /api/ingest/tool-events``            one tool-call event, or an array of them
* ``POST /api/ingest/runs/<run_id>/finish``   SUCCESS / FAILED, answer, finished_at
* ``PATCH /api/ingest/runs/<run_id>/outcome`` external outcome and detail, nothing else

A token writes only into its own workspace: a ``run_id`` that exists in another
workspace is simply a new run in the token's workspace. A ``run_id`` never holds ``/``
(``run_document.schema.json``), so ``PUT .../runs/abc/finish`` is a 400 naming
``run_id``, never a run called ``abc/finish``. A batch of events answers one result per
event (shape errors included, as ``rejected`` with their ``field``: a NUL character or a
lone surrogate in one event rejects that event, not the batch); a single event with a
shape error is a 400.
"""

from __future__ import annotations

from flask import Response, current_app, jsonify

from ..errors import Conflict
from ..extensions import db
from ..services import runs, tool_calls
from ..services.runs import UpsertResult
from . import bp
from .auth import token_actor
from .schemas import read_json


def _run_answer(outcome: UpsertResult) -> dict:
    run = outcome.run
    return {
        "run_id": run.run_id,
        "result": outcome.result,
        "status": run.status,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "tool_calls": outcome.tool_calls,
        "failed_tool_calls": outcome.failed_tool_calls,
        "self_evaluation": run.self_evaluation,
    }


@bp.put("/ingest/runs/<path:run_id>")
def put_run(run_id: str) -> tuple[Response, int]:
    """Create (201) or upsert (200) a run document."""
    actor = token_actor()
    outcome = runs.upsert_run(db.session, actor, actor.token_workspace_id, run_id, read_json())
    return jsonify(_run_answer(outcome)), 201 if outcome.result == "created" else 200


@bp.post("/ingest/tool-events")
def post_tool_events() -> Response:
    """Apply one event (an object) or a batch (an array); per-event results."""
    actor = token_actor()
    body = read_json(items_checked=True)  # apply_events checks each event of a batch
    batch = isinstance(body, list)
    results = tool_calls.apply_events(
        db.session, actor, actor.token_workspace_id, body if batch else [body], batch=batch,
        max_events=current_app.config["INGEST_BATCH_MAX_EVENTS"],
    )
    answers = [r.to_dict() for r in results]
    if not batch and results[0].result == "rejected":
        raise Conflict(f"event rejected: {results[0].message}", details=answers[0])
    counts = dict.fromkeys(("created", "updated", "unchanged", "rejected", "ignored"), 0)
    for r in results:
        counts[r.result] += 1
    return jsonify({"results": answers, "counts": counts})


@bp.post("/ingest/runs/<path:run_id>/finish")
def finish_run(run_id: str) -> Response:
    """Finish a run: status SUCCESS / FAILED, optional answer and finished_at."""
    actor = token_actor()
    outcome = runs.finish_run(db.session, actor, actor.token_workspace_id, run_id, read_json())
    return jsonify(_run_answer(outcome))


@bp.patch("/ingest/runs/<path:run_id>/outcome")
def set_run_outcome(run_id: str) -> Response:
    """Set a run's external outcome and its detail; nothing else of the run changes."""
    actor = token_actor()
    outcome = runs.set_outcome(db.session, actor, actor.token_workspace_id, run_id, read_json())
    answer = _run_answer(outcome)
    answer.update(external_outcome=outcome.run.external_outcome,
                  external_outcome_detail=outcome.run.external_outcome_detail)
    return jsonify(answer)
