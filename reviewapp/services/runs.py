"""Runs: ingest / upsert a run document, finish a run, list runs, the run page's read
model (SPEC 3, 8, 9, 10)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import Select, exists, func, literal, or_, select, union_all, update
from sqlalchemy import false as sa_false
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..domain.timeline import Bar, CallTiming, Layout
from ..domain.timeline import layout as timeline_layout
from ..domain.feedback import answer_message_index, has_answer_text
from ..domain.self_evaluation import imported_evaluations
from ..domain.times import parse_timestamp
from ..errors import Conflict, Forbidden, ServiceError, ValidationFailed
from ..models import (
    Case,
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
    Workspace,
)
from ..models.base import utcnow
from ..queries import (
    get_run_for,
    insert_for,
    runs_of_workspace_visible_to,
    runs_visible_to,
    scope_to_actor,
)
from . import documents
from .access import WorkspaceRole, require_role, roles_of
from .retry import retry_on_conflict
from .secret_scan import redact_finish, redact_run_document
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


def _check_order(started_at: datetime | None, ended_at: datetime | None, path: str) -> None:
    """An end before its start is refused (a negative duration is never shown, SPEC 4)."""
    if started_at is not None and ended_at is not None and ended_at < started_at:
        raise ValidationFailed(path, f"{ended_at.isoformat()} is before the start {started_at.isoformat()}")


def _step_values(doc: Mapping[str, Any], index: int) -> dict[str, Any]:
    started_at = _ts(doc.get("started_at"), f"steps[{index}].started_at")
    finished_at = _ts(doc.get("finished_at"), f"steps[{index}].finished_at")
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
        raise ValidationFailed("run_id", "must match " + documents.run_id_pattern().pattern
                               + " (letters, digits and . _ : @ -, at most 160 characters, no /)")
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
    that is not finite anywhere.
    A finished run (SUCCESS / FAILED) never goes back to RUNNING: such a document
    (also one that omits ``status``, which defaults to RUNNING) is a ``Conflict`` whose
    message starts with ``status:`` and whose details carry the current state.
    Raises ``Forbidden`` (actor may not write into the workspace), ``ValidationFailed``
    naming the field path, ``Conflict``.
    """
    require_role(session, actor, workspace_id, Role.REVIEWER if actor.is_token else Role.ADMIN)
    check_run_id(run_id)
    documents.check("run_document", doc)
    doc = redact_run_document(doc)  # SPEC 4: every text, before anything else reads it
    if doc.get("run_id") not in (None, run_id):
        raise ValidationFailed("run_id", "differs from the run_id of the address")
    _check_ids(doc)
    check_records(doc.get("tool_calls") or [])
    started_at = _ts(doc.get("started_at"), "started_at")
    finished_at = _ts(doc.get("finished_at"), "finished_at")
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
    from .evaluations import apply_imported, refresh_run

    kind = doc.get("kind") or RunKind.CHAT.value
    # Locked first (PostgreSQL FOR NO KEY UPDATE): the writers of a run and its calls
    # take the run's lock before anything else, in the same order (tool_calls._Batch).
    run = session.scalars(
        select(Run).where(Run.workspace_id == workspace_id, Run.run_id == run_id)
        .with_for_update(key_share=True).execution_options(populate_existing=True)
    ).one_or_none()
    status = doc.get("status") or RunStatus.RUNNING.value
    if run is not None and run.status != RunStatus.RUNNING.value and status == RunStatus.RUNNING.value:
        # A finished run stays finished: a partial document (status defaults to RUNNING)
        # or a stale agent must not reopen it and wipe its end (SPEC 9).
        raise Conflict(f"status: run is already {run.status}; a finished run cannot go back to RUNNING",
                       details=_state(run))
    ds = _get_or_create_session(session, workspace_id, doc.get("session_id") or run_id, kind)
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
        keep = _targets_with_feedback(session, run.id, TargetType.CHAT_MESSAGE, TargetType.CITATION)
        # The answer message made from ``run.answer`` is not in the agent's document: it
        # stays (re-sending the same document changes nothing).
        keep |= {m.id for m in run.messages if m.message_id == ANSWER_MESSAGE_ID
                 and (m.meta or {}).get("source") == "run.answer"}
        changed |= _sync_children(
            session, list(run.messages), prepared.messages, "message_id",
            lambda key, **v: Message(run_pk=run.id, message_id=key, **v), keep,
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
    changed |= _ensure_answer_message(session, run)
    # Evaluations are applied even when nothing else changed: a verifier result may
    # arrive with a re-sent, otherwise identical document.
    changed |= apply_imported(session, run, imported_evaluations(doc))
    if changed:
        session.flush()
        refresh_run(session, run)
        _promote_if_useful(session, run)
    session.commit()
    return UpsertResult(
        run=run,
        result="created" if created else ("updated" if changed else "unchanged"),
        tool_calls=run.tool_call_count,
        failed_tool_calls=run.failed_tool_call_count,
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
    ``ValidationFailed`` naming ``finished_at``.
    Raises ``Forbidden`` (no such run in the workspace, or not the actor's: one answer),
    ``ValidationFailed``, ``Conflict``.
    """
    from .evaluations import refresh_run

    require_role(session, actor, workspace_id, Role.REVIEWER if actor.is_token else Role.ADMIN)
    check_run_id(run_id)
    documents.check("run_finish", body)
    body = redact_finish(body)  # SPEC 4
    status = body["status"]
    finished_at = _ts(body.get("finished_at"), "finished_at")
    # Locked (PostgreSQL): of two racing finishes with different statuses the second
    # sees the first one's status and gets the Conflict, instead of overwriting it.
    run = session.scalars(
        select(Run).where(Run.workspace_id == workspace_id, Run.run_id == run_id)
        .with_for_update(key_share=True).execution_options(populate_existing=True)
    ).one_or_none()
    if run is None:
        raise Forbidden()
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
    changed = _set(run, values)
    if changed:
        session.flush()
        _ensure_answer_message(session, run)
        refresh_run(session, run)
        _promote_if_useful(session, run)
    session.commit()
    return UpsertResult(run, "updated" if changed else "unchanged",
                        run.tool_call_count, run.failed_tool_call_count)


# The message that carries a run's answer when the agent sent the answer only as the
# run's ``answer`` field (typically with ``finish``), so that it can be rated (SPEC 6.1).
ANSWER_MESSAGE_ID = "run-answer"


def _ensure_answer_message(session: Session, run: Run) -> bool:
    """Give a finished run whose answer exists only as ``run.answer`` an assistant message
    with that text (``message_id`` ``run-answer``, ``metadata.source`` ``run.answer``),
    appended after the agent's messages, so its answer thumbs exist and set the verdict
    (SPEC 6.1, 6.2, 8). Nothing is added while RUNNING, without answer text, or when an
    assistant message already has text; an earlier ``run-answer`` message follows a changed
    answer. Returns whether anything changed."""
    if run.status == RunStatus.RUNNING.value or not has_answer_text(run.answer):
        return False
    messages = list(session.scalars(select(Message).where(Message.run_pk == run.id)))
    own = next((m for m in messages if m.message_id == ANSWER_MESSAGE_ID
                and (m.meta or {}).get("source") == "run.answer"), None)
    if own is not None:
        return _set(own, {"content": run.answer})
    if any(m.role == MessageRole.ASSISTANT.value and has_answer_text(m.content) for m in messages):
        return False
    ordinal = max((m.ordinal for m in messages), default=0) + 1
    session.add(Message(run_pk=run.id, message_id=ANSWER_MESSAGE_ID, ordinal=ordinal,
                        role=MessageRole.ASSISTANT.value, content=run.answer,
                        meta={"source": "run.answer"}))
    session.flush()
    session.expire(run, ["messages"])
    return True


def _promote_if_useful(session: Session, run: Run) -> None:
    # A useful verdict given while the run was RUNNING or had no answer made no case
    # (SPEC 7); the run becomes a case once it is finished with an answer.
    from .cases import promote_useful

    if run.feedback == "useful":
        promote_useful(session, run)


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


# --------------------------------------------------------------------------------------
# The runs list: filters, sort orders, keyset pagination, bounded counts (SPEC 8)
# --------------------------------------------------------------------------------------

SORTS: dict[str, str] = {
    "newest": "Newest first",
    "oldest": "Oldest first",
    "score_desc": "Highest evidence score",
    "score_asc": "Lowest evidence score",
    "failed_desc": "Most failed tool calls",
    "calls_desc": "Most tool calls",
}
FEEDBACK_STATES = ("useful", "not_useful", "none")
VERIFIER_VERDICTS = ("PASS", "LOW_CONFID", "REJECT", "none")
REVIEWED_STATES = ("not_mine", "mine")
MAX_QUERY_TEXT = 200
# Counts stop here ("10,000+"): counting costs at most this many index entries.
COUNT_CAP = 10_000
# A filtered count reads about cap / selectivity rows, so it stops earlier: with a
# selective filter a million-run workspace is then counted as fast as a small one.
FILTERED_COUNT_CAP = 1_000


@dataclass(frozen=True)
class RunFilters:
    """What the runs list (and the review queue, and a run page's prev / next) shows.

    Every field is optional: ``workspace_id``; ``kind`` chat | aiops; ``status`` RUNNING |
    SUCCESS | FAILED; ``verdict`` the verifier's PASS | LOW_CONFID | REJECT | none (not
    scored); ``feedback`` the run's verdict useful | not_useful | none; ``score_min`` /
    ``score_max`` evidence score bounds, inclusive, 0-100 (unscored runs drop out when a
    bound is set); ``outcome`` the external outcome (case-insensitive); ``reviewed`` not_mine (no
    rating of mine on any part of the run) | mine; ``q`` text contained in the query or
    the answer (case-insensitive); ``sort`` a key of ``SORTS``.
    """

    workspace_id: int | None = None
    kind: str | None = None
    status: str | None = None
    verdict: str | None = None
    feedback: str | None = None
    score_min: int | None = None
    score_max: int | None = None
    outcome: str | None = None
    reviewed: str | None = None
    q: str | None = None
    sort: str = "newest"

    def validated(self) -> "RunFilters":
        """This value when every field is allowed. Raises ``ValidationFailed`` naming the field."""
        allowed = {
            "kind": tuple(k.value for k in RunKind),
            "status": tuple(s.value for s in RunStatus),
            "verdict": VERIFIER_VERDICTS,
            "feedback": FEEDBACK_STATES,
            "reviewed": REVIEWED_STATES,
        }
        for name, values in allowed.items():
            value = getattr(self, name)
            if value is not None and value not in values:
                raise ValidationFailed(name, f"must be one of {', '.join(values)}")
        if self.sort not in SORTS:
            raise ValidationFailed("sort", f"must be one of {', '.join(SORTS)}")
        for name in ("score_min", "score_max"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not 0 <= value <= 100):
                raise ValidationFailed(name, "must be a whole number from 0 to 100")
        if self.score_min is not None and self.score_max is not None \
                and self.score_min > self.score_max:
            raise ValidationFailed("score_max", "must not be below the minimum score")
        if self.q is not None and len(self.q) > MAX_QUERY_TEXT:
            raise ValidationFailed("q", f"at most {MAX_QUERY_TEXT} characters")
        if self.outcome is not None and len(self.outcome) > 32:
            raise ValidationFailed("outcome", "at most 32 characters")
        return self

    @property
    def active(self) -> bool:
        """True when any filter (not the sort) narrows the list."""
        return any(getattr(self, f) not in (None, "") for f in (
            "workspace_id", "kind", "status", "verdict", "feedback", "score_min",
            "score_max", "outcome", "reviewed", "q"))


def sort_keys(sort: str) -> list[tuple[Any, bool]]:
    """(expression, descending) pairs for ``sort``; the id last, so the order is total."""
    return {
        "newest": [(Run.created_at, True), (Run.id, True)],
        "oldest": [(Run.created_at, False), (Run.id, False)],
        "score_desc": [(func.coalesce(Run.evidence_score, -1), True), (Run.id, True)],
        "score_asc": [(func.coalesce(Run.evidence_score, 101), False), (Run.id, False)],
        "failed_desc": [(Run.failed_tool_call_count, True), (Run.id, True)],
        "calls_desc": [(Run.tool_call_count, True), (Run.id, True)],
    }[sort]


def sort_values(run: Run, sort: str) -> list[Any]:
    """``run``'s values for the keys of ``sort_keys(sort)`` (what a cursor stores)."""
    if sort in ("newest", "oldest"):
        return [run.created_at.astimezone(timezone.utc).isoformat(), run.id]
    if sort == "score_desc":
        return [-1 if run.evidence_score is None else run.evidence_score, run.id]
    if sort == "score_asc":
        return [101 if run.evidence_score is None else run.evidence_score, run.id]
    if sort == "failed_desc":
        return [run.failed_tool_call_count, run.id]
    return [run.tool_call_count, run.id]


def bind_sort_values(sort: str, values: list[Any]) -> list[Any]:
    """Cursor values back to bind parameters. Raises ``ValidationFailed`` for bad cursors."""
    try:
        if sort in ("newest", "oldest"):
            at = datetime.fromisoformat(str(values[0]))
            if at.tzinfo is None:
                raise ValueError("naive")
            return [at, int(values[1])]
        return [int(v) for v in values]  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValidationFailed("cursor", "malformed cursor") from None


def _reviewed_by(actor: Actor) -> Any:
    """EXISTS: the actor rated some part of the run."""
    if not actor.is_user:
        return sa_false()
    return exists().where(Feedback.run_pk == Run.id, Feedback.author_id == actor.user_id)


def rateable_run() -> Any:
    """Condition: the run is finished (not RUNNING) and has a part a reviewer can rate:
    an assistant message with text (the answer and its citations), a diagnostic step or
    a diagnostic report (SPEC 6.1 targets). The review queue offers only such runs, so
    it never stops on a run nobody can rate (SPEC 8)."""
    text = func.trim(func.coalesce(Message.content, ""))
    return (Run.status != RunStatus.RUNNING.value) & or_(
        exists().where(Message.run_pk == Run.id, Message.role == MessageRole.ASSISTANT.value,
                       text != ""),
        exists().where(DiagnosticStep.run_pk == Run.id),
        exists().where(DiagnosticReport.run_pk == Run.id),
    )


def filtered_runs(actor: Actor, filters: RunFilters, only_workspace: int | None) -> Select[Any]:
    """The visible runs narrowed by ``filters``, unordered. ``only_workspace`` adds an
    equality on the workspace (an index range instead of a scan) when the actor sees one
    workspace or picked one; the membership check stays in the query either way."""
    workspace_id = filters.workspace_id or only_workspace
    stmt = (runs_of_workspace_visible_to(actor, workspace_id) if workspace_id is not None
            else runs_visible_to(actor))
    if filters.kind:
        stmt = stmt.where(Run.kind == filters.kind)
    if filters.status:
        stmt = stmt.where(Run.status == filters.status)
    if filters.verdict:
        stmt = stmt.where(Run.verifier_verdict.is_(None) if filters.verdict == "none"
                          else Run.verifier_verdict == filters.verdict)
    if filters.feedback:
        stmt = stmt.where(Run.feedback.is_(None) if filters.feedback == "none"
                          else Run.feedback == filters.feedback)
    if filters.score_min is not None:
        stmt = stmt.where(Run.evidence_score >= filters.score_min)
    if filters.score_max is not None:
        stmt = stmt.where(Run.evidence_score <= filters.score_max)
    if filters.outcome:
        stmt = stmt.where(func.lower(Run.external_outcome) == filters.outcome.lower())
    if filters.reviewed == "not_mine":
        stmt = stmt.where(~_reviewed_by(actor))
    elif filters.reviewed == "mine":
        stmt = stmt.where(_reviewed_by(actor))
    if filters.q and filters.q.strip():
        text = filters.q.strip()
        stmt = stmt.where(or_(Run.query.icontains(text, autoescape=True),
                              Run.answer.icontains(text, autoescape=True)))
    return stmt


def single_workspace(session: Session, actor: Actor) -> tuple[list[WorkspaceRole], int | None]:
    """The actor's workspaces, and the id of the only one when there is exactly one."""
    workspaces = roles_of(session, actor)
    return workspaces, (workspaces[0].workspace_id if len(workspaces) == 1 else None)


@dataclass(frozen=True)
class Count:
    """A row count that stops at a cap: ``capped`` True means "``value`` or more"."""

    value: int
    capped: bool


@dataclass(frozen=True)
class RunPage:
    """A page of runs plus the cursor of the next page (``None`` on the last page).

    ``total`` counts every visible run (up to ``COUNT_CAP``), ``filtered`` those matching
    the filters (up to ``FILTERED_COUNT_CAP``; see ``queries.capped_count``); ``reviewed_by_me`` holds the
    ids of the page's runs the actor has rated; ``workspaces`` the actor's workspaces
    (for the workspace filter).
    """

    runs: list[Run]
    next_cursor: str | None
    total: int
    filtered: Count = Count(0, False)
    total_count: Count = Count(0, False)
    reviewed_by_me: frozenset[int] = frozenset()
    workspaces: list[WorkspaceRole] = field(default_factory=list)
    filters: RunFilters = RunFilters()


def list_runs(
    session: Session, actor: Actor, *, limit: int = 50, cursor: str | None = None,
    filters: RunFilters | None = None, count_cap: int = COUNT_CAP,
) -> RunPage:
    """The actor's visible runs matching ``filters``, keyset-paginated in ``filters.sort``
    order (default newest first, ties broken by id so equal timestamps never skip or
    repeat a row). ``cursor`` is the opaque value of a previous page's ``next_cursor``.

    Queries: workspaces, total count, filtered count (skipped when no filter is set),
    the page, the page's "reviewed by me" ids — five at most, whatever the size.
    Raises ``ValidationFailed`` for a bad filter (naming it) or a malformed cursor.
    """
    from ..domain.pagination import decode_keyset, encode_keyset
    from ..queries import capped_count, keyset_after

    filters = (filters or RunFilters()).validated()
    if not 1 <= limit <= 500:
        raise ValidationFailed("limit", "must be 1-500")
    workspaces, only = single_workspace(session, actor)
    keys = sort_keys(filters.sort)
    stmt = filtered_runs(actor, filters, only)
    total_count = Count(*capped_count(session, filtered_runs(actor, RunFilters(), only), count_cap))
    filtered = (Count(*capped_count(session, stmt, min(count_cap, FILTERED_COUNT_CAP)))
                if filters.active else total_count)
    if cursor:
        try:
            raw = decode_keyset(cursor, filters.sort, len(keys))
        except ValueError:
            raise ValidationFailed("cursor", "malformed cursor") from None
        stmt = stmt.where(keyset_after(keys, bind_sort_values(filters.sort, raw)))
    stmt = stmt.order_by(*(k.desc() if d else k.asc() for k, d in keys))
    rows = list(session.scalars(stmt.limit(limit + 1)))
    next_cursor = None
    if len(rows) > limit:
        rows = rows[:limit]
        next_cursor = encode_keyset(filters.sort, sort_values(rows[-1], filters.sort))
    reviewed: frozenset[int] = frozenset()
    if rows and actor.is_user:
        reviewed = frozenset(session.scalars(
            select(Feedback.run_pk).where(
                Feedback.author_id == actor.user_id,
                Feedback.run_pk.in_([r.id for r in rows]),
            ).distinct()
        ))
    return RunPage(rows, next_cursor, total_count.value, filtered, total_count, reviewed,
                   workspaces, filters)


def _neighbours(session: Session, actor: Actor, run: Run, filters: RunFilters,
                only: int | None) -> tuple[int | None, int | None]:
    """The ids of the runs just before and just after ``run`` in the filtered list order
    (one query: the two one-row lookups joined with UNION ALL)."""
    from ..queries import keyset_after

    keys = sort_keys(filters.sort)
    values = bind_sort_values(filters.sort, sort_values(run, filters.sort))
    base = filtered_runs(actor, filters, only)

    def one(previous: bool) -> Any:
        order = [(k.asc() if d else k.desc()) if previous else (k.desc() if d else k.asc())
                 for k, d in keys]
        return (base.with_only_columns(Run.id, literal(1 if previous else 2).label("side"),
                                       maintain_column_froms=True)
                .where(keyset_after(keys, values, reverse=previous))
                .order_by(*order).limit(1).subquery())

    before, after = one(True), one(False)
    found = dict((side, pk) for pk, side in session.execute(
        union_all(select(before.c.id, before.c.side), select(after.c.id, after.c.side))))
    return found.get(1), found.get(2)


# --------------------------------------------------------------------------------------
# The run page: one read model, loaded in a fixed number of queries (SPEC 8, STYLE 3)
# --------------------------------------------------------------------------------------

# SPEC 6.1: the reason list when the workspace has none of its own.
DEFAULT_FEEDBACK_REASONS = ("incorrect", "incomplete", "citation", "unsafe", "other")
# The timeline reads only these columns; arguments, results and errors (up to 2,000
# characters each) are read one call at a time, when a reviewer opens it (get_tool_call).
_TIMELINE_COLUMNS = ("id", "tool_name", "status", "started_at", "completed_at", "duration_ms",
                     "compensated", "match_level", "hit_count", "step_pk", "updated_at")


@dataclass(frozen=True, slots=True)
class TimelineCall:
    """The facts of one tool call the timeline shows (no arguments / result / error)."""

    id: str
    tool_name: str
    status: str
    started_at: datetime | None
    completed_at: datetime | None
    duration_ms: int | None
    compensated: bool
    match_level: str | None
    hit_count: int | None
    step_pk: int | None
    updated_at: datetime


@dataclass(frozen=True)
class CitationView:
    """One citation of an assistant message with the gatekeeper's finding (SPEC 5.4).

    ``gate`` is {status verified | unverified, reason, evidence_ref} or ``None`` when the
    gatekeeper has not looked at it yet.
    """

    message_id: int
    citation_id: str
    title: str
    source: str
    excerpt: str
    evidence_ref: str | None
    gate: dict[str, Any] | None


@dataclass(frozen=True)
class TimelineRow:
    """One call on the timeline: its facts, its bar, the label of its step."""

    call: TimelineCall
    bar: Bar
    step_label: str | None


@dataclass(frozen=True)
class Timeline:
    """The tool-call timeline of one run. ``live`` while the run is RUNNING (the fragment
    then polls itself); ``version`` changes whenever a call or the run status changes."""

    run_pk: int
    status: str
    live: bool
    rows: list[TimelineRow]
    layout: Layout
    version: str


@dataclass(frozen=True)
class TargetState:
    """What one thumbs control shows: the target, the actor's own rating (``mine``, a
    Feedback or ``None``), every reviewer's ``summary`` (TargetSummary or ``None``) and
    the workspace's reason codes."""

    target_type: str
    target_id: int
    subject_key: str
    run_pk: int
    mine: Any
    summary: Any
    reasons: list[str]


@dataclass(frozen=True)
class RunDetail:
    """Everything the run page shows, loaded up front: templates trigger no lazy load.

    ``answer_message`` is the final assistant message (the chat answer's thumbs target);
    ``my_feedback`` maps (target_type, target_id, subject_key) to the actor's own rating;
    ``summary`` maps the same keys to every reviewer's counts (feedback_summary);
    ``evaluation`` is ``run.self_evaluation`` with a legacy flat root wrapped (SPEC 5) or
    ``None`` when not scored yet; ``prev_pk`` / ``next_pk`` are the neighbours in the
    list ``filters`` describe; ``case_id`` the run's case in the case library, if any.
    """

    run: Run
    workspace: Workspace
    diagnosis_session: DiagnosisSession
    messages: list[Message]
    answer_message: Message | None
    citations: list[CitationView]
    steps: list[DiagnosticStep]
    report: DiagnosticReport | None
    timeline: Timeline
    evaluation: dict[str, Any] | None
    my_feedback: dict[tuple[str, int, str], Any]
    summary: dict[tuple[str, int, str], Any]
    reasons: list[str]
    filters: RunFilters
    prev_pk: int | None
    next_pk: int | None
    case_id: str | None = None

    def target(self, target_type: str, target_id: int, subject_key: str = "") -> TargetState:
        """The thumbs state of one target of this run."""
        key = (target_type, target_id, subject_key or "")
        return TargetState(target_type, target_id, subject_key or "", self.run.id,
                           self.my_feedback.get(key), self.summary.get(key), self.reasons)


def workspace_reasons(workspace: Workspace) -> list[str]:
    """The workspace's feedback reason codes, or the default list (SPEC 6.1)."""
    return list((workspace.settings or {}).get("feedback_reasons") or DEFAULT_FEEDBACK_REASONS)


def _load_run(session: Session, actor: Actor, run_pk: int) -> tuple[Run, DiagnosisSession, Workspace]:
    stmt = scope_to_actor(
        select(Run, DiagnosisSession, Workspace)
        .join(DiagnosisSession, DiagnosisSession.id == Run.diagnosis_session_id)
        .join(Workspace, Workspace.id == Run.workspace_id)
        .where(Run.id == run_pk),
        actor, Run.workspace_id, Role.REVIEWER,
    )
    row = session.execute(stmt).one_or_none()
    if row is None:
        raise Forbidden()
    return row[0], row[1], row[2]


def evaluation_view(raw: Any) -> dict[str, Any] | None:
    """``self_evaluation`` keyed by source, a legacy flat root wrapped (SPEC 5); ``None``
    when absent or empty (the page says "not scored yet")."""
    if not isinstance(raw, Mapping) or not raw:
        return None
    if "evidence_score" in raw:
        return {"rule_evaluation": dict(raw)}
    if "verdict" in raw or "groundedness_score" in raw:
        return {"verifier_evaluation": dict(raw)}
    return {k: v for k, v in raw.items() if isinstance(v, Mapping)} or None


def _gate_findings(evaluation: dict[str, Any] | None) -> dict[tuple[str, str], dict[str, Any]]:
    gate = (evaluation or {}).get("citation_gatekeeper") or {}
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for item in gate.get("citations") or []:
        if isinstance(item, Mapping) and item.get("citation_id") is not None:
            found[(str(item.get("message_id")), str(item["citation_id"]))] = dict(item)
    return found


def _citations(messages: Sequence[Message], evaluation: dict[str, Any] | None) -> list[CitationView]:
    findings = _gate_findings(evaluation)
    views = []
    for message in messages:
        if message.role != MessageRole.ASSISTANT.value:
            continue
        for raw in message.citations:
            if not isinstance(raw, Mapping) or raw.get("id") in (None, ""):
                continue
            cid = str(raw["id"])
            gate = findings.get((str(message.id), cid)) or findings.get((str(message.message_id), cid))
            views.append(CitationView(
                message_id=message.id, citation_id=cid, title=str(raw.get("title") or cid),
                source=str(raw.get("source") or raw.get("url") or ""),
                excerpt=str(raw.get("excerpt") or ""),
                evidence_ref=raw.get("evidence_ref") if isinstance(raw.get("evidence_ref"), str) else None,
                gate=gate,
            ))
    return views


def _timeline(session: Session, run: Run, steps: Sequence[DiagnosticStep]) -> Timeline:
    # Plain column rows, not ORM objects: a 500-call run hydrates ten times faster.
    calls = [TimelineCall(*row) for row in session.execute(
        select(*(getattr(ToolCall, c) for c in _TIMELINE_COLUMNS))
        .where(ToolCall.run_pk == run.id, ToolCall.workspace_id == run.workspace_id)
        .order_by(ToolCall.started_at.is_(None), ToolCall.started_at, ToolCall.ordinal, ToolCall.id)
    )]
    step_labels = {s.id: f"{s.ordinal}. {s.name}" for s in steps}
    placed = timeline_layout([CallTiming(c.started_at, c.completed_at) for c in calls],
                             until=run.finished_at)
    rows = [TimelineRow(c, bar, step_labels.get(c.step_pk) if c.step_pk else None)
            for c, bar in zip(calls, placed.bars)]
    latest = max((c.updated_at for c in calls), default=None)
    version = f"{run.status}-{len(calls)}-{latest.timestamp() if latest else 0}"
    return Timeline(run.id, run.status, run.status == RunStatus.RUNNING.value, rows, placed,
                    version)


def get_run_detail(session: Session, actor: Actor, run_pk: int,
                   filters: RunFilters | None = None) -> RunDetail:
    """The run page's read model for run ``run_pk`` (SPEC 8).

    Access: the actor must be a member of the run's workspace; a missing run and a
    foreign one both raise ``Forbidden`` (SPEC 2). ``filters`` (the list the reviewer
    came from) decide the previous / next links. A fixed number of queries, whatever the
    number of messages, citations, steps or tool calls. Raises ``ValidationFailed`` for
    bad filters.
    """
    from . import feedback as feedback_service

    filters = (filters or RunFilters()).validated()
    run, diagnosis_session, workspace = _load_run(session, actor, run_pk)
    messages = list(session.scalars(
        select(Message).where(Message.run_pk == run.id).order_by(Message.ordinal)))
    steps = list(session.scalars(
        select(DiagnosticStep).where(DiagnosticStep.run_pk == run.id)
        .order_by(DiagnosticStep.ordinal)))
    report = session.scalars(
        select(DiagnosticReport).where(DiagnosticReport.run_pk == run.id)).one_or_none()
    case_id = session.scalar(select(Case.case_id).where(
        Case.workspace_id == run.workspace_id, Case.diagnosis_id == run.run_id))
    evaluation = evaluation_view(run.self_evaluation)
    answer_index = answer_message_index([(m.role, m.content) for m in messages])
    answer_message = messages[answer_index] if answer_index is not None else None
    if actor.user_id is None:  # ratings belong to people (as list_my_feedback says)
        raise Forbidden()
    # The run was access-checked by _load_run above: no second and third check.
    mine = {(f.target_type, f.target_id, f.subject_key or ""): f
            for f in feedback_service.my_feedback_of_visible_run(session, actor.user_id, run.id)}
    summary = feedback_service.summary_of_visible_run(session, run.id)
    reasons = workspace_reasons(workspace)
    prev_pk, next_pk = _neighbours(session, actor, run, filters, None)
    return RunDetail(
        run=run, workspace=workspace, diagnosis_session=diagnosis_session, messages=messages,
        answer_message=answer_message, citations=_citations(messages, evaluation), steps=steps,
        report=report, timeline=_timeline(session, run, steps), evaluation=evaluation,
        my_feedback=mine, summary=summary, reasons=list(reasons), filters=filters,
        prev_pk=prev_pk, next_pk=next_pk, case_id=case_id,
    )


def get_timeline(session: Session, actor: Actor, run_pk: int) -> Timeline:
    """The tool-call timeline of run ``run_pk`` alone (the live fragment polls it).

    Raises ``Forbidden`` for a missing or foreign run.
    """
    run, _, _ = _load_run(session, actor, run_pk)
    steps = list(session.scalars(
        select(DiagnosticStep).where(DiagnosticStep.run_pk == run.id)
        .order_by(DiagnosticStep.ordinal)))
    return _timeline(session, run, steps)


def get_run(session: Session, actor: Actor, run_pk: int) -> Run:
    """The run ``run_pk`` if the actor may see it (e.g. to re-render its verdict badge).

    Raises ``Forbidden`` for a missing or foreign run.
    """
    run = get_run_for(session, actor, run_pk)
    if run is None:
        raise Forbidden()
    return run


def get_tool_call(session: Session, actor: Actor, run_pk: int, call_id: str) -> ToolCall:
    """One tool call of run ``run_pk`` with its arguments, result and error (the
    timeline loads these only when a call is opened). Raises ``Forbidden`` for a missing
    or foreign run or call."""
    stmt = scope_to_actor(
        select(ToolCall).join(Run, Run.id == ToolCall.run_pk)
        .where(ToolCall.run_pk == run_pk, ToolCall.id == call_id,
               ToolCall.workspace_id == Run.workspace_id),
        actor, Run.workspace_id, Role.REVIEWER,
    )
    call = session.scalars(stmt).one_or_none()
    if call is None:
        raise Forbidden()
    return call
