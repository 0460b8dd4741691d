"""The case library's filters (SPEC 8): parsed from query-string / CLI values
(``CaseFilters``), checked against the actor's workspaces (``read_filters``), as SQL
conditions on ``Case`` (``case_conditions``). The case list and the cases export share them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from sqlalchemy import func, or_
from sqlalchemy.orm import Session

from ..domain.case_sources import CASE_SOURCES
from ..errors import ValidationFailed
from ..models import Case
from ..queries import HoldsText
from .access import workspace_choice
from .admin.settings import category_filter
from .params import Refusals, text_param, workspace_ref

CODE_MAX = 120
QUERY_MAX = 200


@dataclass(frozen=True)
class CaseFilters:
    """Search of the case library. ``fault_category`` / ``source_type`` match exactly;
    ``service`` / ``error_code`` match exactly ignoring case; ``q`` is a case-insensitive
    substring of title, root cause, solution, diagnosis id, error code or service."""

    workspace_id: int | None = None
    fault_category: str | None = None
    service: str | None = None
    error_code: str | None = None
    source_type: str | None = None
    q: str | None = None
    workspace_slug: str | None = None  # ``?workspace=demo``; ``read_filters`` sets its id
    PARAM_NAMES: ClassVar[tuple[str, ...]] = (  # what from_params reads, as_params writes
        "workspace", "fault_category", "service", "error_code", "source_type", "q")

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> CaseFilters:
        """Parse query-string values (``services.params``). Raises one ``ValidationFailed``
        naming every refused field (``problems``). Whether the workspace (an id or a short
        name: ``workspace_slug``) is the actor's, and the category one of theirs, is
        ``read_filters``'s check (it needs the database)."""
        refused = Refusals()
        filters = cls.read(params, refused)
        refused.check()
        return filters

    @classmethod
    def read(cls, params: Mapping[str, Any], refused: Refusals) -> CaseFilters:
        """The filters of ``params``, each refused one left unset and kept in ``refused``."""
        workspace = refused.read(workspace_ref, params)
        return cls(
            workspace_id=workspace if isinstance(workspace, int) else None,
            workspace_slug=workspace if isinstance(workspace, str) else None,
            fault_category=refused.read(text_param, params, "fault_category", 64),  # a code or a label
            service=refused.read(text_param, params, "service", CODE_MAX),
            error_code=refused.read(text_param, params, "error_code", CODE_MAX),
            source_type=refused.read(_source_type, params),
            q=refused.read(text_param, params, "q", QUERY_MAX),
        )

    def as_params(self, **overrides: Any) -> dict[str, str]:
        """Query-string values of the set filters (for links and the export form): the
        workspace's id once known (the export form's select takes ids), else its short name."""
        values = dict(zip(self.PARAM_NAMES, (self.workspace_id or self.workspace_slug, self.fault_category, self.service,
                                             self.error_code, self.source_type, self.q)))
        values.update(overrides)
        return {k: str(v) for k, v in values.items() if v not in (None, "")}


def with_category_code(session: Session, workspace_ids: list[int],
                       filters: CaseFilters) -> CaseFilters:
    """``filters`` with its typed category as the code cases carry
    (``admin.category_filter``: a code or a label of the workspaces'; ``ValidationFailed``
    when it names nothing)."""
    if not filters.fault_category:
        return filters
    return replace(filters, fault_category=category_filter(session, workspace_ids,
                                                           filters.fault_category))


def case_conditions(filters: CaseFilters) -> list[Any]:
    """SQL conditions on ``Case`` for ``filters`` (shared with the cases export). A
    withdrawn case (its run no longer judged useful, SPEC 7) is never in the library."""
    conds: list[Any] = [Case.withdrawn_at.is_(None)]
    if filters.workspace_id is not None:
        conds.append(Case.workspace_id == filters.workspace_id)
    if filters.fault_category:
        conds.append(Case.fault_category == filters.fault_category)
    if filters.source_type:
        conds.append(Case.source_type == filters.source_type)
    if filters.service:
        conds.append(func.lower(Case.service) == filters.service.lower())
    if filters.error_code:
        conds.append(func.lower(Case.error_code) == filters.error_code.lower())
    if filters.q:
        needle = filters.q.lower()
        conds.append(or_(*(
            HoldsText(func.lower(column), needle)
            for column in (Case.title, Case.root_cause, Case.solution, Case.diagnosis_id,
                           Case.error_code, Case.service)
        )))
    return conds


def _source_type(params: Mapping[str, Any]) -> str | None:
    """The Source filter's code (``CASE_SOURCES``, any case), or ``None`` if blank; refused
    in the labels the filter's select shows, each with its code, as a reason is
    (``export_filters.check_reason``)."""
    source_type = text_param(params, "source_type", 8)
    if source_type is not None and source_type.upper() not in CASE_SOURCES:
        raise ValidationFailed("source_type", "must be one of " + ", ".join(
            f"{label} ({code})" for code, label in CASE_SOURCES.choices()))
    return source_type.upper() if source_type else None


def read_filters(session: Session, workspace_ids: list[int], params: Mapping[str, Any]) -> CaseFilters:
    """``CaseFilters.from_params`` plus the checks that need the database, for an actor who
    reads the workspaces ``workspace_ids``: the workspace (an id or a short name) must be
    one of them (``access.workspace_choice``: else ``no_workspace``, as the runs list),
    the category a code or a label of theirs (``with_category_code``). Returns the filters
    with the workspace's id and the category's code. Raises one ``ValidationFailed``
    naming every refused field (``problems``)."""
    refused = Refusals()
    filters = CaseFilters.read(params, refused)
    filters, reason = with_workspace_id(session, workspace_ids, filters)
    if reason:
        refused.add("workspace", reason)
    filters = refused.read(with_category_code, session, workspace_ids, filters) or filters
    refused.check()
    return filters


def with_workspace_id(session: Session, workspace_ids: list[int],
                      filters: CaseFilters) -> tuple[CaseFilters, str | None]:
    """``filters`` with the id of the workspace it names (a short name looked up), and why
    that workspace lists nothing on purpose (not one of ``workspace_ids``), else ``None``."""
    ref = filters.workspace_slug or filters.workspace_id
    ws_id, reason = workspace_choice(session, ref, workspace_ids)
    return replace(filters, workspace_id=ws_id), reason
