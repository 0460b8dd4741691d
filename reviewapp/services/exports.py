"""Exports for admins: cases, feedback and the eval set, as streams of dict rows (SPEC 8).

Each ``export_*`` function checks access and validates *before* it returns, so an error
is an ordinary 403 / 400 and never a broken half-sent download; it then returns an
``ExportStream`` whose ``rows`` generator reads the database in keyset batches
(``batch_size`` rows, ordered by (workspace, created_at, key), each batch fetched with
``yield_per``) and selects plain columns, not ORM objects: memory stays flat whatever
the row count, and the first bytes go out at once. ``domain.export_format`` turns the
rows into CSV or JSONL.

Admin only: an actor sees the rows of the workspaces where they are admin (system actors:
all). An actor who is admin nowhere, or who names a workspace they do not administer,
gets ``Forbidden``. Timestamps are ISO 8601 in UTC. Read-only: nothing is committed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any

from sqlalchemy import Select, String, func, literal, select, tuple_, type_coerce
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..domain import export_format
from ..errors import Forbidden, ValidationFailed
from ..models import (
    Case,
    DiagnosticReport,
    Feedback,
    ReviewQueue,
    Run,
    TriageItem,
    User,
    VerdictDecision,
    Workspace,
)
from ..queries import iso_utc, on_earlier_version, scope_to_actor
from .access import workspace_id_of
from .answer import answer_texts
from .case_filters import CaseFilters, case_conditions, with_category_code
from .export_filters import FeedbackFilters, check_reason, with_workspace_id
from .params import Refusals, day_range, read_date_range, workspace_param
from .triage._rows import filter_reasons, reason_options

BATCH_SIZE = 2000

CASE_COLUMNS: tuple[str, ...] = (
    "case_id", "workspace", "diagnosis_id", "run_id", "source_type", "fault_category", "title",
    "root_cause", "solution", "error_code", "service", "created_by", "created_at",
    "updated_at", "version",
)
FEEDBACK_COLUMNS: tuple[str, ...] = (
    "feedback_id", "workspace", "run_id", "run_kind", "query", "reviewer", "target_type",
    "target_id", "subject", "rating", "reason", "comment", "correction", "created_at",
    "updated_at", "earlier_version", "evidence_score", "verdict", "verifier_verdict",
)
DECISION_COLUMNS: tuple[str, ...] = (
    "decision_id", "workspace", "run_id", "run_kind", "queue", "decided_by", "verdict", "note",
    "created_at",
)
EVALSET_COLUMNS: tuple[str, ...] = (
    "run_id", "workspace", "kind", "query", "answer", "report", "corrections", "labels",
)


@dataclass
class ExportStream:
    """An export ready to stream: its ``kind``, the ``columns`` of every row (CSV header
    order), the ``total`` row count when it started, and the lazy ``rows``."""

    kind: str
    columns: tuple[str, ...]
    total: int
    rows: Iterator[dict[str, Any]]


def _sort_value(raw: Any) -> Any:
    """The raw sort timestamp of a row as a bind value: PostgreSQL hands back a datetime;
    SQLite the stored UTC text, read back as a (naive, hence UTC) datetime."""
    return raw if isinstance(raw, datetime) else datetime.fromisoformat(raw)


def _admin_workspaces(session: Session, actor: Actor) -> list[int]:
    """Ids of the workspaces the actor administers (every workspace for the system actor)."""
    return list(session.execute(
        scope_to_actor(select(Workspace.id), actor, Workspace.id, Role.ADMIN)).scalars())


def _admin_scope(session: Session, actor: Actor, stmt: Select[Any], workspace_col: Any,
                 workspace_id: int | None) -> Select[Any]:
    """Restrict ``stmt`` to workspaces the actor administers (and to ``workspace_id``).
    Raises ``Forbidden`` when that leaves nothing the actor may export."""
    allowed = _admin_workspaces(session, actor)
    if (not allowed and not actor.system) or (workspace_id is not None and workspace_id not in allowed):
        raise Forbidden()
    stmt = scope_to_actor(stmt, actor, workspace_col, Role.ADMIN)
    if workspace_id is not None:
        stmt = stmt.where(workspace_col == workspace_id)
    return stmt


def _keyset(session: Session, stmt: Select[Any], order: tuple[Any, Any, Any],
            batch_size: int) -> Iterator[Any]:
    """Rows of ``stmt`` ordered by ``order`` = (workspace column, timestamp column, unique
    key column), ``batch_size`` rows at a time.

    ``stmt``'s last three columns must be those three values (the timestamp through
    ``sort_key``). Each batch starts with the row-value comparison ``(workspace, created,
    key) > (last row's)``, which walks the (workspace_id, created_at, id) index of the
    table from where the previous batch stopped: every batch costs the same, equal
    timestamps never skip or repeat a row. Rows come through the Core connection with
    ``yield_per``: tuples, no ORM row processing, no identity map."""
    last: tuple[Any, Any, Any] | None = None
    connection = session.connection()
    ordered = stmt.order_by(*order).limit(batch_size)
    while True:
        page = ordered if last is None else ordered.where(tuple_(*order) > tuple_(*last))
        count = 0
        row = None
        for row in connection.execute(page.execution_options(yield_per=batch_size)):
            count += 1
            yield row
        if count < batch_size or row is None:
            return
        workspace, created, key = row[-3:]
        last = (literal(workspace, order[0].type), literal(_sort_value(created), order[1].type),
                literal(key, order[2].type))


def sort_key(created_col: Any) -> Any:
    """The raw value of a timestamp column for ``_keyset`` (no per-row conversion)."""
    return type_coerce(created_col, String).label("sort_at")


def _count(session: Session, stmt: Select[Any]) -> int:
    return int(session.scalar(select(func.count()).select_from(stmt.subquery())) or 0)


# --------------------------------------------------------------------------- cases


def export_cases(session: Session, actor: Actor, filters: CaseFilters | None = None, *,
                 batch_size: int = BATCH_SIZE) -> ExportStream:
    """The cases matching ``filters`` (as the case list filters them), by workspace, oldest first,
    one row per case with ``CASE_COLUMNS``. Raises ``Forbidden``."""
    filters = filters or CaseFilters()
    if filters.workspace_slug:  # a short name: its id, or 0 (none such: Forbidden as a stranger's)
        filters = replace(filters, workspace_id=workspace_id_of(session, filters.workspace_slug))
    filters = with_category_code(session, _admin_workspaces(session, actor), filters)
    stmt = _admin_scope(session, actor, select(
        Case.case_id, Workspace.slug, Case.diagnosis_id, Run.run_id, Case.source_type,
        Case.fault_category, Case.title, Case.root_cause, Case.solution, Case.error_code,
        Case.service, Case.created_by, iso_utc(session, Case.created_at),
        iso_utc(session, Case.updated_at), Case.version,
        Case.workspace_id, sort_key(Case.created_at), Case.case_id.label("sort_id"),
    ).join(Workspace, Workspace.id == Case.workspace_id).outerjoin(Run, Run.id == Case.run_pk),
        Case.workspace_id, filters.workspace_id).where(*case_conditions(filters))
    total = _count(session, stmt)

    def rows() -> Iterator[dict[str, Any]]:
        columns, width = CASE_COLUMNS, len(CASE_COLUMNS)
        for r in _keyset(session, stmt, (Case.workspace_id, Case.created_at, Case.case_id),
                         batch_size):
            yield dict(zip(columns, r[:width]))

    return ExportStream("cases", CASE_COLUMNS, total, rows())


# --------------------------------------------------------------------------- feedback


def export_feedback(session: Session, actor: Actor, filters: FeedbackFilters | None = None, *,
                    batch_size: int = BATCH_SIZE) -> ExportStream:
    """One row per rating (``user_feedback``) with ``FEEDBACK_COLUMNS``: reviewer, target,
    subject, rating, reason, comment, correction, timestamps, ``earlier_version`` (the
    rating was given before the part's text changed, SPEC 10), the run's id, query, kind,
    evidence score, verdict and verifier verdict; by workspace, oldest first. A ``reason``
    none of the exported workspaces rates with is refused (``check_reason``). Raises
    ``Forbidden``, ``ValidationFailed``."""
    filters = filters or FeedbackFilters()
    stmt = _admin_scope(session, actor, select(
        Feedback.id, Workspace.slug, Run.run_id, Run.kind, Run.query, User.username,
        Feedback.target_type, Feedback.target_id, Feedback.subject_key, Feedback.rating,
        Feedback.reason, Feedback.comment, Feedback.correction,
        iso_utc(session, Feedback.created_at), iso_utc(session, Feedback.updated_at),
        on_earlier_version(Feedback).label("earlier_version"), Run.evidence_score, Run.feedback,
        Run.verifier_verdict, Feedback.workspace_id, sort_key(Feedback.created_at),
        Feedback.id.label("sort_id"),
    ).join(Workspace, Workspace.id == Feedback.workspace_id)
     .join(Run, Run.id == Feedback.run_pk)
     .join(User, User.id == Feedback.author_id),
        Feedback.workspace_id, filters.workspace_id)
    start, end = day_range(filters.date_from, filters.date_to)
    if start is not None:
        stmt = stmt.where(Feedback.created_at >= start)
    if end is not None:
        stmt = stmt.where(Feedback.created_at < end)
    if filters.rating:
        stmt = stmt.where(Feedback.rating == filters.rating)
    if filters.target_type:
        stmt = stmt.where(Feedback.target_type == filters.target_type)
    if filters.reason:
        stmt = stmt.where(Feedback.reason == filters.reason)
    if filters.kind:
        stmt = stmt.where(Run.kind == filters.kind)
    if filters.reason:  # after the access check: a stranger learns no workspace's reasons
        ids = [filters.workspace_id] if filters.workspace_id is not None else \
            [ws_id for ws_id, _ in export_options(session, actor).workspaces]
        check_reason(filters.reason, *filter_reasons(session, ids))
    total = _count(session, stmt)

    def rows() -> Iterator[dict[str, Any]]:
        columns, width = FEEDBACK_COLUMNS, len(FEEDBACK_COLUMNS)
        for r in _keyset(session, stmt,
                         (Feedback.workspace_id, Feedback.created_at, Feedback.id), batch_size):
            row = dict(zip(columns, r[:width]))
            row["earlier_version"] = bool(row["earlier_version"])  # SQLite answers 0 / 1
            yield row

    return ExportStream("feedback", FEEDBACK_COLUMNS, total, rows())


# --------------------------------------------------------------------------- decisions


def _decision_filters(params: Mapping[str, Any]) -> tuple[int | None, date | None, date | None]:
    """The decisions export's (workspace id, first day, last day); one ``ValidationFailed``
    naming every refused one."""
    refused = Refusals()
    workspace_id = refused.read(workspace_param, params)
    date_from, date_to = read_date_range(params, refused)
    refused.check()
    return workspace_id, date_from, date_to


def export_decisions(session: Session, actor: Actor, params: Mapping[str, Any] | None = None, *,
                     batch_size: int = BATCH_SIZE) -> ExportStream:
    """One row per lead decision on a run's verdict (``verdict_decision``, issue 16
    adjudication; a record apart from the ratings) with ``DECISION_COLUMNS``; by
    workspace, oldest first. ``params``: ``workspace`` and the UTC days ``date_from`` /
    ``date_to`` of the decision. Raises ``Forbidden``, ``ValidationFailed``."""
    workspace_id, date_from, date_to = _decision_filters(params or {})
    stmt = _admin_scope(session, actor, select(
        VerdictDecision.id, Workspace.slug, Run.run_id, Run.kind, ReviewQueue.name,
        User.username, VerdictDecision.verdict, VerdictDecision.note,
        iso_utc(session, VerdictDecision.created_at),
        VerdictDecision.workspace_id, sort_key(VerdictDecision.created_at),
        VerdictDecision.id.label("sort_id"),
    ).join(Workspace, Workspace.id == VerdictDecision.workspace_id)
     .join(Run, Run.id == VerdictDecision.run_pk)
     .outerjoin(ReviewQueue, ReviewQueue.id == VerdictDecision.queue_id)
     .outerjoin(User, User.id == VerdictDecision.decided_by),
        VerdictDecision.workspace_id, workspace_id)
    start, end = day_range(date_from, date_to)
    if start is not None:
        stmt = stmt.where(VerdictDecision.created_at >= start)
    if end is not None:
        stmt = stmt.where(VerdictDecision.created_at < end)
    total = _count(session, stmt)

    def rows() -> Iterator[dict[str, Any]]:
        columns, width = DECISION_COLUMNS, len(DECISION_COLUMNS)
        for r in _keyset(session, stmt, (VerdictDecision.workspace_id,
                                         VerdictDecision.created_at, VerdictDecision.id),
                         batch_size):
            yield dict(zip(columns, r[:width]))

    return ExportStream("decisions", DECISION_COLUMNS, total, rows())


# --------------------------------------------------------------------------- eval set


def export_evalset(session: Session, actor: Actor, workspace_id: int | None = None, *,
                   batch_size: int = 500) -> ExportStream:
    """The input of a regression eval: one row per run that has at least one reviewer
    correction, with its query, the agent's answer (the run page's, ``answer.answer_texts``)
    and report, every correction
    ({reviewer, target_type, subject, rating, reason, correction}) and the labels
    ({verdict, evidence_score, verifier_verdict, external_outcome, reasons,
    triage_state, triage_fault_category, case_fault_category, error_code, service}).
    By workspace, oldest run first. Raises ``Forbidden``."""
    has_correction = select(Feedback.id).where(
        Feedback.run_pk == Run.id, Feedback.correction.is_not(None)
    ).exists()
    stmt = _admin_scope(session, actor, select(
        Run.id.label("run_pk"), Run.run_id, Workspace.slug.label("workspace"), Run.kind,
        Run.query, Run.answer, Run.feedback, Run.evidence_score, Run.verifier_verdict,
        Run.external_outcome, Run.workspace_id, Run.workspace_id.label("sort_ws"),
        sort_key(Run.created_at), Run.id.label("sort_id"),
    ).join(Workspace, Workspace.id == Run.workspace_id).where(has_correction),
        Run.workspace_id, workspace_id)
    total = _count(session, stmt)

    def rows() -> Iterator[dict[str, Any]]:
        batch: list[Any] = []
        for r in _keyset(session, stmt, (Run.workspace_id, Run.created_at, Run.id),
                                 batch_size):
            batch.append(r)
            if len(batch) >= batch_size:
                yield from _evalset_rows(session, batch)
                batch = []
        if batch:
            yield from _evalset_rows(session, batch)

    return ExportStream("evalset", EVALSET_COLUMNS, total, rows())


def _evalset_rows(session: Session, runs: list[Any]) -> Iterator[dict[str, Any]]:
    pks = [r.run_pk for r in runs]
    corrections: dict[int, list[dict[str, Any]]] = defaultdict(list)
    reasons: dict[int, set[str]] = defaultdict(set)
    for f in session.execute(
        select(Feedback.run_pk, User.username, Feedback.target_type, Feedback.subject_key,
               Feedback.rating, Feedback.reason, Feedback.correction)
        .join(User, User.id == Feedback.author_id)
        .where(Feedback.run_pk.in_(pks))
        .order_by(Feedback.run_pk, Feedback.created_at, Feedback.id)
    ):
        if f.reason and f.rating == "negative":
            reasons[f.run_pk].add(f.reason)
        if f.correction is not None:
            corrections[f.run_pk].append({
                "reviewer": f.username, "target_type": f.target_type, "subject": f.subject_key,
                "rating": f.rating, "reason": f.reason, "correction": f.correction,
            })
    reports = dict(session.execute(
        select(DiagnosticReport.run_pk, DiagnosticReport.content)
        .where(DiagnosticReport.run_pk.in_(pks))
    ).all())
    triage = {pk: (state, cat) for pk, state, cat in session.execute(
        select(TriageItem.run_pk, TriageItem.state, TriageItem.fault_category)
        .where(TriageItem.run_pk.in_(pks))
    )}
    cases = {(ws, diag): (cat, code, svc) for ws, diag, cat, code, svc in session.execute(
        select(Case.workspace_id, Case.diagnosis_id, Case.fault_category, Case.error_code,
               Case.service)
        .where(Case.run_pk.in_(pks), Case.withdrawn_at.is_(None))
    )}
    answers = answer_texts(session, {r.run_pk: r.answer for r in runs})
    for r in runs:
        state, triage_category = triage.get(r.run_pk, (None, None))
        case_category, error_code, service = cases.get((r.workspace_id, r.run_id),
                                                       (None, None, None))
        yield {
            "run_id": r.run_id, "workspace": r.workspace, "kind": r.kind, "query": r.query,
            "answer": answers[r.run_pk] or None, "report": reports.get(r.run_pk),
            "corrections": corrections.get(r.run_pk, []),
            "labels": {
                "verdict": r.feedback, "evidence_score": r.evidence_score,
                "verifier_verdict": r.verifier_verdict, "external_outcome": r.external_outcome,
                "reasons": sorted(reasons.get(r.run_pk, ())),
                "triage_state": state, "triage_fault_category": triage_category,
                "case_fault_category": case_category, "error_code": error_code,
                "service": service,
            },
        }


# --------------------------------------------------------------------------- page


@dataclass(frozen=True)
class ExportOptions:
    """The export page: the workspaces (id, name) the actor administers and the
    (code, label) of the feedback reasons they rate with (the reason filter's list), then
    the retired ones their ratings still carry ("incorrect (retired)")."""

    workspaces: list[tuple[int, str]]
    reasons: list[tuple[str, str]] = field(default_factory=list)


def export_options(session: Session, actor: Actor) -> ExportOptions:
    """What the export page offers. Raises ``Forbidden`` unless the actor is admin somewhere."""
    rows = session.execute(
        scope_to_actor(select(Workspace.id, Workspace.name), actor, Workspace.id, Role.ADMIN)
        .order_by(Workspace.name)
    ).all()
    if not rows and not actor.system:  # the CLI may export an empty database
        raise Forbidden()
    return ExportOptions([(ws_id, name) for ws_id, name in rows],
                         reason_options(session, [ws_id for ws_id, _ in rows]))


@dataclass(frozen=True)
class _Kind:
    """One export kind: ``open`` starts its stream from the query-string parameters;
    ``filters`` the parameter names it reads; ``parse`` reads them only (raising their
    ``ValidationFailed``); ``formats`` it may be written in."""

    open: Callable[[Session, Actor, Mapping[str, Any]], ExportStream]
    filters: tuple[str, ...]
    parse: Callable[[Mapping[str, Any]], object]
    formats: tuple[str, ...] = export_format.FORMATS


# Each export kind, one row (SPEC 8; the CLI's ``flask export <kind>`` commands, the
# download route's ``<kind>``).
_KINDS: dict[str, _Kind] = {
    "cases": _Kind(lambda session, actor, params: export_cases(
        session, actor, CaseFilters.from_params(params)), CaseFilters.PARAM_NAMES, CaseFilters.from_params),
    "feedback": _Kind(lambda session, actor, params: export_feedback(
        session, actor, FeedbackFilters.from_params(params)), FeedbackFilters.PARAM_NAMES,
        FeedbackFilters.from_params),
    "evalset": _Kind(lambda session, actor, params: export_evalset(
        session, actor, workspace_param(params)), ("workspace",), workspace_param, formats=("jsonl",)),
    "decisions": _Kind(export_decisions, ("workspace", "date_from", "date_to"), _decision_filters),
}
KINDS: tuple[str, ...] = tuple(_KINDS)
# What every download takes besides its filters: ``bom`` (CSV for Excel; the route reads it).
DOWNLOAD_OPTIONS: tuple[str, ...] = ("bom",)


def open_export(session: Session, actor: Actor, kind: str, params: Mapping[str, Any],
                fmt: str | None = None) -> ExportStream:
    """Start the export ``kind`` (``cases`` | ``feedback`` | ``evalset`` | ``decisions``)
    filtered by the
    query-string ``params`` (the case-list filters for cases, ``FeedbackFilters`` for
    feedback, ``workspace`` for the eval set). ``fmt``, when given, is checked too: ``csv``
    or ``jsonl``, and the eval set is JSONL only. A parameter that is neither one of the
    kind's filters nor a ``DOWNLOAD_OPTIONS`` is refused naming it (a misspelt filter
    would otherwise export everything), as is a workspace (an id or a short name) the
    actor does not administer (``with_workspace_id``). Access is checked first, so a
    non-admin gets ``Forbidden`` whatever else is wrong. Raises ``Forbidden``, ``ValidationFailed``."""
    export_options(session, actor)
    if kind not in _KINDS:
        raise ValidationFailed("kind", f"must be one of {', '.join(KINDS)}")
    if fmt is not None and fmt not in _KINDS[kind].formats:
        raise ValidationFailed("format", "cases and feedback: csv or jsonl; the eval set: jsonl")
    refused = Refusals()  # every parameter it does not take, at once
    for name in params:
        if name not in _KINDS[kind].filters and name not in DOWNLOAD_OPTIONS:
            refused.add(str(name)[:40], "not a filter of this export; it takes: "
                        + ", ".join(_KINDS[kind].filters))
    params = with_workspace_id(session, actor, params, _admin_workspaces(session, actor), refused)
    if refused.problems:  # its own filters' refusals too, so every bad one is named at once
        refused.read(_KINDS[kind].parse, {k: v for k, v in params.items() if k in _KINDS[kind].filters})
    refused.check()
    return _KINDS[kind].open(session, actor, params)
