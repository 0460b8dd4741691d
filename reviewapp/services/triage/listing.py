"""The not-useful queue's list: filters, per-state counts, keyset pages (SPEC 8)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from operator import attrgetter, itemgetter
from typing import Any

from sqlalchemy import func, literal, select, union_all
from sqlalchemy.orm import Session

from ...actors import Actor
from ...domain import triage_flow
from ...domain.triage_flow import OPENED_REASONS
from ...errors import Forbidden, ValidationFailed
from ...models import (
    Feedback,
    Run,
    RunKind,
    TriageDayCount,
    TriageItem,
    User,
)
from ...models.base import MAX_ID
from .. import keyset
from ..access import role_workspace_choice
from ..export_filters import reason_refusal
from ..keyset import SortKey, SortOrder
from ..params import (
    Refusals,
    choice_param,
    date_param,
    day_range,
    int_param,
    text_param,
    workspace_ref,
)
from ..runs.listing import COUNT_CAP
from ._rows import (
    TriageRow,
    assignees_by_workspace,
    build_rows,
    disagreement_clause,
    filter_reasons,
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
    ``disagreement``: only runs where reviewers rated the same part both up and down;
    ``workspace_slug``: the workspace's short name when the filter named it so (as the
    runs list: ``?workspace=demo``; ``read_filters`` / ``list_items`` set its id)."""

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
    workspace_slug: str | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> TriageFilters:
        """Parse query-string values (all text). Raises one ``ValidationFailed`` naming
        every refused field (``problems``), each reason in words a page shows after the
        field's label (a reversed score range names ``score_max``, a reversed day range
        ``date_from``, as the runs list). Whether an assignee id is someone the actor's
        items can go to is ``read_filters``'s check (it needs the database)."""
        refused = Refusals()
        filters = cls._read(params, refused)
        refused.check()
        return filters

    @classmethod
    def _read(cls, params: Mapping[str, Any], refused: Refusals) -> TriageFilters:
        """The filters of ``params``, each refused one left unset and kept in ``refused``."""
        date_from = refused.read(date_param, params, "date_from")
        date_to = refused.read(date_param, params, "date_to")
        if date_from and date_to and date_from > date_to:
            refused.add("date_from", "must not be after the end day")
        score_min = refused.read(int_param, params, "score_min", 0, 100)
        score_max = refused.read(int_param, params, "score_max", 0, 100)
        if score_min is not None and score_max is not None and score_min > score_max:
            refused.add("score_max", "must not be below the minimum score")
        workspace = refused.read(workspace_ref, params)
        return cls(
            workspace_id=workspace if isinstance(workspace, int) else None,
            workspace_slug=workspace if isinstance(workspace, str) else None,
            state=refused.read(choice_param, params, "state", ("open",) + triage_flow.STATES),
            assignee=refused.read(_assignee_param, params),
            kind=refused.read(choice_param, params, "kind", [k.value for k in RunKind]),
            reason=refused.read(text_param, params, "reason", 80),
            opened=refused.read(choice_param, params, "opened", OPENED_REASONS),
            score_min=score_min,
            score_max=score_max,
            date_from=date_from,
            date_to=date_to,
            disagreement=str(params.get("disagreement") or "").lower() in ("1", "true", "on", "yes"),
        )

    def as_params(self, **overrides: Any) -> dict[str, str]:
        """The filters as query-string values (empty ones left out), for links and forms."""
        values = {
            "workspace": self.workspace_id or self.workspace_slug, "state": self.state, "assignee": self.assignee,
            "kind": self.kind, "reason": self.reason, "opened": self.opened,
            "score_min": self.score_min, "score_max": self.score_max,
            "date_from": self.date_from.isoformat() if self.date_from else None,
            "date_to": self.date_to.isoformat() if self.date_to else None,
            "disagreement": "1" if self.disagreement else None,
        }
        values.update(overrides)
        return {k: str(v) for k, v in values.items() if v not in (None, "")}


def _assignee_param(params: Mapping[str, Any]) -> str | None:
    assignee = str(params.get("assignee") or "").strip() or None
    if assignee not in (None, "me", "none") and not (
            assignee.isascii() and assignee.isdigit() and int(assignee) <= MAX_ID):
        raise ValidationFailed("assignee", "must be me, none or a user id")
    return assignee


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
    ``counts`` per state under the same filters except the state, their ``total`` (the
    shown states'), and the workspaces (id, name) the actor may triage in (for the
    filter form) and the people (user id, username) who may be assigned in any of them
    (``assignable``, for bulk assign) and those and who holds an item now
    (``assignee_choices``, the Assignee filter's). With filters beyond workspace and state
    a state's count stops at the cap: ``capped`` names those states ("10,000+"),
    ``total_capped`` the total."""

    rows: list[TriageRow]
    next_cursor: str | None
    counts: dict[str, int]
    total: int
    workspaces: list[tuple[int, str]]
    filters: TriageFilters
    assignable: list[tuple[int, str]] = field(default_factory=list)
    capped: frozenset[str] = frozenset()
    total_capped: bool = False
    assignee_choices: list[tuple[int, str]] = field(default_factory=list)


def _shown_states(filters: TriageFilters) -> tuple[str, ...]:
    if filters.state == "open":
        return triage_flow.OPEN_STATES
    return (filters.state,) if filters.state else triage_flow.STATES


def _lean(stmt: Any, filters: TriageFilters) -> Any:
    """``stmt`` on ``triage_item`` joined to its run only when a filter reads the run."""
    if filters.kind is None and filters.score_min is None and filters.score_max is None:
        return stmt
    return stmt.join(Run, Run.id == TriageItem.run_pk)


def _state_counts(session: Session, actor: Actor, filters: TriageFilters, ids: list[int],
                  cap: int) -> tuple[dict[str, int], frozenset[str]]:
    """Items per state under ``filters`` (the state left out) in workspaces ``ids``: from
    the dashboard's triage roll-up when only workspace and state filter (exact, without
    reading items), else counted per (workspace, state) index range up to ``cap``."""
    counts = dict.fromkeys(triage_flow.STATES, 0)
    if not ids:
        return counts, frozenset()
    if replace(filters, workspace_id=None, workspace_slug=None, state=None) == TriageFilters():
        for state, n in session.execute(
                select(TriageDayCount.state, func.sum(TriageDayCount.items))
                .where(TriageDayCount.workspace_id.in_(ids)).group_by(TriageDayCount.state)):
            counts[state] = int(n)
        return counts, frozenset()
    conds = _conditions(filters, actor, with_state=False)
    arms = []
    for ws_id in ids:
        for state in triage_flow.STATES:
            arm = _lean(select(literal(state).label("state")).select_from(TriageItem), filters)
            arms.append(select(arm.where(TriageItem.workspace_id == ws_id,
                                         TriageItem.state == state, *conds)
                               .limit(cap + 1).subquery()))
    found = union_all(*arms).subquery()
    for state, n in session.execute(select(found.c.state, func.count()).group_by(found.c.state)):
        counts[state] = int(n)
    capped = frozenset(state for state, n in counts.items() if n > cap)
    return {state: min(n, cap) for state, n in counts.items()}, capped


def _assignable(session: Session, workspaces: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """(user id, username) of who may be assigned in any of ``workspaces``, by name."""
    return sorted({pair for pairs in assignees_by_workspace(session, [ws for ws, _ in workspaces]).values()
                   for pair in pairs}, key=lambda pair: (pair[1], pair[0]))


def _with_holders(session: Session, led: list[int], people: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``people`` and who holds an item of the workspaces ``led`` (a lead since made
    reviewer, or deactivated, keeps theirs), by name: one probe per other user of the
    (assignee_id, workspace_id) index."""
    known = [user_id for user_id, _ in people]
    holds = select(TriageItem.id).where(TriageItem.assignee_id == User.id, TriageItem.workspace_id.in_(led))
    holders = session.execute(select(User.id, User.username).where(
        User.id.not_in(known), holds.exists())).all() if led else []
    return sorted({*people, *((user_id, name) for user_id, name in holders)}, key=lambda pair: (pair[1], pair[0]))


def filter_choices(session: Session, actor: Actor) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """What the queue's filter form offers: the workspaces (id, name) the actor may triage
    in, and the people (user id, username) of its Assignee filter, by name: who may be
    assigned in any of them and who holds one of their items now (a former lead).
    Raises ``Forbidden`` when the actor is lead nowhere (as ``list_items``)."""
    workspaces = triage_workspaces(session, actor)
    if not workspaces:
        raise Forbidden()
    return workspaces, _with_holders(session, [ws for ws, _ in workspaces], _assignable(session, workspaces))


# Why a user id in the assignee filter is refused (``assignee_refusal``).
UNKNOWN_ASSIGNEE = "must be someone items can be assigned to"


def assignee_refusal(people: list[tuple[int, str]], assignee: str | None) -> str | None:
    """Why ``assignee`` (the filter's text) matches nothing on purpose, else ``None``: a
    user id must be one of ``people`` (``filter_choices``: who may be assigned in the
    actor's workspaces or holds an item of theirs). Nobody else, a stranger of another
    workspace included (SPEC 2: no telling them apart)."""
    if assignee is None or not assignee.isdigit():
        return None
    return None if any(person == int(assignee) for person, _ in people) else UNKNOWN_ASSIGNEE


def read_filters(session: Session, actor: Actor, params: Mapping[str, Any]) -> TriageFilters:
    """``TriageFilters.from_params`` plus the checks that need the database: a workspace (id
    or short name) must be one the actor triages in (``_in_workspace``), an assignee
    id someone the actor's items can be assigned to (``assignee_refusal``), a reviewer
    reason one the workspaces rate with or carry retired (``_reason_refusal``). Raises one
    ``ValidationFailed`` naming every refused field (``problems``); ``Forbidden`` when the
    actor is lead nowhere (as ``list_items``)."""
    refused = Refusals()
    filters, reason = _in_workspace(session, actor, TriageFilters._read(params, refused),
                                    _led(session, actor))
    if reason:
        refused.add("workspace", reason)
    if filters.assignee is not None and filters.assignee.isdigit():
        reason = assignee_refusal(filter_choices(session, actor)[1], filters.assignee)
        if reason:
            refused.add("assignee", reason)
    if filters.reason and "workspace" not in refused.problems:
        reason = _reason_refusal(session, filters, _led(session, actor))
        if reason:
            refused.add("reason", reason)
    refused.check()
    return filters


def _in_workspace(session: Session, actor: Actor, filters: TriageFilters,
                  led: list[int]) -> tuple[TriageFilters, str | None]:
    """``filters`` with the id of the workspace it names (a short name looked up,
    ``access.workspace_id_of``), and why that workspace lists nothing on purpose, else
    ``None``: not one the actor triages in (``led``). A workspace where they only review
    says so (they have it: "you have no workspace" would be wrong); any other, none such
    or a stranger's, is ``no_workspace`` in the same words (SPEC 2)."""
    ws_id, reason = role_workspace_choice(session, actor, filters.workspace_slug or filters.workspace_id,
                                          led, "leads and admins triage there")
    return replace(filters, workspace_id=ws_id), reason


def _reason_refusal(session: Session, filters: TriageFilters, led: list[int]) -> str | None:
    """Why the "Reviewer reason" filter finds nothing on purpose, else ``None``: a reason
    neither the filtered workspaces (the one chosen, else every ``led`` one) rate with nor
    their ratings carry retired (``export_filters.reason_refusal``, the feedback export's
    words)."""
    if not filters.reason:
        return None
    ids = [filters.workspace_id] if filters.workspace_id is not None else led
    return reason_refusal(filters.reason, *filter_reasons(session, ids))


def _led(session: Session, actor: Actor) -> list[int]:
    """The ids of the workspaces the actor may triage in; ``Forbidden`` when none."""
    workspaces = triage_workspaces(session, actor)
    if not workspaces:
        raise Forbidden()
    return [ws_id for ws_id, _ in workspaces]


def list_items(
    session: Session, actor: Actor, filters: TriageFilters | None = None, *,
    limit: int = 50, cursor: str | None = None, count_cap: int = COUNT_CAP,
) -> TriagePage:
    """The queue, newest item first, keyset-paginated on (created_at, id) so equal
    timestamps neither skip nor repeat rows. Only items of workspaces where the actor is
    lead or admin. One range of the (workspace_id, state, created_at, id) index per
    workspace and shown state, merged (``keyset.page``), so neither the page nor the
    per-state counts (``_state_counts``) read every item (issue 18). Raises ``Forbidden``
    when the actor is lead nowhere (reviewers get the same 403 as for any foreign
    target), ``ValidationFailed`` for a malformed cursor, a workspace the actor does not
    triage in (``_in_workspace``: by id or short name), an assignee id nobody here can be
    assigned to (``assignee_refusal``: it would match nothing, silently) or a reviewer
    reason none of the workspaces has nor carries retired (``_reason_refusal``)."""
    filters = filters or TriageFilters()
    workspaces = triage_workspaces(session, actor)
    if not workspaces:
        raise Forbidden()
    limit = max(1, min(int(limit), 500))
    led = [ws_id for ws_id, _ in workspaces]
    assignable = _assignable(session, workspaces)
    people = _with_holders(session, led, assignable)
    filters, refusal = _in_workspace(session, actor, filters, led)
    if refusal:
        raise ValidationFailed("workspace", refusal)
    if reason := assignee_refusal(people, filters.assignee):
        raise ValidationFailed("assignee", reason)
    if reason := _reason_refusal(session, filters, led):
        raise ValidationFailed("reason", reason)
    ids = led if filters.workspace_id is None else [filters.workspace_id]
    counts, capped = _state_counts(session, actor, filters, ids, count_cap)
    conds = _conditions(filters, actor, with_state=False)
    ranges = [(ws_id, state) for ws_id in ids for state in _shown_states(filters)]
    # Several ranges: each reads only item keys (a small statement to plan), merged and
    # joined to the rows; one range is the row statement itself.
    base = row_select() if len(ranges) == 1 else _lean(select(TriageItem), filters)
    arms = [base.where(TriageItem.workspace_id == ws_id, TriageItem.state == state, *conds)
            for ws_id, state in ranges]
    records, next_cursor = (keyset.page(session, arms, QUEUE_ORDER, cursor, limit,
                                        last=itemgetter(0), rows=row_select())
                            if arms else ([], None))
    shown = _shown_states(filters)
    return TriagePage(build_rows(session, records), next_cursor, counts,
                      sum(counts[state] for state in shown), workspaces, filters, assignable,
                      capped, any(state in capped for state in shown), people)
