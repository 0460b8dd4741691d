"""A case's edit page and the proposals read from its run (SPEC 7).

The edit form shows the case's **stored** values (``CaseEditView.values``), never a
proposal: a lead who saves a change of one field must not store, unseen, a category or
a code the app proposed. The proposals (``domain.suggest``: fault category, error code,
service) are shown next to their fields as suggestions the lead accepts one by one
(``CaseEditView.proposal``), and nothing is written until the lead saves
(``cases.edit_case``). A new MANUAL case (``cases.new_case_draft``) starts from the
proposals instead: it has no stored values yet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..domain import suggest as suggest_rules
from ..domain.fault_categories import FaultCategory
from ..errors import Forbidden
from ..models import Case, DiagnosticReport, Run, ToolCall
from ..queries import get_case_for
from .admin.settings import categories_of
from .answer import answer_text_of

# The fields a lead edits, in the form's order.
EDITABLE_FIELDS: tuple[str, ...] = ("title", "fault_category", "error_code", "service",
                                    "root_cause", "solution")
# The fields the run proposes a value for.
PROPOSED_FIELDS: tuple[str, ...] = ("fault_category", "error_code", "service")


def run_text(session: Session, run: Run) -> suggest_rules.RunText:
    """What the proposal rules read from ``run``: query, answer (plus the report),
    alert payload, every tool call's arguments and every error text (SPEC 7)."""
    report = session.scalar(select(DiagnosticReport.content).where(DiagnosticReport.run_pk == run.id))
    calls = session.execute(
        select(ToolCall.arguments, ToolCall.error_message)
        .where(ToolCall.run_pk == run.id).order_by(ToolCall.ordinal, ToolCall.started_at)
    ).all()
    return suggest_rules.RunText(
        query=run.query or "",
        answer="\n\n".join(part for part in (answer_text_of(session, run), report) if part),
        alert=run.alert if isinstance(run.alert, Mapping) else None,
        tool_arguments=[args for args, _ in calls if args is not None],
        tool_errors=[error for _, error in calls if error],
    )


@dataclass(frozen=True)
class CaseEditView:
    """The edit form's data: the case, its run and the proposals from the run (``None``
    when the case has no run any more), the workspace's categories (code, label, group
    rows, ``admin.settings.categories_of``) for the form's select."""

    case: Case
    run: Run | None
    suggestions: suggest_rules.Suggestions | None
    categories: tuple[FaultCategory, ...]

    @property
    def values(self) -> dict[str, Any]:
        """The form's first values: ``{field: stored value or None}`` for each of
        ``EDITABLE_FIELDS``, plus ``version`` (int). Never a proposal (module doc)."""
        return {**{name: getattr(self.case, name) for name in EDITABLE_FIELDS},
                "version": self.case.version}

    def proposal(self, name: str) -> str | None:
        """The proposed value of field ``name`` (one of ``PROPOSED_FIELDS``); ``None``
        for another name, a case without a run, or a field nothing was found for."""
        if self.suggestions is None or name not in PROPOSED_FIELDS:
            return None
        return self.suggestions.as_dict()[name]


def edit_view(session: Session, actor: Actor, case_id: str) -> CaseEditView:
    """The edit page of a case, for leads and admins of its workspace. Raises ``Forbidden``
    (reviewers included)."""
    case = get_case_for(session, actor, str(case_id), Role.LEAD)
    if case is None:
        raise Forbidden()
    run = case.run
    suggestions = suggest_rules.suggest(run_text(session, run)) if run is not None else None
    return CaseEditView(case, run, suggestions, tuple(categories_of(session, case.workspace_id)))
