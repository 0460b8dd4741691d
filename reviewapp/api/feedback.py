"""Feedback over JSON (SPEC 6, 9): the run verdict and target feedback list / upsert / delete.

``POST /api/feedback`` is the agent UI's verdict API: an ingest token of the run's
workspace (``Authorization: Bearer``) or a logged-in browser session with the
``X-CSRFToken`` header. The ``/api/feedback/targets`` and ``/api/feedback/<id>`` routes
rate as a person: login session only, CSRF header on state changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from flask import Response, jsonify, request

from ..errors import ValidationFailed
from ..extensions import db
from ..models.base import MAX_ID
from ..services import feedback as feedback_service
from . import bp
from .auth import any_actor, session_actor
from .schemas import read_object

if TYPE_CHECKING:  # annotations only: handlers write through the feedback service
    from ..models import Feedback

# Service field names -> the names this API's clients send.
_API_FIELDS = {"target_type": "targetType", "target_id": "targetId", "subject_id": "subjectId"}


@contextmanager
def _api_field_names() -> Iterator[None]:
    """Report a service's validation error under the field name the client used."""
    try:
        yield
    except ValidationFailed as exc:
        if exc.field in _API_FIELDS:
            raise ValidationFailed(_API_FIELDS[exc.field], exc.reason) from None
        raise


# The documented request fields (openapi.yaml, additionalProperties: false).
_VERDICT_FIELDS = frozenset(("runId", "sessionId", "feedback"))
_TARGET_FIELDS = frozenset(("targetType", "targetId", "subjectId", "rating", "reason", "comment",
                            "correction"))


def _int_arg(name: str) -> int | None:
    raw = request.args.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ValidationFailed(name, "must be an integer") from None
    if value > MAX_ID:  # no row can have it; the database integer would overflow
        raise ValidationFailed(name, f"out of range (at most {MAX_ID})")
    return value


def _feedback_json(row: Feedback) -> dict[str, Any]:
    return {
        "id": row.id,
        "runPk": row.run_pk,
        "targetType": row.target_type,
        "targetId": row.target_id,
        "subjectId": row.subject_key or None,
        "rating": row.rating,
        "reason": row.reason,
        "comment": row.comment,
        "correction": row.correction,
        "createdAt": row.created_at.isoformat(),
        "updatedAt": row.updated_at.isoformat(),
    }


@bp.post("/feedback")
def run_verdict() -> Response:
    """Set a run's verdict (SPEC 6.2): ``{"runId"?, "sessionId", "feedback"}``."""
    actor = any_actor()
    body = read_object(_VERDICT_FIELDS)
    result = feedback_service.set_run_verdict(
        db.session, actor, body.get("sessionId"), body.get("runId"), body.get("feedback")
    )
    return jsonify({
        "success": result.success,
        "message": result.message,
        "runId": result.run_id,
        "fallbackToLatestRun": result.fallback_to_latest_run,
        "caseId": result.case_id,
    })


@bp.get("/feedback/targets")
def list_target_feedback() -> Response:
    """The caller's own ratings: of a run (``runPk``) or of one target (``targetType``,
    ``targetId``, optional ``subjectId``)."""
    actor = session_actor()
    run_pk = _int_arg("runPk")
    target_args = [name for name in ("targetType", "targetId", "subjectId") if name in request.args]
    if run_pk is not None and target_args:
        raise ValidationFailed(
            "runPk", f"send runPk alone, or targetType and targetId (not both; got {', '.join(target_args)})")
    with _api_field_names():
        if run_pk is not None:
            rows = feedback_service.list_my_feedback(db.session, actor, run_pk)
        elif request.args.get("targetType") is not None:
            rows = feedback_service.list_my_feedback_for_target(
                db.session, actor, request.args.get("targetType"), _int_arg("targetId"),
                request.args.get("subjectId"),
            )
        else:
            raise ValidationFailed("runPk", "send runPk, or targetType and targetId")
    return jsonify({"feedback": [_feedback_json(row) for row in rows]})


@bp.put("/feedback/targets")
def upsert_target_feedback() -> Response:
    """Create or replace the caller's rating of one target (SPEC 6.1)."""
    actor = session_actor()
    body = read_object(_TARGET_FIELDS)
    with _api_field_names():
        row = feedback_service.upsert_feedback(
            db.session, actor, body.get("targetType"), body.get("targetId"),
            body.get("subjectId"), body.get("rating"), body.get("reason"),
            body.get("comment"), body.get("correction"),
        )
    return jsonify({"feedback": _feedback_json(row)})


@bp.delete("/feedback/<int:feedback_id>")
def delete_target_feedback(feedback_id: int) -> Response:
    """Delete one of the caller's own ratings; 204 on success."""
    actor = session_actor()
    feedback_service.delete_feedback(db.session, actor, feedback_id)
    return Response(status=204)
