"""Runs: ingest / upsert a run document, finish a run, list runs (SPEC 3, 9, 10)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..domain.self_evaluation import imported_evaluations
from ..domain.times import parse_timestamp
from ..errors import ValidationFailed
from ..models import (
    DiagnosisSession,
    DiagnosticReport,
    DiagnosticStep,
    Feedback,
    Message,
    MessageRole,
    Run,
    RunKind,
    RunStatus,
    TargetType,
)
from ..queries import runs_visible_to
from .access import require_role
from .tool_calls import upsert_record


@dataclass(frozen=True)
class UpsertResult:
    """What ``upsert_run`` did: ``created`` | ``updated`` | ``unchanged``, plus counts."""

    run: Run
    result: str
    tool_calls: int
    failed_tool_calls: int


def _ts(doc: Mapping[str, Any], key: str) -> datetime | None:
    try:
        return parse_timestamp(doc.get(key), key)
    except ValueError as exc:
        raise ValidationFailed(key, str(exc).split(": ", 1)[-1]) from None


def _get_or_create_session(
    session: Session, workspace_id: int, session_id: str, kind: str
) -> DiagnosisSession:
    ds = session.scalars(
        select(DiagnosisSession).where(
            DiagnosisSession.workspace_id == workspace_id,
            DiagnosisSession.session_id == session_id,
        )
    ).one_or_none()
    if ds is None:
        ds = DiagnosisSession(workspace_id=workspace_id, session_id=session_id, kind=kind)
        session.add(ds)
        session.flush()
    return ds


def _set(obj: Any, values: Mapping[str, Any]) -> bool:
    changed = False
    for key, value in values.items():
        if getattr(obj, key) != value:
            setattr(obj, key, value)
            changed = True
    return changed


def _targets_with_feedback(session: Session, run_pk: int, target_type: TargetType) -> set[int]:
    return set(
        session.scalars(
            select(Feedback.target_id).where(
                Feedback.run_pk == run_pk, Feedback.target_type == target_type.value
            )
        )
    )


def _sync_children(
    session: Session,
    existing: Sequence[Any],
    incoming: Sequence[Mapping[str, Any]],
    key_attr: str,
    make: Any,
    values_of: Any,
    keep: set[int],
) -> bool:
    """Upsert ordered children by the agent's id (else by position). Children missing from
    ``incoming`` are deleted unless their id is in ``keep`` (they carry feedback: SPEC 10),
    in which case they stay, moved after the incoming ones. Returns whether anything changed."""
    changed = False
    by_key = {getattr(c, key_attr) or f"#{c.ordinal}": c for c in existing}
    original_ordinal = {c.id: c.ordinal for c in existing}
    # Park ordinals out of the way so re-ordering never trips UNIQUE(run, ordinal).
    for child in existing:
        child.ordinal = -child.id
    session.flush()
    seen: set[int] = set()
    for position, doc in enumerate(incoming, start=1):
        key = doc.get("id") or f"#{position}"
        values = values_of(doc)
        child = by_key.get(key)
        if child is None:
            session.add(make(key=doc.get("id"), ordinal=position, **values))
            changed = True
            continue
        seen.add(child.id)
        changed |= _set(child, values) or original_ordinal[child.id] != position
        child.ordinal = position
    position = len(incoming)
    for child in existing:
        if child.id in seen:
            continue
        if child.id in keep:
            position += 1
            changed |= original_ordinal[child.id] != position
            child.ordinal = position
        else:
            session.delete(child)
            changed = True
    session.flush()
    return changed


def _message_values(doc: Mapping[str, Any]) -> dict[str, Any]:
    role = doc.get("role")
    if role not in {r.value for r in MessageRole}:
        raise ValidationFailed("messages[].role", "must be user, assistant, tool or system")
    meta = doc.get("metadata") or {}
    if not isinstance(meta, Mapping):
        raise ValidationFailed("messages[].metadata", "must be an object")
    content = doc.get("content")
    if content is not None and not isinstance(content, str):
        raise ValidationFailed("messages[].content", "must be a string or null")
    return {"role": role, "content": content, "meta": dict(meta)}


def _step_values(doc: Mapping[str, Any]) -> dict[str, Any]:
    name = doc.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValidationFailed("steps[].name", "required string")
    return {
        "name": name[:300],
        "status": doc.get("status"),
        "summary": doc.get("summary"),
        "started_at": _ts(doc, "started_at"),
        "finished_at": _ts(doc, "finished_at"),
    }


def upsert_run(
    session: Session, actor: Actor, workspace_id: int, run_id: str, doc: Mapping[str, Any]
) -> UpsertResult:
    """Create or update the run ``run_id`` of ``workspace_id`` from a run document; commit once.

    ``doc`` (already shape-checked by the caller's JSON Schema where there is one):
    {session_id, kind, query, answer?, status?, started_at?, finished_at?, alert?,
    external_outcome?, external_outcome_detail?, messages?, steps?, report?, tool_calls?,
    verifier_evaluation?, aiops_rule_evaluation?, self_evaluation? (legacy root),
    orchestration_trace?}. Re-ingest is an upsert by the agent's ids (SPEC 10): fields
    update, new children are added, a child with feedback is never deleted or re-keyed.
    The run is scored when it is finished (SUCCESS / FAILED).
    Raises ``Forbidden`` (actor may not write into the workspace), ``ValidationFailed``.
    """
    from .evaluations import apply_imported, refresh_run

    require_role(session, actor, workspace_id, Role.REVIEWER if actor.is_token else Role.ADMIN)
    if not isinstance(run_id, str) or not run_id.strip() or len(run_id) > 160:
        raise ValidationFailed("run_id", "required string of 1-160 characters")
    kind = doc.get("kind", RunKind.CHAT.value)
    if kind not in {k.value for k in RunKind}:
        raise ValidationFailed("kind", "must be chat or aiops")
    status = doc.get("status", RunStatus.RUNNING.value)
    if status not in {s.value for s in RunStatus}:
        raise ValidationFailed("status", "must be RUNNING, SUCCESS or FAILED")
    session_id = doc.get("session_id") or run_id
    if not isinstance(session_id, str) or len(session_id) > 160:
        raise ValidationFailed("session_id", "must be a string of at most 160 characters")

    ds = _get_or_create_session(session, workspace_id, session_id, kind)
    run = session.scalars(
        select(Run).where(Run.workspace_id == workspace_id, Run.run_id == run_id)
    ).one_or_none()
    created = run is None
    fields: dict[str, Any] = {
        "diagnosis_session_id": ds.id,
        "kind": kind,
        "query": doc.get("query") or "",
        "answer": doc.get("answer"),
        "status": status,
        "alert": doc.get("alert"),
        "orchestration_trace": doc.get("orchestration_trace"),
        "external_outcome": doc.get("external_outcome"),
        "external_outcome_detail": doc.get("external_outcome_detail"),
        "started_at": _ts(doc, "started_at"),
        "finished_at": _ts(doc, "finished_at"),
    }
    if created:
        run = Run(run_id=run_id, workspace_id=workspace_id, **fields)
        session.add(run)
        session.flush()
        changed = True
    else:
        changed = _set(run, fields)

    if "messages" in doc:
        changed |= _sync_children(
            session, list(run.messages), doc.get("messages") or [], "message_id",
            lambda key, **v: Message(run_pk=run.id, message_id=key, **v), _message_values,
            _targets_with_feedback(session, run.id, TargetType.CHAT_MESSAGE)
            | _targets_with_feedback(session, run.id, TargetType.CITATION),
        )
    if "steps" in doc:
        changed |= _sync_children(
            session, list(run.steps), doc.get("steps") or [], "step_id",
            lambda key, **v: DiagnosticStep(run_pk=run.id, step_id=key, **v), _step_values,
            _targets_with_feedback(session, run.id, TargetType.DIAGNOSTIC_STEP),
        )
    session.expire(run, ["messages", "steps"])
    if "report" in doc:
        changed |= _sync_report(session, run, doc.get("report"))
    tool_results = []
    for ordinal, record in enumerate(doc.get("tool_calls") or [], start=1):
        if not isinstance(record, Mapping):
            raise ValidationFailed(f"tool_calls[{ordinal - 1}]", "expected an object")
        tool_results.append(upsert_record(session, run, record, ordinal))
    if any(r != "unchanged" for r in tool_results):
        changed = True
    session.flush()
    # Evaluations are applied even when nothing else changed: a verifier result may
    # arrive with a re-sent, otherwise identical document.
    changed |= apply_imported(session, run, imported_evaluations(doc))
    if changed:
        refresh_run(session, run)
    session.commit()
    return UpsertResult(
        run=run,
        result="created" if created else ("updated" if changed else "unchanged"),
        tool_calls=run.tool_call_count,
        failed_tool_calls=run.failed_tool_call_count,
    )


def _sync_report(session: Session, run: Run, report: Any) -> bool:
    content = report.get("content") if isinstance(report, Mapping) else report
    if content is None:
        return False  # a report with feedback is never deleted; absence removes nothing
    if not isinstance(content, str):
        raise ValidationFailed("report.content", "must be a string")
    if run.report is None:
        run.report = DiagnosticReport(run_pk=run.id, content=content)
        return True
    if run.report.content != content:
        run.report.content = content
        return True
    return False


@dataclass(frozen=True)
class RunPage:
    """A page of runs plus the cursor of the next page (``None`` on the last page)."""

    runs: list[Run]
    next_cursor: str | None
    total: int


def list_runs(
    session: Session, actor: Actor, *, limit: int = 50, cursor: str | None = None
) -> RunPage:
    """The actor's visible runs, newest first, keyset-paginated on (created_at, id).

    ``cursor`` is the opaque value of a previous page's ``next_cursor``.
    Raises ``ValidationFailed`` for a malformed cursor.
    """
    from ..domain.pagination import decode_cursor, encode_cursor

    base = runs_visible_to(actor)
    total = session.scalar(select(func.count()).select_from(base.subquery())) or 0
    stmt = base.order_by(Run.created_at.desc(), Run.id.desc())
    if cursor:
        try:
            created_at, run_pk = decode_cursor(cursor)
        except ValueError:
            raise ValidationFailed("cursor", "malformed cursor") from None
        stmt = stmt.where(
            (Run.created_at < created_at) | ((Run.created_at == created_at) & (Run.id < run_pk))
        )
    rows = list(session.scalars(stmt.limit(limit + 1)))
    next_cursor = None
    if len(rows) > limit:
        rows = rows[:limit]
        next_cursor = encode_cursor(rows[-1].created_at, rows[-1].id)
    return RunPage(rows, next_cursor, int(total))
