"""The not-useful queue's list: filters, per-state counts, keyset pages (SPEC 8)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from operator import attrgetter, itemgetter
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ...actors import Actor, Role
from ...domain import triage_flow
from ...domain.triage_flow import OPENED_REASONS
from ...errors import Forbidden, ValidationFailed
from ...models import (
    Feedback,
    Run,
    RunKind,
    TriageItem,
)
from ...models.base import MAX_ID
from ...queries import scope_to_actor
from .. import keyset
from ..keyset import SortKey, SortOrder
from ..params import (
    choice_param,
    date_range_params,
    day_range,
    int_param,
    text_param,
    workspace_param,
)
from ._rows import (
    TriageRow,
    assignees_by_workspace,
    build_rows,
    disagreement_clause,
    row_select,
    triage_workspaces,
)

# --------------------------------------------------------------------------- filters


@dataclass(frozen=True)
class TriageFilters:
    """Filters of the queue. ``state``: a triage state or ``"open"`` (new + triaged);
    ``assignee``: ``"me"``, ``"none"`` or a user id; ``kind``: the run's kind;
    ``reason``: a reviewer's reason code on a negative rating of the run; ``opened``: the
    item's ``opened_reason``; ``score_min`` / ``score_max``: evidence score 0-100
    inclusive; ``date_from`` / ``date_to``: the day the item was opened (UTC, inclusive);
    ``disagreement``: only runs where reviewers rated the same part both up and down."""

    workspace_id: int | None = None
    state: str | None = None
    assignee: str | None = None
    kind: str | None = None
    reason: str | None = None
    opened: str | None = None
    score_min: int | None = None
    score_max: int | None = None
    date_from: date | None = None
    date_to: date | None = None
    disagreement: bool = False

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> TriageFilters:
        """Parse query-string values (all text). Raises ``ValidationFailed`` naming the field."""
        assignee = str(params.get("assignee") or "").strip() or None
        if assignee not in (None, "me", "none") and not (
                assignee.isascii() and assignee.isdigit() and int(assignee) <= MAX_ID):
            raise ValidationFailed("assignee", "must be me, none or a user id")
        reason = text_param(params, "reason", 80)
        date_from, date_to = date_range_params(params)
        filters = cls(
            workspace_id=workspace_param(params),
            state=choice_param(params, "state", ("open",) + triage_flow.STATES),
            assignee=assignee,
            kind=choice_param(params, "kind", [k.value for k in RunKind]),
            reason=reason,
            opened=choice_param(params, "opened", OPENED_REASONS),
            score_min=int_param(params, "score_min", 0, 100),
            score_max=int_param(params, "score_max", 0, 100),
            date_from=date_from,
            date_to=date_to,
            disagreement=str(params.get("disagreement") or "").lower() in ("1", "true", "on", "yes"),
        )
        if filters.score_min is not None and filters.score_max is not None \
                and filters.score_min > filters.score_max:
            raise ValidationFailed("score_min", "must not be above score_max")
        return filters

    def as_params(self, **overrides: Any) -> dict[str, str]:
        """The filters as query-string values (empty ones left out), for links and forms."""
        values = {
            "workspace": self.workspace_id, "state": self.state, "assignee": self.assignee,
            "kind": self.kind, "reason": self.reason, "opened": self.opened,
            "score_min": self.score_min, "score_max": self.score_max,
            "date_from": self.date_from.isoformat() if self.date_from else None,
            "date_to": self.date_to.isoformat() if self.date_to else None,
            "disagreement": "1" if self.disagreement else None,
        }
        values.update(overrides)
        return {k: str(v) for k, v in values.items() if v not in (None, "")}


def _conditions(filters: TriageFilters, actor: Actor, with_state: bool = True) -> list[Any]:
    conds: list[Any] = []
    if filters.workspace_id is not None:
        conds.append(TriageItem.workspace_id == filters.workspace_id)
    if with_state and filters.state:
        if filters.state == "open":
            conds.append(TriageItem.state.in_(triage_flow.OPEN_STATES))
        else:
            conds.append(TriageItem.state == filters.state)
    if filters.assignee == "me":
        conds.append(TriageItem.assignee_id == actor.user_id)
    elif filters.assignee == "none":
        conds.append(TriageItem.assignee_id.is_(None))
    elif filters.assignee:
        conds.append(TriageItem.assignee_id == int(filters.assignee))
    if filters.kind:
        conds.append(Run.kind == filters.kind)
    if filters.opened:
        conds.append(TriageItem.opened_reason == filters.opened)
    if filters.reason:
        conds.append(
            select(Feedback.id).where(
                Feedback.run_pk == TriageItem.run_pk,
                Feedback.rating == "negative",
                Feedback.reason == filters.reason,
            ).exists()
        )
    if filters.score_min is not None:
        conds.append(Run.evidence_score >= filters.score_min)
    if filters.score_max is not None:
        conds.append(Run.evidence_score <= filters.score_max)
    start, end = day_range(filters.date_from, filters.date_to)
    if start is not None:
        conds.append(TriageItem.created_at >= start)
    if end is not None:
        conds.append(TriageItem.created_at < end)
    if filters.disagreement:
        conds.append(disagreement_clause(TriageItem.run_pk))
    return conds


# The queue's one order: newest item first, the id breaking ties.
QUEUE_ORDER = SortOrder("newest", "Newest first", (
    SortKey(TriageItem.created_at, True, attrgetter("created_at"), datetime),
    SortKey(TriageItem.id, True, attrgetter("id")),
))


@dataclass(frozen=True)
class TriagePage:
    """A page of the queue: ``rows``, the next page's cursor (``None`` on the last page),
    ``counts`` per state under the same filters except the state, their ``total``, and
    the workspaces (id, name) the actor may triage in (for the filter form) and the
    people (user id, username) who may be assigned in any of them (for bulk assign)."""

    rows: list[TriageRow]
    next_cursor: str | None
    counts: dict[str, int]
    total: int
    workspaces: list[tuple[int, str]]
    filters: TriageFilters
    assignable: list[tuple[int, str]] = field(default_factory=list)


def list_items(
    session: Session, actor: Actor, filters: TriageFilters | None = None, *,
    limit: int = 50, cursor: str | None = None,
) -> TriagePage:
    """The queue, newest item first, keyset-paginated on (created_at, id) so equal
    timestamps neither skip nor repeat rows. Only items of workspaces where the actor is
    lead or admin. Raises ``Forbidden`` when the actor is lead nowhere (reviewers get the
    same 403 as for any foreign target), ``ValidationFailed`` for a malformed cursor."""
    filters = filters or TriageFilters()
    workspaces = triage_workspaces(session, actor)
    if not workspaces:
        raise Forbidden()
    limit = max(1, min(int(limit), 500))
    base = scope_to_actor(
        select(TriageItem.id).join(Run, Run.id == TriageItem.run_pk),
        actor, TriageItem.workspace_id, Role.LEAD,
    )
    state_free = base.where(*_conditions(filters, actor, with_state=False))
    counts = dict.fromkeys(triage_flow.STATES, 0)
    for state, count in session.execute(
        select(TriageItem.state, func.count())
        .where(TriageItem.id.in_(state_free.scalar_subquery()))
        .group_by(TriageItem.state)
    ):
        counts[state] = int(count)
    stmt = scope_to_actor(row_select(), actor, TriageItem.workspace_id, Role.LEAD).where(
        *_conditions(filters, actor)
    )
    records, next_cursor = keyset.page(session, stmt, QUEUE_ORDER, cursor, limit,
                                       last=itemgetter(0))
    if filters.state == "open":
        total = counts["new"] + counts["triaged"]
    elif filters.state:
        total = counts[filters.state]
    else:
        total = sum(counts.values())
    people = sorted({pair for pairs in assignees_by_workspace(session, (w for w, _ in workspaces)).values()
                     for pair in pairs}, key=lambda pair: (pair[1], pair[0]))
    return TriagePage(build_rows(session, records), next_cursor, counts, total, workspaces,
                      filters, people)
