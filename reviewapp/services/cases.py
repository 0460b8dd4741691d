"""The case library: list and search, case page, edit with a version check, manual cases
from a run (SPEC 3, 7, 8, 10); the edit page and the proposals are ``case_proposals``.

Reading cases is open to every member of the case's workspace; editing and creating
cases needs ``Role.LEAD`` (leads and admins). Missing and foreign cases raise the same
``Forbidden``.

**One case per run.** ``case_library`` is unique on (workspace, ``diagnosis_id``) and
``diagnosis_id`` is the run's ``run_id``, for AUTO and MANUAL cases alike. A lead who
creates a MANUAL case for a run that already has one (AUTO from a ``useful`` verdict, or
an earlier MANUAL one) gets ``Conflict`` with that case in ``details`` and is sent to
edit it: the curated facts of a run live in one place, and ``get_or_create_auto_case``
(SPEC 7, called by the feedback services) finds the MANUAL case by the same key and
returns it instead of adding an AUTO duplicate. The insert uses ``ON CONFLICT DO
NOTHING``, so two leads creating the same case at once end with one case and one 409.

AUTO cases are made by the verdict (``services/feedback/verdict.py``: ``promote_useful``,
``get_or_create_auto_case``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from operator import attrgetter, itemgetter
from typing import Any

from sqlalchemy import literal, select, update
from sqlalchemy.orm import Session, selectinload

from ..actors import Actor, Role
from ..domain import suggest as suggest_rules
from ..domain.fault_categories import DEFAULT_CATEGORY, FaultCategory, category_named
from ..domain.vocabulary import Registry
from ..errors import Conflict, Forbidden, ValidationFailed
from ..models import Case, Run, SourceType, User, Workspace
from ..models.base import utcnow
from ..models.cases import new_case_id
from ..queries import capped_count, get_case_for, get_run_for, insert_for, scope_to_actor
from . import keyset
from .admin.settings import categories_of, time_zone_in
from .answer import answer_text_of
from .blind import blind_workspaces, is_blind, not_blind_case
from .case_filters import (
    CODE_MAX,
    QUERY_MAX,
    CaseFilters,
    case_conditions,
    with_category_code,
    with_workspace_id,
)
from .case_filters import read_filters as _read_filters
from .case_proposals import run_text
from .keyset import SortKey, SortOrder
from .params import id_value
from .runs.listing import COUNT_CAP, FILTERED_COUNT_CAP
from .secret_scan import redact_typed

TITLE_MAX = 200
TEXT_MAX = 20_000
__all__ = ["CODE_MAX", "QUERY_MAX", "CaseFilters", "case_conditions"]  # the filters' module's, kept here


@dataclass(frozen=True)
class CaseRow:
    """A case with its run's external id (``None`` for a legacy session's case), the
    workspace name and its category's label (the workspace's list, or the code)."""

    case: Case
    run_id: str | None
    workspace: str
    category_label: str = ""


@dataclass(frozen=True)
class CasePage:
    """A page of cases (newest first), the next cursor, the filtered total (capped), the
    workspaces (id, name) the actor can read, and whether the actor may edit in any."""

    rows: list[CaseRow]
    next_cursor: str | None
    total: int
    workspaces: list[tuple[int, str]]
    filters: CaseFilters
    can_edit: bool
    # ``total`` stopped at the cap ("10,000+"): counting costs at most the cap.
    total_capped: bool = False


def _workspaces(session: Session, actor: Actor, role: Role) -> list[tuple[int, str]]:
    stmt = scope_to_actor(select(Workspace.id, Workspace.name), actor, Workspace.id, role)
    return [(ws_id, name) for ws_id, name in session.execute(stmt.order_by(Workspace.name))]


def filter_workspaces(session: Session, actor: Actor) -> list[tuple[int, str]]:
    """The workspaces (id, name) whose cases the actor reads, by name: the case list's
    workspace filter. Raises ``Forbidden`` when there is none."""
    workspaces = _workspaces(session, actor, Role.REVIEWER)
    if not workspaces:
        raise Forbidden()
    return workspaces


def read_filters(session: Session, actor: Actor, params: Mapping[str, Any]) -> CaseFilters:
    """The case list's filters of ``params`` checked for ``actor`` (``case_filters.read_filters``
    over ``filter_workspaces``). Raises one ``ValidationFailed`` naming every refused
    field, ``Forbidden`` as ``filter_workspaces``."""
    return _read_filters(session, [ws_id for ws_id, _ in filter_workspaces(session, actor)], params)


# The case list's one order: newest case first, the case id breaking ties.
CASE_ORDER = SortOrder("newest", "Newest first", (
    SortKey(Case.created_at, True, attrgetter("created_at"), datetime),
    SortKey(Case.case_id, True, attrgetter("case_id"), str),
))


def list_cases(
    session: Session, actor: Actor, filters: CaseFilters | None = None, *,
    limit: int = 50, cursor: str | None = None, count_cap: int = COUNT_CAP,
) -> CasePage:
    """Search the cases of the actor's workspaces, newest first, keyset-paginated on
    (created_at, case_id); ``total`` counts up to ``count_cap``, a filtered search up to
    ``FILTERED_COUNT_CAP`` (then ``total_capped``: "10,000+", "1,000+"). Raises
    ``Forbidden`` when the actor belongs to no workspace, ``ValidationFailed`` for a
    malformed cursor or a workspace not the actor's (``case_filters.with_workspace_id``:
    an id or a short name; not "0 matching")."""
    workspaces = filter_workspaces(session, actor)
    filters, reason = with_workspace_id(session, [ws_id for ws_id, _ in workspaces],
                                        filters or CaseFilters())
    if reason:
        raise ValidationFailed("workspace", reason)
    limit = max(1, min(int(limit), 500))
    filters = with_category_code(session, [ws_id for ws_id, _ in workspaces], filters)
    conds = case_conditions(filters)
    rows = (select(Case, Run.run_id, Workspace.name)
            .join(Workspace, Workspace.id == Case.workspace_id)
            .outerjoin(Run, Run.id == Case.run_pk))
    # One range of the (workspace_id, created_at, case_id) index per workspace, merged
    # (keyset.ordered), unless a workspace is picked: a member of two workspaces no
    # longer has every case checked and sorted (issue 18).
    ids = ([filters.workspace_id] if filters.workspace_id is not None
           else [ws_id for ws_id, _ in workspaces])
    # Blind review: the case of a run that is blind for the actor is not shown; checked
    # row by row only in a workspace where a run can be blind for them.
    led, blind = blind_workspaces(session, actor, [ws_id for ws_id, _ in workspaces])

    def per_workspace(stmt: Any) -> list[Any]:
        return [scope_to_actor(stmt.where(Case.workspace_id == ws_id), actor, literal(ws_id),
                               Role.REVIEWER).where(*conds, *(
                                   [not_blind_case(actor)] if ws_id in blind else []))
                for ws_id in ids]

    searched = replace(filters, workspace_id=None, workspace_slug=None) != CaseFilters()
    cap = min(count_cap, FILTERED_COUNT_CAP) if searched else count_cap
    total, total_capped = capped_count(session, per_workspace(select(Case.case_id)), cap)
    records, next_cursor = keyset.page(session, per_workspace(rows), CASE_ORDER, cursor,
                                       limit, last=itemgetter(0), rows=rows)
    can_edit = bool(led) if actor.is_user else bool(_workspaces(session, actor, Role.LEAD))
    labels = {ws_id: categories_of(session, ws_id) for ws_id in {c.workspace_id for c, _, _ in records}}
    return CasePage([CaseRow(c, run_id, ws, labels[c.workspace_id].label_or_code(c.fault_category))
                     for c, run_id, ws in records], next_cursor, total, workspaces, filters, can_edit, total_capped)


@dataclass(frozen=True)
class CaseDetail:
    """A case page: the case, its run (``None`` for a legacy session or a deleted run), the
    workspace name, if the actor may edit it, its category label, its times' IANA zone."""

    case: Case
    run: Run | None
    workspace: str
    can_edit: bool
    category_label: str = ""
    time_zone: str = "UTC"


def get_case(session: Session, actor: Actor, case_id: str) -> CaseDetail:
    """One case for any member of its workspace. Raises ``Forbidden``."""
    case = get_case_for(session, actor, str(case_id))
    if case is None or (case.run_pk is not None and is_blind(session, actor, case.run_pk)):
        raise Forbidden()  # blind review: a run's case shows once the actor rated it
    can_edit = get_case_for(session, actor, case.case_id, Role.LEAD) is not None
    ws_name = session.scalar(select(Workspace.name).where(Workspace.id == case.workspace_id))
    return CaseDetail(case, case.run, ws_name or "", can_edit,
                      categories_of(session, case.workspace_id).label_or_code(case.fault_category),
                      time_zone_in(session, case.workspace_id))


def _clean_fields(values: Mapping[str, Any], categories: Registry[FaultCategory],
                  current_category: str | None = None) -> dict[str, Any]:
    """Validate the editable fields; blank optional text becomes ``None``, blanks after
    free text are dropped, codes are trimmed. The category
    must be one of ``categories`` (the workspace's vocabulary, SPEC 7) or the case's
    ``current_category`` unchanged (a code since dropped from the list stays until edited);
    a refusal lists the categories by label, as the form's select shows them."""
    def text(name: str, limit: int, required: bool = False, verbatim: bool = False) -> str | None:
        # Free text is stored as typed (leading spaces too: only the CSV export
        # neutralises a formula, issue 11) but for the blanks after it, which nobody
        # sees (a save that only added some changes nothing); codes are trimmed.
        raw = values.get(name)
        if raw is not None and not isinstance(raw, str):
            raise ValidationFailed(name, "must be text")
        value = (raw or "").rstrip()
        if not verbatim:
            value = value.lstrip()
        if required and not value:
            raise ValidationFailed(name, "required")
        if len(value) > limit:
            raise ValidationFailed(name, f"at most {limit} characters")
        # Typed text is redacted before storage like an agent's (SPEC 4).
        return redact_typed(value, limit) or None

    category = text("fault_category", 64) or DEFAULT_CATEGORY
    if category != current_category:
        category = category_named(categories, category) or category
    if category not in categories and category != current_category:
        raise ValidationFailed("fault_category",
                               f"'{category}' is not a category of this workspace; "
                               f"use one of {', '.join(label for _, label in categories.choices())}",
                               details={"allowed": list(categories.codes())})
    cleaned = {
        "fault_category": category,
        "title": text("title", TITLE_MAX, required=True, verbatim=True),
        "root_cause": text("root_cause", TEXT_MAX, verbatim=True),
        "solution": text("solution", TEXT_MAX, verbatim=True),
        "error_code": text("error_code", CODE_MAX),
        "service": text("service", CODE_MAX),
    }
    return cleaned


@dataclass(frozen=True)
class CaseSave:
    """What ``edit_case`` did: the case as stored now, and whether the save changed it
    (``False``: the fields were its stored values; nothing was written)."""

    case: Case
    changed: bool


def _same_text(a: str | None, b: str | None) -> bool:
    # A browser sends a textarea's line ends as CRLF: the same text to the person.
    return (a or "").replace("\r\n", "\n") == (b or "").replace("\r\n", "\n")


def edit_case(session: Session, actor: Actor, case_id: str, version: int | str,
              fields: Mapping[str, Any]) -> CaseSave:
    """Save a lead's edit of a case: ``fields`` = {fault_category, title, root_cause,
    solution, error_code, service} (title required; a blank category is ``GENERAL``).
    The UPDATE matches on ``version``: a stale page gets ``Conflict`` whose ``details``
    hold the case's current values. A save whose cleaned fields are the stored ones
    (line ends aside) writes nothing: no new version, no ``updated_at``, and the case
    stays unedited for ``verdict_case.case_edited`` (SPEC 7, 10); ``CaseSave.changed``
    tells. Raises ``Forbidden`` (not lead / admin there, no such case),
    ``ValidationFailed``, ``Conflict``."""
    try:
        expected = int(version)
    except (TypeError, ValueError):
        raise ValidationFailed("version", "required whole number") from None
    case = get_case_for(session, actor, str(case_id), Role.LEAD)
    if case is None:
        raise Forbidden()
    if case.version != expected:
        raise _stale(session, actor, case)
    cleaned = _clean_fields(fields, categories_of(session, case.workspace_id),
                            case.fault_category)
    if all(_same_text(value, getattr(case, name)) for name, value in cleaned.items()):
        session.commit()  # end the read
        return CaseSave(case, changed=False)
    result = session.execute(
        update(Case)
        .where(Case.case_id == case.case_id, Case.version == expected)
        .values(**cleaned, version=expected + 1, updated_at=utcnow(), edited_by_id=actor.user_id)
        .execution_options(synchronize_session=False)
    )
    if result.rowcount != 1:
        raise _stale(session, actor, case)
    session.commit()
    session.refresh(case)
    return CaseSave(case, changed=True)


def case_state(case: Case) -> dict[str, Any]:
    """A case's current values, JSON-able (a ``Conflict``'s ``details``)."""
    return {
        "case_id": case.case_id, "version": case.version, "source_type": case.source_type,
        "diagnosis_id": case.diagnosis_id, "fault_category": case.fault_category,
        "title": case.title, "root_cause": case.root_cause, "solution": case.solution,
        "error_code": case.error_code, "service": case.service,
        "updated_at": case.updated_at.isoformat() if case.updated_at else None,
    }


def _stale(session: Session, actor: Actor, case: Case) -> Conflict:
    session.refresh(case)
    editor = session.get(User, case.edited_by_id) if case.edited_by_id is not None else None
    who = ("by you, in another tab or window," if case.edited_by_id == actor.user_id
           else f"by {editor.username}" if editor is not None else "by someone else")
    return Conflict(
        f"This case was changed {who} since your page was loaded; nothing was "
        "saved. Here are its current values.",
        details=case_state(case),
    )


# --------------------------------------------------------------------------- manual cases


@dataclass(frozen=True)
class CaseDraft:
    """The "new case" form for a run: the run, the proposals, the prefilled values, and
    the run's existing case (then the form is replaced by a link to edit it)."""

    run: Run
    suggestions: suggest_rules.Suggestions
    values: dict[str, Any]
    existing: Case | None
    categories: tuple[FaultCategory, ...]  # the workspace's, for the form's select


def _existing_case(session: Session, run: Run) -> Case | None:
    return session.scalars(
        select(Case).where(Case.workspace_id == run.workspace_id, Case.diagnosis_id == run.run_id)
    ).one_or_none()


def new_case_draft(session: Session, actor: Actor, run_pk: int | str) -> CaseDraft:
    """Prefill a MANUAL case from a run the actor leads: title = first 100 characters of
    the query, root cause = the answer, solution = the remediation the answer or report
    states (``suggest.remediation``; empty when it states none: the answer is a root
    cause, not a solution), and the proposed category / error code / service (SPEC 7).
    Raises ``Forbidden``."""
    run = _lead_run(session, actor, run_pk)
    text = run_text(session, run)
    suggestions = suggest_rules.suggest(text)
    values = {
        "title": (run.query or run.run_id)[:100],
        "root_cause": answer_text_of(session, run),
        "solution": suggest_rules.remediation(text.answer),
        **{k: v or "" for k, v in suggestions.as_dict().items()},
    }
    return CaseDraft(run, suggestions, values, _existing_case(session, run),
                     tuple(categories_of(session, run.workspace_id)))


def _lead_run(session: Session, actor: Actor, run_pk: int | str | None) -> Run:
    """The run a lead makes a case from. No run named, or not a number: ``ValidationFailed``
    on ``run`` (nothing about any run is revealed); not visible as lead: ``Forbidden``."""
    if run_pk is None or str(run_pk).strip() == "":
        raise ValidationFailed("run", "open a run and choose 'Create a case' (no run given)")
    pk = id_value(run_pk, "run", "must be a run's number")
    run = get_run_for(session, actor, pk, Role.LEAD)
    if run is None:
        raise Forbidden()
    return run


def create_manual_case(session: Session, actor: Actor, run_pk: int | str,
                       fields: Mapping[str, Any]) -> Case:
    """Create a MANUAL case for a run (``diagnosis_id`` = its ``run_id``), with the lead's
    ``fields`` (as ``edit_case``) and ``created_by`` = the actor's label. Raises
    ``Forbidden`` (not lead / admin of the run's workspace, no such run),
    ``ValidationFailed``, ``Conflict`` when the run already has a different case
    (``details`` = that case: edit it instead; see the module doc). Submitting exactly the
    run's existing case again (a double submit) returns it: creation is idempotent."""
    run = _lead_run(session, actor, run_pk)
    cleaned = _clean_fields(fields, categories_of(session, run.workspace_id))
    case_id = new_case_id()
    now = utcnow()
    stmt = insert_for(session, Case.__table__).values(
        case_id=case_id, workspace_id=run.workspace_id, diagnosis_id=run.run_id, run_pk=run.id,
        source_type=SourceType.MANUAL.value, created_by=(actor.label or "system")[:80],
        version=1, created_at=now, updated_at=now, **cleaned,
    ).on_conflict_do_nothing(index_elements=["workspace_id", "diagnosis_id"]).returning(
        Case.__table__.c.case_id
    )
    # RETURNING says whether the row went in (rowcount is -1 here on psycopg).
    if session.execute(stmt).scalar_one_or_none() is None:
        existing = _existing_case(session, run)
        if existing is not None and all(getattr(existing, k) == v for k, v in cleaned.items()):
            # The same case submitted again (a double click): idempotent, not a conflict.
            session.rollback()
            case_id = existing.case_id
            return session.scalars(
                select(Case).where(Case.case_id == case_id).options(selectinload(Case.run))
            ).one()
        raise Conflict(
            "This run already has a case; edit that one instead.",
            details=case_state(existing) if existing else None,
        )
    session.commit()
    return session.scalars(
        select(Case).where(Case.case_id == case_id).options(selectinload(Case.run))
    ).one()
