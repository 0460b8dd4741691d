"""``GET /api/runs/<run_id>/trace``: a run with everything recorded about it (SPEC 9)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import Response, jsonify

from ..extensions import db
from ..services.trace import RunTrace, get_trace
from . import bp
from .auth import any_actor


@bp.get("/runs/<path:run_id>/trace")
def run_trace(run_id: str) -> Response:
    """The run's trace; login session or an ingest token of the run's workspace."""
    return jsonify(_trace_json(get_trace(db.session, any_actor(), run_id)))


def _ts(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _run_json(t: RunTrace) -> dict[str, Any]:
    run = t.run
    return {
        "runId": run.run_id, "sessionId": t.session.session_id, "kind": run.kind,
        "status": run.status, "query": run.query, "answer": run.answer,
        "feedback": t.verdict, "alert": run.alert,
        "orchestrationTrace": run.orchestration_trace,
        "externalOutcome": run.external_outcome,
        "externalOutcomeDetail": run.external_outcome_detail,
        "evidenceScore": run.evidence_score, "verifierVerdict": run.verifier_verdict,
        "toolCallCount": run.tool_call_count,
        "failedToolCallCount": run.failed_tool_call_count,
        "startedAt": _ts(run.started_at), "finishedAt": _ts(run.finished_at),
        "createdAt": _ts(run.created_at), "updatedAt": _ts(run.updated_at),
    }


def _tool_call_json(t: RunTrace, c: Any) -> dict[str, Any]:
    return {"id": c.id, "ordinal": c.ordinal, "toolName": c.tool_name, "status": c.status,
            "stepId": t.step_ids.get(c.step_pk) if c.step_pk else None,
            "arguments": c.arguments, "resultSummary": c.result_summary,
            "errorMessage": c.error_message, "startedAt": _ts(c.started_at),
            "completedAt": _ts(c.completed_at), "durationMs": c.duration_ms,
            "compensated": c.compensated, "matchLevel": c.match_level,
            "hitCount": c.hit_count, "evidenceRefs": c.evidence_refs}


def _feedback_json(f: Any) -> dict[str, Any]:
    return {"id": f.feedback.id, "author": f.author, "targetType": f.feedback.target_type,
            "targetId": f.feedback.target_id, "subjectKey": f.feedback.subject_key,
            "rating": f.feedback.rating, "reason": f.feedback.reason,
            "comment": f.feedback.comment, "correction": f.feedback.correction,
            "createdAt": _ts(f.feedback.created_at), "updatedAt": _ts(f.feedback.updated_at)}


def _trace_json(t: RunTrace) -> dict[str, Any]:
    ds = t.session
    return {
        "run": _run_json(t),
        "session": {"sessionId": ds.session_id, "kind": ds.kind, "createdAt": _ts(ds.created_at)},
        "messages": [
            {"id": m.id, "messageId": m.message_id, "ordinal": m.ordinal, "role": m.role,
             "content": m.content, "metadata": m.meta or {}}
            for m in t.messages
        ],
        "steps": [
            {"id": s.id, "stepId": s.step_id, "ordinal": s.ordinal, "name": s.name,
             "status": s.status, "summary": s.summary, "startedAt": _ts(s.started_at),
             "finishedAt": _ts(s.finished_at)}
            for s in t.steps
        ],
        "report": None if t.report is None else {
            "id": t.report.id, "content": t.report.content, "createdAt": _ts(t.report.created_at)},
        "toolCalls": [_tool_call_json(t, c) for c in t.tool_calls],
        "selfEvaluation": t.self_evaluation,
        "feedback": {"verdict": t.verdict, "items": [_feedback_json(f) for f in t.feedback]},
        "hasFeedback": t.has_feedback,
        "hasVerifierEvaluation": t.has_verifier_evaluation,
        "hasAiOpsRuleEvaluation": t.has_aiops_rule_evaluation,
    }
