"""The not-useful queue: list, item detail, assign, categorise, note, state moves, bulk
actions (SPEC 3, 8, 10).

Every function here is for leads and admins of the item's workspace (``Role.LEAD``);
anybody else, and any item that does not exist, gets the same ``Forbidden``. Every write
carries the ``version`` the caller's page showed: the UPDATE matches on it, so a change
sent from an out-of-date page raises ``Conflict`` with the item's current state in
``details`` — never a silent overwrite. A triage item never touches its run's ``status``.

Items are opened and auto-resolved by the verdict (``services/feedback/verdict.py``),
which never touches the run's ``status`` either (S000, S001 10.3).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.orm import Session, aliased, selectinload

from ..actors import Actor, Role
from ..domain import triage_flow
from ..domain.pagination import decode_cursor, encode_cursor
from ..domain.suggest import (
    TRIAGE_CATEGORIES,
    RunFacts,
    Suggestion,
    suggest_triage_category,
    valid_category,
)
from ..domain.triage_flow import OPENED_REASONS
from ..errors import Conflict, Forbidden, ValidationFailed
from ..models import (
    Case,
    Feedback,
    FeedbackEvent,
    Membership,
    Run,
    RunKind,
    TriageItem,
    User,
    Workspace,
)
from ..models.base import MAX_ID, utcnow
from ..queries import get_triage_item_for, scope_to_actor
from .params import (
    choice_param,
    date_range_params,
    day_range,
    id_value,
    int_param,
    text_param,
    workspace_param,
)

NOTE_MAX = 4000
BULK_MAX = 500
ASSIGNEE_ROLES = Role.LEAD.at_least()


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


def _disagreement_clause(run_pk_col: Any) -> Any:
    """EXISTS two ratings of the same part of the run, one up and one down (SPEC 6.2)."""
    up, down = aliased(Feedback), aliased(Feedback)
    return (
        select(up.id)
        .join(down, and_(
            down.run_pk == up.run_pk,
            down.target_type == up.target_type,
            down.target_id == up.target_id,
            down.subject_key == up.subject_key,
        ))
        .where(up.run_pk == run_pk_col, up.rating == "positive", down.rating == "negative")
        .exists()
    )


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
        conds.append(_disagreement_clause(TriageItem.run_pk))
    return conds


# --------------------------------------------------------------------------- read models


@dataclass(frozen=True)
class TriageRow:
    """One queue row: the item, its run's summary and the reviewers' ratings summary.

    ``assignable`` holds (user id, username) of the leads and admins of the item's
    workspace; ``moves`` the states the item may move to. ``to_dict`` / ``from_dict``
    give the JSON form used as a ``Conflict``'s ``details`` (the current state)."""

    id: int
    version: int
    workspace_id: int
    workspace: str
    state: str
    opened_reason: str
    assignee_id: int | None
    assignee: str | None
    fault_category: str | None
    note: str | None
    created_at: datetime
    updated_at: datetime
    resolved_at: datetime | None
    run_pk: int
    run_id: str
    run_kind: str
    run_status: str
    query: str
    evidence_score: int | None
    verifier_verdict: str | None
    verdict: str | None
    positive: int = 0
    negative: int = 0
    reviewers: int = 0
    reasons: tuple[str, ...] = ()
    disagreement: bool = False
    assignable: tuple[tuple[int, str], ...] = ()
    moves: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form: datetimes as ISO 8601 UTC, tuples as lists."""
        data = asdict(self)
        for key in ("created_at", "updated_at", "resolved_at"):
            data[key] = data[key].isoformat() if data[key] else None
        data["reasons"] = list(self.reasons)
        data["assignable"] = [list(pair) for pair in self.assignable]
        data["moves"] = list(self.moves)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TriageRow:
        """Inverse of ``to_dict``."""
        values = dict(data)
        for key in ("created_at", "updated_at", "resolved_at"):
            values[key] = datetime.fromisoformat(values[key]) if values.get(key) else None
        values["reasons"] = tuple(values.get("reasons") or ())
        values["assignable"] = tuple((int(i), str(n)) for i, n in values.get("assignable") or ())
        values["moves"] = tuple(values.get("moves") or ())
        return cls(**values)


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


def _assignable(session: Session, workspace_ids: Iterable[int]) -> dict[int, tuple[tuple[int, str], ...]]:
    ids = sorted(set(workspace_ids))
    found: dict[int, list[tuple[int, str]]] = defaultdict(list)
    if ids:
        rows = session.execute(
            select(Membership.workspace_id, User.id, User.username)
            .join(User, User.id == Membership.user_id)
            .where(Membership.workspace_id.in_(ids), Membership.role.in_(ASSIGNEE_ROLES),
                   User.active.is_(True))
            .order_by(User.username)
        ).all()
        for ws_id, user_id, username in rows:
            found[ws_id].append((user_id, username))
    return {ws_id: tuple(found.get(ws_id, ())) for ws_id in ids}


def _rating_summaries(session: Session, run_pks: Sequence[int]) -> dict[int, dict[str, Any]]:
    summary: dict[int, dict[str, Any]] = {
        pk: {"positive": 0, "negative": 0, "reviewers": 0, "reasons": [], "disagreement": False}
        for pk in run_pks
    }
    if not run_pks:
        return summary
    for run_pk, rating, count in session.execute(
        select(Feedback.run_pk, Feedback.rating, func.count())
        .where(Feedback.run_pk.in_(run_pks)).group_by(Feedback.run_pk, Feedback.rating)
    ):
        summary[run_pk][rating] = int(count)
    for run_pk, count in session.execute(
        select(Feedback.run_pk, func.count(func.distinct(Feedback.author_id)))
        .where(Feedback.run_pk.in_(run_pks)).group_by(Feedback.run_pk)
    ):
        summary[run_pk]["reviewers"] = int(count)
    for run_pk, reason in session.execute(
        select(Feedback.run_pk, Feedback.reason).distinct()
        .where(Feedback.run_pk.in_(run_pks), Feedback.rating == "negative",
               Feedback.reason.is_not(None))
        .order_by(Feedback.run_pk, Feedback.reason)
    ):
        summary[run_pk]["reasons"].append(reason)
    runs = select(Run.id).where(Run.id.in_(run_pks), _disagreement_clause(Run.id))
    for (run_pk,) in session.execute(runs):
        summary[run_pk]["disagreement"] = True
    return summary


def _row_select() -> Any:
    return (
        select(TriageItem, Run, User.username, Workspace.name)
        .join(Run, Run.id == TriageItem.run_pk)
        .join(Workspace, Workspace.id == TriageItem.workspace_id)
        .outerjoin(User, User.id == TriageItem.assignee_id)
    )


def _build_rows(session: Session, records: Sequence[Any]) -> list[TriageRow]:
    run_pks = [item.run_pk for item, *_ in records]
    summaries = _rating_summaries(session, run_pks)
    assignable = _assignable(session, (item.workspace_id for item, *_ in records))
    rows = []
    for item, run, assignee, ws_name in records:
        s = summaries[item.run_pk]
        rows.append(TriageRow(
            id=item.id, version=item.version, workspace_id=item.workspace_id, workspace=ws_name,
            state=item.state, opened_reason=item.opened_reason, assignee_id=item.assignee_id,
            assignee=assignee, fault_category=item.fault_category, note=item.note,
            created_at=item.created_at, updated_at=item.updated_at, resolved_at=item.resolved_at,
            run_pk=run.id, run_id=run.run_id, run_kind=run.kind, run_status=run.status,
            query=run.query or "", evidence_score=run.evidence_score,
            verifier_verdict=run.verifier_verdict, verdict=run.feedback,
            positive=s["positive"], negative=s["negative"], reviewers=s["reviewers"],
            reasons=tuple(s["reasons"]), disagreement=s["disagreement"],
            assignable=assignable.get(item.workspace_id, ()),
            moves=triage_flow.TRANSITIONS.get(item.state, ()),
        ))
    return rows


def _rows_by_id(session: Session, item_ids: Sequence[int]) -> dict[int, TriageRow]:
    if not item_ids:
        return {}
    records = session.execute(_row_select().where(TriageItem.id.in_(item_ids))).all()
    return {row.id: row for row in _build_rows(session, records)}


def list_items(
    session: Session, actor: Actor, filters: TriageFilters | None = None, *,
    limit: int = 50, cursor: str | None = None,
) -> TriagePage:
    """The queue, newest item first, keyset-paginated on (created_at, id) so equal
    timestamps neither skip nor repeat rows. Only items of workspaces where the actor is
    lead or admin. Raises ``Forbidden`` when the actor is lead nowhere (reviewers get the
    same 403 as for any foreign target), ``ValidationFailed`` for a malformed cursor."""
    filters = filters or TriageFilters()
    workspaces = _triage_workspaces(session, actor)
    if not workspaces:
        raise Forbidden()
    limit = max(1, min(int(limit), 500))
    base = scope_to_actor(
        select(TriageItem.id).join(Run, Run.id == TriageItem.run_pk),
        actor, TriageItem.workspace_id, Role.LEAD,
    )
    state_free = base.where(*_conditions(filters, actor, with_state=False))
    counts = {state: 0 for state in triage_flow.STATES}
    for state, count in session.execute(
        select(TriageItem.state, func.count())
        .where(TriageItem.id.in_(state_free.scalar_subquery()))
        .group_by(TriageItem.state)
    ):
        counts[state] = int(count)
    stmt = scope_to_actor(_row_select(), actor, TriageItem.workspace_id, Role.LEAD).where(
        *_conditions(filters, actor)
    )
    if cursor:
        try:
            at, last_id = decode_cursor(cursor)
        except ValueError:
            raise ValidationFailed("cursor", "malformed cursor") from None
        stmt = stmt.where(or_(
            TriageItem.created_at < at,
            and_(TriageItem.created_at == at, TriageItem.id < last_id),
        ))
    records = session.execute(
        stmt.order_by(TriageItem.created_at.desc(), TriageItem.id.desc()).limit(limit + 1)
    ).all()
    next_cursor = None
    if len(records) > limit:
        records = records[:limit]
        last = records[-1][0]
        next_cursor = encode_cursor(last.created_at, last.id)
    if filters.state == "open":
        total = counts["new"] + counts["triaged"]
    elif filters.state:
        total = counts[filters.state]
    else:
        total = sum(counts.values())
    people = sorted({pair for pairs in _assignable(session, (w for w, _ in workspaces)).values()
                     for pair in pairs}, key=lambda pair: (pair[1], pair[0]))
    return TriagePage(_build_rows(session, records), next_cursor, counts, total, workspaces,
                      filters, people)


def _triage_workspaces(session: Session, actor: Actor) -> list[tuple[int, str]]:
    stmt = scope_to_actor(select(Workspace.id, Workspace.name), actor, Workspace.id, Role.LEAD)
    return [(ws_id, name) for ws_id, name in session.execute(stmt.order_by(Workspace.name))]


# --------------------------------------------------------------------------- item detail


@dataclass(frozen=True)
class RatingView:
    """One reviewer's current rating of one part of the run."""

    id: int
    reviewer: str
    target_type: str
    target_label: str
    subject_key: str
    rating: str
    reason: str | None
    comment: str | None
    correction: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class HistoryEntry:
    """One feedback create / update / delete, oldest first; ``before`` / ``after`` are
    the rating fields ({rating, reason, comment, correction}) or ``None``."""

    at: datetime
    actor: str
    action: str
    target_label: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None


@dataclass(frozen=True)
class TriageDetail:
    """Everything the item page shows: the queue row, the run (messages, steps, report
    loaded), every reviewer's ratings, the feedback history, the proposed triage
    category, the known categories, and the run's case if there is one."""

    row: TriageRow
    run: Run
    ratings: list[RatingView]
    history: list[HistoryEntry]
    suggestion: Suggestion
    categories: tuple[str, ...]
    case: Case | None


def _target_labels(run: Run) -> dict[tuple[str, int, str], str]:
    labels: dict[tuple[str, int, str], str] = {}
    for message in run.messages:
        labels[("chat_message", message.id, "")] = f"answer (message {message.ordinal})"
        for citation in message.citations:
            cid = str(citation.get("id", ""))
            title = citation.get("title") or cid
            labels[("citation", message.id, cid)] = f"citation {cid}: {title}"
    for step in run.steps:
        labels[("diagnostic_step", step.id, "")] = f"step {step.ordinal}: {step.name}"
    if run.report is not None:
        labels[("diagnostic_report", run.report.id, "")] = "report"
    return labels


def _label(labels: Mapping[tuple[str, int, str], str], target_type: str, target_id: int,
           subject_key: str) -> str:
    found = labels.get((target_type, target_id, subject_key or ""))
    if found:
        return found
    suffix = f" {subject_key}" if subject_key else ""
    return f"{target_type.replace('_', ' ')} #{target_id}{suffix} (no longer in the run)"


def get_item(session: Session, actor: Actor, item_id: int) -> TriageDetail:
    """The item page's data (SPEC 8): the run, every reviewer's ratings with reasons,
    comments and corrections, and the feedback history. Raises ``Forbidden``."""
    item = get_triage_item_for(session, actor, item_id)
    if item is None:
        raise Forbidden()
    row = _rows_by_id(session, [item.id])[item.id]
    run = session.scalars(
        select(Run).where(Run.id == item.run_pk).options(
            selectinload(Run.messages), selectinload(Run.steps), selectinload(Run.report)
        )
    ).one()
    labels = _target_labels(run)
    ratings = [
        RatingView(
            id=f.id, reviewer=username, target_type=f.target_type,
            target_label=_label(labels, f.target_type, f.target_id, f.subject_key),
            subject_key=f.subject_key, rating=f.rating, reason=f.reason, comment=f.comment,
            correction=f.correction, created_at=f.created_at, updated_at=f.updated_at,
        )
        for f, username in session.execute(
            select(Feedback, User.username).join(User, User.id == Feedback.author_id)
            .where(Feedback.run_pk == run.id)
            .order_by(Feedback.target_type, Feedback.target_id, Feedback.subject_key,
                      User.username)
        )
    ]
    history = [
        HistoryEntry(
            at=e.created_at, actor=username or "(deleted user)", action=e.action,
            target_label=_label(labels, e.target_type, e.target_id, e.subject_key),
            before=e.before, after=e.after,
        )
        for e, username in session.execute(
            select(FeedbackEvent, User.username)
            .outerjoin(User, User.id == FeedbackEvent.actor_id)
            .where(FeedbackEvent.run_pk == run.id)
            .order_by(FeedbackEvent.created_at, FeedbackEvent.id)
        )
    ]
    factors = [f.get("name", "") for f in
               ((run.self_evaluation or {}).get("rule_evaluation") or {}).get("factors") or []
               if isinstance(f, Mapping)]
    facts = RunFacts(
        status=run.status, tool_call_count=run.tool_call_count,
        failed_tool_call_count=run.failed_tool_call_count, evidence_factors=factors,
        verifier_verdict=run.verifier_verdict,
        reasons=[r.reason for r in ratings if r.rating == "negative" and r.reason],
    )
    case = session.scalars(
        select(Case).where(Case.workspace_id == run.workspace_id, Case.diagnosis_id == run.run_id)
    ).one_or_none()
    return TriageDetail(row, run, ratings, history, suggest_triage_category(facts),
                        TRIAGE_CATEGORIES, case)


# --------------------------------------------------------------------------- actions


def _current_state(session: Session, item_id: int) -> dict[str, Any]:
    session.expire_all()
    return _rows_by_id(session, [item_id])[item_id].to_dict()


def _stale(session: Session, item_id: int) -> Conflict:
    return Conflict(
        "This item was changed by someone else since your page was loaded; "
        "nothing was saved. Here is its current state.",
        details=_current_state(session, item_id),
    )


def _check_version(version: Any) -> int:
    try:
        value = int(version)
    except (TypeError, ValueError):
        raise ValidationFailed("version", "required whole number") from None
    if value < 1:
        raise ValidationFailed("version", "must be 1 or more")
    return value


def _versioned_update(session: Session, item: TriageItem, version: int,
                      changes: dict[str, Any]) -> bool:
    """UPDATE ... SET changes, version + 1 WHERE id = item AND version = ``version``
    (optimistic lock, SPEC 8). False when the version is stale, read or written by a
    concurrent writer that got there first: nothing changed then."""
    if item.version != version:
        return False
    result = session.execute(
        update(TriageItem)
        .where(TriageItem.id == item.id, TriageItem.version == version)
        .values(**changes, version=version + 1, updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1


def _apply(session: Session, item: TriageItem, version: int, changes: dict[str, Any]) -> None:
    """``_versioned_update`` or ``Conflict`` with the item's current state."""
    if not _versioned_update(session, item, version, changes):
        raise _stale(session, item.id)
    session.expire(item)


def _assignee_check(session: Session, workspace_id: int, assignee_id: int | None) -> str | None:
    """``None`` when ``assignee_id`` may be assigned in the workspace, else the reason."""
    if assignee_id is None:
        return None
    found = session.scalar(
        select(Membership.id).join(User, User.id == Membership.user_id).where(
            Membership.workspace_id == workspace_id, Membership.user_id == assignee_id,
            Membership.role.in_(ASSIGNEE_ROLES), User.active.is_(True),
        )
    )
    if found is None:
        return "must be an active lead or admin of the item's workspace"
    return None


def _assignee_id(value: Any) -> int | None:
    if value is None or (isinstance(value, str) and value.strip() in ("", "none")):
        return None
    return id_value(value, "assignee_id", "must be a user id or empty")


def _category(value: str | None) -> str | None:
    if value is None or not value.strip():
        return None
    code = value.strip().upper().replace(" ", "_").replace("-", "_")
    if not valid_category(code):
        raise ValidationFailed(
            "fault_category", "use capital letters, digits and _ (at most 64), e.g. RETRIEVAL_MISS"
        )
    return code


def _note(value: str | None) -> str | None:
    if value is None or not value.strip():
        return None
    if len(value) > NOTE_MAX:
        raise ValidationFailed("note", f"at most {NOTE_MAX} characters")
    return value


def _state_changes(item: TriageItem, state: str) -> dict[str, Any]:
    if state not in triage_flow.STATES:
        raise ValidationFailed("state", f"must be one of {', '.join(triage_flow.STATES)}")
    if not triage_flow.can_move(item.state, state):
        raise ValidationFailed(
            "state", f"an item that is {item.state} cannot move to {state}"
        )
    closed = state in triage_flow.CLOSED_STATES
    return {"state": state, "resolved_at": utcnow() if closed else None}


def _load(session: Session, actor: Actor, item_id: Any) -> TriageItem:
    try:
        item_pk = int(item_id)
    except (TypeError, ValueError):
        raise Forbidden() from None
    item = get_triage_item_for(session, actor, item_pk)
    if item is None:
        raise Forbidden()
    return item


def _single(session: Session, actor: Actor, item_id: int, version: Any,
            changes_of: Any) -> TriageRow:
    expected = _check_version(version)
    item = _load(session, actor, item_id)
    if item.version != expected:
        raise _stale(session, item.id)
    _apply(session, item, expected, changes_of(item))
    session.commit()
    return _rows_by_id(session, [item.id])[item.id]


def assign(session: Session, actor: Actor, item_id: int, version: int,
           assignee_id: int | str | None) -> TriageRow:
    """Assign the item to a lead or admin of its workspace (``None`` unassigns).

    Raises ``Forbidden`` (not a lead of the item's workspace, or no such item),
    ``ValidationFailed`` (``assignee_id`` not an active lead / admin there, bad version),
    ``Conflict`` (stale ``version``; ``details`` = the current row)."""
    target = _assignee_id(assignee_id)

    def changes(item: TriageItem) -> dict[str, Any]:
        problem = _assignee_check(session, item.workspace_id, target)
        if problem:
            raise ValidationFailed("assignee_id", problem)
        return {"assignee_id": target}

    return _single(session, actor, item_id, version, changes)


def set_fault_category(session: Session, actor: Actor, item_id: int, version: int,
                       fault_category: str | None) -> TriageRow:
    """Set (or clear, with ``None`` / blank) the item's fault category, an upper-case code
    such as ``RETRIEVAL_MISS`` (``domain.suggest.TRIAGE_CATEGORIES`` lists the usual ones;
    spaces and dashes become ``_``). Raises ``Forbidden``, ``ValidationFailed``, ``Conflict``."""
    code = _category(fault_category)
    return _single(session, actor, item_id, version, lambda item: {"fault_category": code})


def set_note(session: Session, actor: Actor, item_id: int, version: int,
             note: str | None) -> TriageRow:
    """Replace the item's note (at most 4,000 characters; blank clears it).
    Raises ``Forbidden``, ``ValidationFailed``, ``Conflict``."""
    text = _note(note)
    return _single(session, actor, item_id, version, lambda item: {"note": text})


def move(session: Session, actor: Actor, item_id: int, version: int, state: str) -> TriageRow:
    """Move the item to ``state`` along ``domain.triage_flow.TRANSITIONS`` (reopen is
    ``resolved | wont_fix -> triaged``); ``resolved_at`` is set on closing and cleared on
    reopening. The run's ``status`` is never touched.
    Raises ``Forbidden``, ``ValidationFailed`` (unknown state, move not allowed), ``Conflict``."""
    return _single(session, actor, item_id, version, lambda item: _state_changes(item, state))


@dataclass(frozen=True)
class BulkOutcome:
    """The result for one item of a bulk action: ``status`` is ``applied``, ``conflict``
    (stale version: nothing changed, ``row`` is the current state), ``invalid`` (the
    action does not apply to this item, ``message`` says why) or ``forbidden`` (no such
    item or not yours: ``row`` is ``None``)."""

    item_id: int
    status: str
    message: str
    row: TriageRow | None


def _parse_bulk_items(items: Iterable[tuple[Any, Any]]) -> list[tuple[int, int]]:
    parsed: list[tuple[int, int]] = []
    seen: dict[int, int] = {}
    for raw_id, raw_version in items:
        item_id = id_value(raw_id, "items", "each item must be an id and a version")
        version = int_param({"items": raw_version}, "items", 0, MAX_ID,
                            "each item must be an id and a version")
        if item_id is None or version is None:
            raise ValidationFailed("items", "each item must be an id and a version")
        if item_id in seen:
            if seen[item_id] != version:  # which one did the user mean? Say so, apply nothing.
                raise ValidationFailed(
                    "items", f"item {item_id} is listed twice with different versions")
            continue
        seen[item_id] = version
        parsed.append((item_id, version))
    if not parsed:
        raise ValidationFailed("items", "select at least one item")
    if len(parsed) > BULK_MAX:
        raise ValidationFailed("items", f"at most {BULK_MAX} items at once")
    return parsed


def parse_item_tokens(tokens: Iterable[str]) -> list[tuple[int, int]]:
    """Parse ``"<item id>:<version>"`` tokens (the bulk form's checkbox values).
    Raises ``ValidationFailed("items", ...)`` for a malformed token."""
    pairs = []
    for token in tokens:
        item_id, sep, version = str(token).partition(":")
        if not sep or not item_id.isdigit() or not version.isdigit():
            raise ValidationFailed("items", "each item must look like 12:3 (id:version)")
        pairs.append((int(item_id), int(version)))
    return pairs


def _bulk(session: Session, actor: Actor, items: Iterable[tuple[Any, Any]],
          changes_of: Any) -> list[BulkOutcome]:
    parsed = _parse_bulk_items(items)
    if not _triage_workspaces(session, actor):
        raise Forbidden()
    results: list[tuple[int, str, str]] = []
    for item_id, version in parsed:
        item = get_triage_item_for(session, actor, item_id)
        if item is None:
            results.append((item_id, "forbidden", Forbidden().message))
            continue
        stale = (item_id, "conflict", "changed by someone else since your page was loaded; not changed")
        if item.version != version:
            results.append(stale)
            continue
        try:
            changes = changes_of(item)
        except ValidationFailed as exc:
            results.append((item_id, "invalid", exc.message))
            continue
        results.append((item_id, "applied", "done")
                       if _versioned_update(session, item, version, changes) else stale)
    session.commit()
    rows = _rows_by_id(session, [i for i, status, _ in results if status != "forbidden"])
    return [BulkOutcome(i, status, message, rows.get(i)) for i, status, message in results]


def bulk_assign(session: Session, actor: Actor, items: Iterable[tuple[Any, Any]],
                assignee_id: int | str | None) -> list[BulkOutcome]:
    """Assign every (item id, version) of ``items`` to ``assignee_id``, in one transaction,
    each with its own version check; returns one ``BulkOutcome`` per distinct item, in
    input order: a stale item is reported (``conflict``) and the others are applied.
    Raises ``ValidationFailed`` (no items, more than 500, malformed), ``Forbidden`` (the
    actor is lead nowhere)."""
    target = _assignee_id(assignee_id)

    def changes(item: TriageItem) -> dict[str, Any]:
        problem = _assignee_check(session, item.workspace_id, target)
        if problem:
            raise ValidationFailed("assignee_id", problem)
        return {"assignee_id": target}

    return _bulk(session, actor, items, changes)


def bulk_move(session: Session, actor: Actor, items: Iterable[tuple[Any, Any]],
              state: str) -> list[BulkOutcome]:
    """Move every (item id, version) of ``items`` to ``state``, like ``bulk_assign``:
    per-item outcome, one transaction; an item for which the move is not allowed is
    reported ``invalid``. Raises ``ValidationFailed`` (unknown state, bad items),
    ``Forbidden``."""
    if state not in triage_flow.STATES:
        raise ValidationFailed("state", f"must be one of {', '.join(triage_flow.STATES)}")
    return _bulk(session, actor, items, lambda item: _state_changes(item, state))
