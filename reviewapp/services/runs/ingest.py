"""Runs, the ingest side: upsert a run document, finish a run (SPEC 3, 9, 10)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ...actors import Actor, Role
from ...domain.self_evaluation import imported_evaluations
from ...domain.target_types import codes_of_model
from ...errors import Conflict, Forbidden, ServiceError, ValidationFailed
from ...models import (
    DiagnosisSession,
    DiagnosticStep,
    Message,
    Run,
    RunKind,
    RunStatus,
    ToolCall,
)
from ...models.base import utcnow
from ...queries import (
    insert_for,
)
from .. import documents, rollups
from ..access import require_role
from ..evaluations import apply_imported, refresh_run
from ..feedback.verdict import promote_on_finish
from ..params import timestamp_at
from ..retry import retry_on_conflict
from ..run_text import store_run_text
from ..secret_scan import redact_finish, redact_outcome, redact_run_document, refuse_secret_id
from ..tool_calls import check_records, upsert_records
from . import rateable
from ._children import (
    ANSWER_MESSAGE_ID,
    assign_changed,
    ensure_answer_message,
    keep_rated_citations,
    sync_children,
    sync_report,
    targets_with_feedback,
)
from .queue_fill import offer_run


@dataclass(frozen=True)
class UpsertResult:
    """What ``upsert_run`` / ``finish_run`` did: ``created`` | ``updated`` | ``unchanged``,
    plus the run's tool-call counts after it."""

    run: Run
    result: str
    tool_calls: int
    failed_tool_calls: int


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


def _message_values(doc: Mapping[str, Any]) -> dict[str, Any]:
    return {"role": doc["role"], "content": doc.get("content"), "meta": dict(doc.get("metadata") or {})}


def _check_order(started_at: datetime | None, ended_at: datetime | None, path: str) -> None:
    """An end before its start is refused (a negative duration is never shown, SPEC 4)."""
    if started_at is not None and ended_at is not None and ended_at < started_at:
        raise ValidationFailed(path, f"{ended_at.isoformat()} is before the start {started_at.isoformat()}")


def _step_values(doc: Mapping[str, Any], index: int) -> dict[str, Any]:
    started_at = timestamp_at(doc.get("started_at"), f"steps[{index}].started_at")
    finished_at = timestamp_at(doc.get("finished_at"), f"steps[{index}].finished_at")
    _check_order(started_at, finished_at, f"steps[{index}].finished_at")
    return {
        "name": doc["name"],
        "status": doc.get("status"),
        "summary": doc.get("summary"),
        "started_at": started_at,
        "finished_at": finished_at,
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
    """``run_id`` if it matches the published pattern (``run_document.schema.json``
    ``$defs.run_id``: ASCII letters, digits and ``._:@-``, 1-160 characters, starting with
    a letter or digit; no ``/``, so a run id is one URL path segment and
    ``/api/ingest/runs/<id>/finish`` can never be read as a run named ``<id>/finish``);
    else ``ValidationFailed("run_id", ...)``."""
    if not documents.valid_run_id(run_id):
        raise ValidationFailed("run_id", documents.run_id_rule())
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
    Re-ingest is an upsert by the agent's ids (SPEC 10) and a whole-document replace:
    scalar fields take the document's values (an omitted field becomes null / its
    default, so send the whole document every time), messages / steps present in the document are synced (a child with
    feedback is never deleted or re-keyed), a report is added or updated (never removed),
    tool-call records are upserted (never removed), the agent's evaluations replace their
    own key of ``self_evaluation``. The run is refreshed (counts, scoring) when anything
    changed. Timestamps without offset are UTC.
    Refused with ``ValidationFailed`` naming the field: a time outside the years
    2000-2100; an end before its start (``finished_at`` of the run or of
    ``steps[i]``, ``tool_calls[i].completed_at``); a score outside 0-100
    (``verifier_evaluation.groundedness_score``, SPEC 5: 0-1 or 0-100 scale); a number
    that is not finite anywhere; a ``run_id`` holding a secret (``secret_scan.
    refuse_secret_id``, also in ``finish_run`` / ``set_outcome``). A ``session_id``
    holding one is stored redacted with a digest (``secret_scan.redact_session_id``).
    A document with only ``run_id`` and the outcome (``outcome_only``) for an existing run
    sets its outcome through ``set_outcome`` and changes nothing else.
    A finished run (SUCCESS / FAILED) never goes back to RUNNING: such a document
    (also one that omits ``status``, which defaults to RUNNING) is a ``Conflict`` whose
    message starts with ``status:`` and whose details carry the current state.
    Raises ``Forbidden`` (actor may not write into the workspace), ``ValidationFailed``
    naming the field path, ``Conflict``.
    """
    require_role(session, actor, workspace_id, Role.REVIEWER if actor.is_token else Role.ADMIN)
    refuse_secret_id(check_run_id(run_id), "run_id")
    documents.check("run_document", doc)
    if outcome_only(doc) and _find(session, workspace_id, run_id) is not None:
        # Only the outcome: set it on the existing run, touch nothing else (issue 14).
        return set_outcome(session, actor, workspace_id, run_id,
                           {k: v for k, v in doc.items() if k != "run_id"})
    doc = redact_run_document(doc)  # SPEC 4: every text, before anything else reads it
    if doc.get("run_id") not in (None, run_id):
        raise ValidationFailed("run_id", "differs from the run_id of the address")
    _check_ids(doc)
    check_records(doc.get("tool_calls") or [])
    started_at = timestamp_at(doc.get("started_at"), "started_at")
    finished_at = timestamp_at(doc.get("finished_at"), "finished_at")
    _check_order(started_at, finished_at, "finished_at")
    prepared = _Prepared(
        started_at=started_at,
        finished_at=finished_at,
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
    kind = doc.get("kind") or RunKind.CHAT.value
    status = doc.get("status") or RunStatus.RUNNING.value
    run = _locked_run(session, workspace_id, run_id, status)
    ds = _get_or_create_session(session, workspace_id, doc.get("session_id") or run_id, kind)
    created = run is None
    fields = _run_fields(doc, ds.id, kind, status, prepared)
    if run is None:
        run = Run(run_id=run_id, workspace_id=workspace_id, **fields)
        session.add(run)
        session.flush()
        rollups.track(session, [run.id], rollups.Part.ALL, created=True)
        changed = True
    else:
        parent_before = (run.kind, run.diagnosis_session_id)
        changed = assign_changed(run, fields)
        if (run.kind, run.diagnosis_session_id) != parent_before:
            _reparent_tool_calls(session, run)
    changed |= _sync_children(session, run, doc, prepared)
    if changed:
        # before the queue rules read it (offer_run); a new run holds no rating yet
        rateable.refresh(session, run, rated=not created)
        store_run_text(session, [run.id])  # before queue rules read it (offer_run)
        refresh_run(session, run)
        promote_on_finish(session, run)
        offer_run(session, run)
    session.commit()
    return UpsertResult(
        run=run,
        result="created" if created else ("updated" if changed else "unchanged"),
        tool_calls=run.tool_call_count,
        failed_tool_calls=run.failed_tool_call_count,
    )


def _locked_run(session: Session, workspace_id: int, run_id: str, status: str) -> Run | None:
    """The stored run, locked first (PostgreSQL FOR NO KEY UPDATE: the writers of a run
    and its calls take the run's lock before anything else, in the same order,
    ``tool_calls._lifecycle.Batch``), or None. A finished run stays finished: a document
    with ``status`` RUNNING (a partial one, or a stale agent) is a ``Conflict`` and must
    not reopen it and wipe its end (SPEC 9). A stored run's roll-ups are tracked: the
    dashboard gets the net change of the whole upsert at commit."""
    run = _find(session, workspace_id, run_id, lock=True)
    if run is not None and run.status != RunStatus.RUNNING.value and status == RunStatus.RUNNING.value:
        raise Conflict(f"status: run is already {run.status}; a finished run cannot go back to RUNNING",
                       details=_state(run))
    if run is not None:
        rollups.track(session, [run.id], rollups.Part.ALL)
    return run


def _run_fields(doc: Mapping[str, Any], session_pk: int, kind: str, status: str,
                prepared: _Prepared) -> dict[str, Any]:
    """The run's own columns as the document gives them (absent texts: query '', others None)."""
    return {
        "diagnosis_session_id": session_pk,
        "kind": kind,
        "query": doc.get("query") or "",
        "answer": doc.get("answer"),
        "status": status,
        "alert": doc.get("alert"),
        "orchestration_trace": doc.get("orchestration_trace"),
        "external_outcome": doc.get("external_outcome"),
        "external_outcome_detail": doc.get("external_outcome_detail"),
        "started_at": prepared.started_at,
        "finished_at": prepared.finished_at,
    }


def _sync_children(session: Session, run: Run, doc: Mapping[str, Any], prepared: _Prepared) -> bool:
    """Messages, steps, report, tool calls, the answer message and the imported
    evaluations brought in line with the document; True when any of them changed."""
    changed = False
    if prepared.messages is not None:
        changed |= _sync_messages(session, run, prepared.messages)
    if prepared.steps is not None:
        changed |= sync_children(
            session, list(run.steps), prepared.steps, "step_id",
            lambda key, **v: DiagnosticStep(run_pk=run.id, step_id=key, **v),
            targets_with_feedback(session, run.id, *codes_of_model("DiagnosticStep")),
            text=(run, codes_of_model("DiagnosticStep", whole_row=True), "summary"),
        )
    session.expire(run, ["messages", "steps"])
    if "report" in doc:
        changed |= sync_report(session, run, doc.get("report"))
    if doc.get("tool_calls"):
        results = upsert_records(session, run, doc["tool_calls"])
        changed |= any(r != "unchanged" for r in results)
    changed |= ensure_answer_message(session, run)
    # Evaluations are applied even when nothing else changed: a verifier result may
    # arrive with a re-sent, otherwise identical document.
    changed |= apply_imported(session, run, imported_evaluations(doc))
    return changed


def _sync_messages(session: Session, run: Run,
                   messages: list[tuple[str | None, dict[str, Any]]]) -> bool:
    """The run's messages as the document lists them; a rated message, citation or
    conversation turn stays (SPEC 10), and so does the answer message made from
    ``run.answer``, which is not in the agent's document (re-sending the same document
    changes nothing). True when a message changed."""
    keep_rated_citations(session, run, messages)
    # Every type that rates a message (the answer, a citation of it, a turn) keeps it.
    keep = targets_with_feedback(session, run.id, *codes_of_model("Message"))
    keep |= {m.id for m in run.messages if m.message_id == ANSWER_MESSAGE_ID
             and (m.meta or {}).get("source") == "run.answer"}
    return sync_children(
        session, list(run.messages), messages, "message_id",
        lambda key, **v: Message(run_pk=run.id, message_id=key, **v), keep,
        # A message is rated whole as the answer or as a conversation turn.
        text=(run, codes_of_model("Message", whole_row=True), "content"),
    )


def _state(run: Run) -> dict[str, Any]:
    """The run's current state for a ``Conflict``'s details."""
    return {"run_id": run.run_id, "status": run.status,
            "finished_at": run.finished_at.isoformat() if run.finished_at else None}


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
    (counts and scoring, ``evaluations.refresh_run``); a run already judged ``useful``
    becomes a case now that it is finished with an answer (SPEC 7). Finishing again with the same status
    is idempotent (``unchanged`` unless values differ); finishing a finished run with the
    other status is a ``Conflict`` whose details carry the current state. A
    ``finished_at`` before the run's ``started_at`` or outside the years 2000-2100 is a
    ``ValidationFailed`` naming ``finished_at``; a ``run_id`` holding a secret, naming ``run_id``.
    Raises ``Forbidden`` (no such run in the workspace, or not the actor's: one answer),
    ``ValidationFailed``, ``Conflict``.
    """
    require_role(session, actor, workspace_id, Role.REVIEWER if actor.is_token else Role.ADMIN)
    refuse_secret_id(check_run_id(run_id), "run_id")
    documents.check("run_finish", body)
    body = redact_finish(body)  # SPEC 4
    status = body["status"]
    finished_at = timestamp_at(body.get("finished_at"), "finished_at")
    # Locked (PostgreSQL): of two racing finishes with different statuses the second
    # sees the first one's status and gets the Conflict, instead of overwriting it.
    run = _find(session, workspace_id, run_id, lock=True)
    if run is None:
        raise Forbidden()
    rollups.track(session, [run.id], rollups.Part.RUN)
    _check_order(run.started_at, finished_at, "finished_at")
    if run.status not in (RunStatus.RUNNING.value, status):
        raise Conflict(f"run is already {run.status}", details=_state(run))
    values: dict[str, Any] = {"status": status}
    if body.get("answer") is not None:
        values["answer"] = body["answer"]
    if finished_at is not None:
        values["finished_at"] = finished_at
    elif run.finished_at is None:
        values["finished_at"] = utcnow()
    changed = assign_changed(run, values)
    if changed:
        session.flush()
        ensure_answer_message(session, run)
        rateable.refresh(session, run)  # before the queue rules read it (offer_run)
        store_run_text(session, [run.id])  # before queue rules read it (offer_run)
        refresh_run(session, run)
        promote_on_finish(session, run)
        offer_run(session, run)
    session.commit()
    return UpsertResult(run, "updated" if changed else "unchanged",
                        run.tool_call_count, run.failed_tool_call_count)


# The fields of a run document that an outcome-only document may carry.
OUTCOME_FIELDS = frozenset({"run_id", "external_outcome", "external_outcome_detail"})


def outcome_only(doc: Mapping[str, Any]) -> bool:
    """True for a run document that carries only ``run_id`` (optional) and the outcome
    (``external_outcome``, optionally its detail): for an existing run it sets the
    outcome instead of replacing the run."""
    return "external_outcome" in doc and set(doc) <= OUTCOME_FIELDS


def _find(session: Session, workspace_id: int, run_id: str, *, lock: bool = False
          ) -> Run | None:
    """The run ``run_id`` of ``workspace_id``, or ``None``. ``lock``: take its lock
    (PostgreSQL ``FOR NO KEY UPDATE``, the lock every writer of a run and its calls takes
    first, see ``tool_calls._lifecycle.Batch``) and refresh it from the row (``populate_existing``)."""
    stmt = select(Run).where(Run.workspace_id == workspace_id, Run.run_id == run_id)
    if lock:
        stmt = stmt.with_for_update(key_share=True).execution_options(populate_existing=True)
    return session.scalars(stmt).one_or_none()


def set_outcome(
    session: Session, actor: Actor, workspace_id: int, run_id: str, body: Mapping[str, Any]
) -> UpsertResult:
    """Set the external outcome of the run ``run_id`` of ``workspace_id``; commit once
    (SPEC 9). The one service of ``PATCH /api/ingest/runs/<run_id>/outcome``,
    ``flask runs set-outcome``, outcome-only documents and SREGym verdict files.

    ``body`` follows ``schemas/run_outcome.schema.json``: {external_outcome: label (1-32
    characters) | null, external_outcome_detail?: {source?, reward?, checks?: [{name,
    passed, detail?}], missed_actions?: [...], ...} | null}. A field left out keeps its
    value; query, answer, status, times, messages and calls are never touched, whatever
    the run's status. Texts are redacted first (SPEC 4). Result ``updated`` or
    ``unchanged``.
    Raises ``Forbidden`` (no such run in the workspace, or the actor may not write there:
    one answer), ``ValidationFailed`` naming the field (``run_id`` holding a secret too).
    """
    require_role(session, actor, workspace_id, Role.REVIEWER if actor.is_token else Role.ADMIN)
    refuse_secret_id(check_run_id(run_id), "run_id")
    documents.check("run_outcome", body)
    body = redact_outcome(body)
    run = _find(session, workspace_id, run_id, lock=True)
    if run is None:
        raise Forbidden()
    values = {key: body[key] for key in ("external_outcome", "external_outcome_detail") if key in body}
    changed = assign_changed(run, values)
    session.commit()
    return UpsertResult(run, "updated" if changed else "unchanged", run.tool_call_count,
                        run.failed_tool_call_count)
