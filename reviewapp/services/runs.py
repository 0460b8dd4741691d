"""Runs: ingest / upsert a run document, finish a run, list runs (SPEC 3, 9, 10)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..domain.times import parse_timestamp
from ..errors import Conflict, Forbidden, ServiceError, ValidationFailed
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
    ToolCall,
)
from ..models.base import utcnow
from ..queries import insert_for, runs_visible_to
from . import documents
from .access import require_role
from .retry import retry_on_conflict
from .tool_calls import check_records, upsert_records


@dataclass(frozen=True)
class UpsertResult:
    """What ``upsert_run`` / ``finish_run`` did: ``created`` | ``updated`` | ``unchanged``,
    plus the run's tool-call counts after it."""

    run: Run
    result: str
    tool_calls: int
    failed_tool_calls: int


def _ts(value: Any, path: str) -> datetime | None:
    try:
        return parse_timestamp(value, path)
    except ValueError as exc:
        raise ValidationFailed(path, str(exc).split(": ", 1)[-1]) from None


def _get_or_create_session(
    session: Session, workspace_id: int, session_id: str, kind: str
) -> DiagnosisSession:
    stmt = select(DiagnosisSession).where(
        DiagnosisSession.workspace_id == workspace_id, DiagnosisSession.session_id == session_id
    )
    found = session.scalars(stmt).one_or_none()
    if found is not None:
        return found
    # INSERT .. ON CONFLICT DO NOTHING, then read: two first ingests of one session racing
    # each other end with one row and no error.
    session.execute(
        insert_for(session, DiagnosisSession.__table__)
        .values(workspace_id=workspace_id, session_id=session_id, kind=kind,
                created_at=utcnow(), updated_at=utcnow())
        .on_conflict_do_nothing(index_elements=["workspace_id", "session_id"])
    )
    return session.scalars(stmt).one()


def _set(obj: Any, values: Mapping[str, Any]) -> bool:
    changed = False
    for key, value in values.items():
        if getattr(obj, key) != value:
            setattr(obj, key, value)
            changed = True
    return changed


def _targets_with_feedback(session: Session, run_pk: int, *types: TargetType) -> set[int]:
    return set(
        session.scalars(
            select(Feedback.target_id).where(
                Feedback.run_pk == run_pk, Feedback.target_type.in_([t.value for t in types])
            )
        )
    )


def _sync_children(
    session: Session,
    existing: Sequence[Any],
    incoming: Sequence[tuple[str | None, dict[str, Any]]],
    key_attr: str,
    make: Callable[..., Any],
    keep: set[int],
) -> bool:
    """Upsert ordered children by the agent's id (else by position) (SPEC 10).

    ``incoming``: (agent id or None, column values) in document order. Children missing
    from ``incoming`` are deleted unless their pk is in ``keep`` (they carry feedback):
    those stay, moved after the incoming ones, never deleted or re-keyed. Writes only
    what changed; ordinals are parked out of the way only when children really move, so
    ``UNIQUE(run, ordinal)`` never trips. Returns whether anything changed.
    """
    by_key: dict[str, Any] = {}
    for child in existing:
        by_key.setdefault(getattr(child, key_attr) or f"#{child.ordinal}", child)
    plan: list[tuple[Any, int, str | None, dict[str, Any]]] = []
    final: dict[int, int] = {}
    for position, (agent_id, values) in enumerate(incoming, start=1):
        child = by_key.get(agent_id or f"#{position}")
        if child is not None and child.id in final:
            child = None
        if child is not None:
            final[child.id] = position
        plan.append((child, position, agent_id, values))
    position = len(plan)
    doomed = []
    for child in sorted(existing, key=lambda c: c.ordinal):
        if child.id in final:
            continue
        if child.id in keep:
            position += 1
            final[child.id] = position
        else:
            doomed.append(child)
    moving = [c for c in existing if c.id in final and c.ordinal != final[c.id]]
    for child in doomed:
        session.delete(child)
    if doomed or moving:
        session.flush()
    if moving:
        for child in moving:
            child.ordinal = -child.id
        session.flush()
        for child in moving:
            child.ordinal = final[child.id]
    changed = bool(doomed or moving)
    for child, position, agent_id, values in plan:
        if child is None:
            session.add(make(key=agent_id, ordinal=position, **values))
            changed = True
        else:
            changed |= _set(child, values)
    session.flush()
    return changed


def _message_values(doc: Mapping[str, Any]) -> dict[str, Any]:
    return {"role": doc["role"], "content": doc.get("content"), "meta": dict(doc.get("metadata") or {})}


def _keep_rated_citations(
    session: Session, run: Run, incoming: list[tuple[str | None, dict[str, Any]]]
) -> None:
    """A citation that carries feedback is never dropped from its message (SPEC 10): if a
    re-ingested message no longer lists it, it is appended back."""
    rated: dict[int, set[str]] = {}
    for target_id, subject in session.execute(
        select(Feedback.target_id, Feedback.subject_key).where(
            Feedback.run_pk == run.id, Feedback.target_type == TargetType.CITATION.value)
    ):
        rated.setdefault(target_id, set()).add(subject)
    if not rated:
        return
    by_key = {m.message_id or f"#{m.ordinal}": m for m in run.messages}
    for position, (agent_id, values) in enumerate(incoming, start=1):
        message = by_key.get(agent_id or f"#{position}")
        if message is None or message.id not in rated:
            continue
        citations = list(values["meta"].get("citations") or [])
        present = {c.get("id") for c in citations}
        for old in message.citations:
            if old.get("id") in rated[message.id] and old.get("id") not in present:
                citations.append(old)
        if citations:
            values["meta"] = {**values["meta"], "citations": citations}


def _step_values(doc: Mapping[str, Any], index: int) -> dict[str, Any]:
    return {
        "name": doc["name"],
        "status": doc.get("status"),
        "summary": doc.get("summary"),
        "started_at": _ts(doc.get("started_at"), f"steps[{index}].started_at"),
        "finished_at": _ts(doc.get("finished_at"), f"steps[{index}].finished_at"),
    }


def _check_ids(doc: Mapping[str, Any]) -> None:
    for field in ("messages", "steps"):
        seen: set[str] = set()
        for index, child in enumerate(doc.get(field) or []):
            agent_id = child.get("id")
            if agent_id is None:
                continue
            if agent_id in seen:
                raise ValidationFailed(f"{field}[{index}].id", "duplicate id in this run")
            seen.add(agent_id)


def check_run_id(run_id: Any) -> str:
    """``run_id`` if it is a string of 1-160 characters with a non-blank; else
    ``ValidationFailed("run_id", ...)``."""
    if not isinstance(run_id, str) or not run_id.strip() or len(run_id) > 160:
        raise ValidationFailed("run_id", "required string of 1-160 characters")
    return run_id


def upsert_run(
    session: Session, actor: Actor, workspace_id: int, run_id: str, doc: Mapping[str, Any]
) -> UpsertResult:
    """Create or update the run ``run_id`` of ``workspace_id`` from a run document; commit once.

    ``doc`` follows ``schemas/run_document.schema.json`` (checked here, for every caller):
    {run_id?, session_id?, kind?, query?, answer?, status?, started_at?, finished_at?,
    alert?, external_outcome?, external_outcome_detail?, messages?, steps?, report?,
    tool_calls?, verifier_evaluation?, aiops_rule_evaluation?, self_evaluation? (legacy
    root), orchestration_trace?}. ``run_id`` is unique per workspace: the same id in
    another workspace is another run, never read or touched here (SPEC 2).
    Re-ingest is an upsert by the agent's ids (SPEC 10): scalar fields take the
    document's values, messages / steps present in the document are synced (a child with
    feedback is never deleted or re-keyed), a report is added or updated (never removed),
    tool-call records are upserted (never removed), the agent's evaluations replace their
    own key of ``self_evaluation``. The run is refreshed (counts, scoring) when anything
    changed. Timestamps without offset are UTC.
    Raises ``Forbidden`` (actor may not write into the workspace), ``ValidationFailed``
    naming the field path.
    """
    require_role(session, actor, workspace_id, Role.REVIEWER if actor.is_token else Role.ADMIN)
    check_run_id(run_id)
    documents.check("run_document", doc)
    if doc.get("run_id") not in (None, run_id):
        raise ValidationFailed("run_id", "differs from the run_id of the address")
    _check_ids(doc)
    check_records(doc.get("tool_calls") or [])
    prepared = _Prepared(
        started_at=_ts(doc.get("started_at"), "started_at"),
        finished_at=_ts(doc.get("finished_at"), "finished_at"),
        messages=[(m.get("id"), _message_values(m)) for m in doc["messages"]]
        if "messages" in doc else None,
        steps=[(s.get("id"), _step_values(s, i)) for i, s in enumerate(doc["steps"])]
        if "steps" in doc else None,
    )
    try:
        return retry_on_conflict(
            session, lambda: _upsert(session, workspace_id, run_id, doc, prepared))
    except ServiceError:
        session.rollback()  # e.g. a call id of another run, found after the first writes
        raise


@dataclass
class _Prepared:
    started_at: datetime | None
    finished_at: datetime | None
    messages: list[tuple[str | None, dict[str, Any]]] | None
    steps: list[tuple[str | None, dict[str, Any]]] | None


def _upsert(session: Session, workspace_id: int, run_id: str, doc: Mapping[str, Any],
            prepared: _Prepared) -> UpsertResult:
    from .evaluations import refresh_run

    kind = doc.get("kind") or RunKind.CHAT.value
    ds = _get_or_create_session(session, workspace_id, doc.get("session_id") or run_id, kind)
    run = session.scalars(
        select(Run).where(Run.workspace_id == workspace_id, Run.run_id == run_id)
    ).one_or_none()
    created = run is None
    fields: dict[str, Any] = {
        "diagnosis_session_id": ds.id,
        "kind": kind,
        "query": doc.get("query") or "",
        "answer": doc.get("answer"),
        "status": doc.get("status") or RunStatus.RUNNING.value,
        "alert": doc.get("alert"),
        "orchestration_trace": doc.get("orchestration_trace"),
        "external_outcome": doc.get("external_outcome"),
        "external_outcome_detail": doc.get("external_outcome_detail"),
        "started_at": prepared.started_at,
        "finished_at": prepared.finished_at,
    }
    if created:
        run = Run(run_id=run_id, workspace_id=workspace_id, **fields)
        session.add(run)
        session.flush()
        changed = True
    else:
        parent_before = (run.kind, run.diagnosis_session_id)
        changed = _set(run, fields)
        if (run.kind, run.diagnosis_session_id) != parent_before:
            _reparent_tool_calls(session, run)

    if prepared.messages is not None:
        _keep_rated_citations(session, run, prepared.messages)
        changed |= _sync_children(
            session, list(run.messages), prepared.messages, "message_id",
            lambda key, **v: Message(run_pk=run.id, message_id=key, **v),
            _targets_with_feedback(session, run.id, TargetType.CHAT_MESSAGE, TargetType.CITATION),
        )
    if prepared.steps is not None:
        changed |= _sync_children(
            session, list(run.steps), prepared.steps, "step_id",
            lambda key, **v: DiagnosticStep(run_pk=run.id, step_id=key, **v),
            _targets_with_feedback(session, run.id, TargetType.DIAGNOSTIC_STEP),
        )
    session.expire(run, ["messages", "steps"])
    if "report" in doc:
        changed |= _sync_report(session, run, doc.get("report"))
    if doc.get("tool_calls"):
        results = upsert_records(session, run, doc["tool_calls"])
        changed |= any(r != "unchanged" for r in results)
    changed |= _apply_imported_evaluations(run, doc)
    if changed:
        session.flush()
        refresh_run(session, run)
    session.commit()
    return UpsertResult(
        run=run,
        result="created" if created else ("updated" if changed else "unchanged"),
        tool_calls=run.tool_call_count,
        failed_tool_calls=run.failed_tool_call_count,
    )


def _reparent_tool_calls(session: Session, run: Run) -> None:
    # The one-parent CHECK follows the run's kind and session (SPEC 3).
    aiops = run.kind == RunKind.AIOPS.value
    session.execute(
        update(ToolCall).where(ToolCall.run_pk == run.id).values(
            chat_session_id=None if aiops else run.diagnosis_session_id,
            diagnostic_task_id=run.diagnosis_session_id if aiops else None,
        ).execution_options(synchronize_session="fetch")
    )


def finish_run(
    session: Session, actor: Actor, workspace_id: int, run_id: str, body: Mapping[str, Any]
) -> UpsertResult:
    """Mark the run ``run_id`` of ``workspace_id`` finished; commit once (SPEC 9, 5.1).

    ``body`` follows ``schemas/run_finish.schema.json``: {status: SUCCESS | FAILED,
    answer?, finished_at?}. ``answer`` replaces the answer when given; ``finished_at``
    (ISO 8601 / epoch, offset-less = UTC) defaults to now. Then the run is refreshed
    (counts and scoring, ``evaluations.refresh_run``). Finishing again with the same status
    is idempotent (``unchanged`` unless values differ); finishing a finished run with the
    other status is a ``Conflict`` whose details carry the current state.
    Raises ``Forbidden`` (no such run in the workspace, or not the actor's: one answer),
    ``ValidationFailed``, ``Conflict``.
    """
    from .evaluations import refresh_run

    require_role(session, actor, workspace_id, Role.REVIEWER if actor.is_token else Role.ADMIN)
    check_run_id(run_id)
    documents.check("run_finish", body)
    status = body["status"]
    finished_at = _ts(body.get("finished_at"), "finished_at")
    run = session.scalars(
        select(Run).where(Run.workspace_id == workspace_id, Run.run_id == run_id)
    ).one_or_none()
    if run is None:
        raise Forbidden()
    if run.status not in (RunStatus.RUNNING.value, status):
        raise Conflict(f"run is already {run.status}",
                       details={"run_id": run.run_id, "status": run.status,
                                "finished_at": run.finished_at.isoformat() if run.finished_at else None})
    values: dict[str, Any] = {"status": status}
    if body.get("answer") is not None:
        values["answer"] = body["answer"]
    if finished_at is not None:
        values["finished_at"] = finished_at
    elif run.finished_at is None:
        values["finished_at"] = utcnow()
    changed = _set(run, values)
    if changed:
        session.flush()
        refresh_run(session, run)
    session.commit()
    return UpsertResult(run, "updated" if changed else "unchanged",
                        run.tool_call_count, run.failed_tool_call_count)


def _sync_report(session: Session, run: Run, report: Any) -> bool:
    content = report.get("content") if isinstance(report, Mapping) else report
    if content is None:
        return False  # a report with feedback is never deleted; absence removes nothing
    if run.report is None:
        run.report = DiagnosticReport(run_pk=run.id, content=content)
        return True
    if run.report.content != content:
        run.report.content = content
        return True
    return False


def _apply_imported_evaluations(run: Run, doc: Mapping[str, Any]) -> bool:
    """Keep the agent's own evaluations (verifier, AIOps) as sent, each in its own key of
    ``self_evaluation`` (SPEC 5); a legacy flat root is wrapped. Returns whether it changed."""
    evaluation = dict(run.self_evaluation or {})
    legacy = doc.get("self_evaluation")
    if isinstance(legacy, Mapping):
        if "evidence_score" in legacy:
            evaluation.setdefault("rule_evaluation", dict(legacy))
        elif "verdict" in legacy or "groundedness_score" in legacy:
            evaluation["verifier_evaluation"] = dict(legacy)
        else:
            evaluation.update({k: dict(v) for k, v in legacy.items() if isinstance(v, Mapping)})
    for key in ("verifier_evaluation", "aiops_rule_evaluation"):
        if isinstance(doc.get(key), Mapping):
            evaluation[key] = dict(doc[key])
    changed = False
    if evaluation != (run.self_evaluation or {}):
        run.self_evaluation = evaluation or None
        changed = True
    verifier = (run.self_evaluation or {}).get("verifier_evaluation") or {}
    verdict = verifier.get("verdict") if isinstance(verifier.get("verdict"), str) else None
    if run.verifier_verdict != verdict:
        run.verifier_verdict = verdict
        changed = True
    return changed


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
