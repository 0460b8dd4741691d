"""The queue's row read model: one triage item with its run, verdict, ratings and who it
may be assigned to, loaded for many items in a fixed number of queries (SPEC 8)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session, aliased

from ...actors import Actor, Role
from ...domain import triage_flow
from ...domain.fault_categories import workspace_categories
from ...domain.reasons import ReasonRow, label_of, workspace_reasons
from ...domain.vocabulary import Registry
from ...models import (
    Feedback,
    Membership,
    Run,
    TriageEvent,
    TriageItem,
    User,
    Workspace,
)
from ...queries import scope_to_actor
from ..queue_governing import disputed_mark

ASSIGNEE_ROLES = Role.LEAD.at_least()


def disagreement_clause(run_pk_col: Any) -> Any:
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


@dataclass(frozen=True)
class TriageRow:
    """One queue row: the item, its run's summary and the reviewers' ratings summary.

    ``assignable`` holds (user id, username) of the leads and admins of the item's
    workspace; ``disputed`` is true when the run has no verdict because its reviewers
    split and no lead decided yet (``queue_governing.disputed_queue_id``: the item's
    verdict reads "Disputed", as on the runs list and run page); ``moves`` the states the item may move to. ``to_dict`` / ``from_dict``
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
    reasons: tuple[str, ...] = ()  # codes, as stored (exports keep these)
    reason_labels: tuple[str, ...] = ()  # the same reasons as the workspace labels them
    # fault_category as the workspace's list labels it (the code when the list dropped it)
    fault_category_label: str | None = None
    # why the app resolved it, when the app did for a reason the state should carry
    # (``triage_flow.AUTO_RESOLVED_NOTES``: "run disputed"); None otherwise
    state_note: str | None = None
    disagreement: bool = False
    disputed: bool = False
    assignable: tuple[tuple[int, str], ...] = ()
    moves: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form: datetimes as ISO 8601 UTC, tuples as lists."""
        data = asdict(self)
        for key in ("created_at", "updated_at", "resolved_at"):
            data[key] = data[key].isoformat() if data[key] else None
        data["reasons"] = list(self.reasons)
        data["reason_labels"] = list(self.reason_labels)
        data["assignable"] = [list(pair) for pair in self.assignable]
        data["moves"] = list(self.moves)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TriageRow:
        """Inverse of ``to_dict``; keys that are no field (what a ``Conflict`` adds beside
        the row, e.g. ``submitted_labels``) are left out."""
        values = {key: value for key, value in data.items() if key in cls.__dataclass_fields__}
        for key in ("created_at", "updated_at", "resolved_at"):
            values[key] = datetime.fromisoformat(values[key]) if values.get(key) else None
        values["reasons"] = tuple(values.get("reasons") or ())
        values["reason_labels"] = tuple(values.get("reason_labels") or ())
        values["assignable"] = tuple((int(i), str(n)) for i, n in values.get("assignable") or ())
        values["moves"] = tuple(values.get("moves") or ())
        return cls(**values)


def assignees_by_workspace(session: Session, workspace_ids: Iterable[int]) -> dict[int, tuple[tuple[int, str], ...]]:
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


def _settings_by_workspace(session: Session, workspace_ids: Iterable[int]) -> dict[int, Any]:
    ids = sorted(set(workspace_ids))
    if not ids:
        return {}
    return dict(session.execute(select(Workspace.id, Workspace.settings).where(Workspace.id.in_(ids))).all())


def reasons_by_workspace(session: Session, workspace_ids: Iterable[int]) -> dict[int, Registry[ReasonRow]]:
    """Each workspace's feedback-reason registry (its settings, else the defaults), one query."""
    return {ws_id: workspace_reasons(settings)
            for ws_id, settings in _settings_by_workspace(session, workspace_ids).items()}


def reason_choices(session: Session, workspace_ids: Iterable[int]) -> list[tuple[str, str]]:
    """(code, label) of every feedback reason the workspaces rate with (their registries,
    ``reasons_by_workspace``), for a reason picker: in registry order, workspaces by id,
    each code once with the first workspace's label."""
    choices: dict[str, str] = {}
    for _, registry in sorted(reasons_by_workspace(session, workspace_ids).items()):
        for code, label in registry.choices():
            choices.setdefault(code, label)
    return list(choices.items())


def retired_label(code: str) -> str:
    """How a retired reason ``code`` reads in a picker: "incorrect (retired)", as the
    ratings that carry it show it."""
    return f"{code.replace('_', ' ')} (retired)"


def filter_reasons(session: Session, workspace_ids: Iterable[int]
                   ) -> tuple[list[tuple[str, str]], list[str]]:
    """What a reason filter over the workspaces' ratings accepts (the triage list's
    "Reviewer reason", the feedback export's ``reason``): their current reasons
    (``reason_choices``, (code, label)) and, sorted, the retired codes their ratings
    still carry (an admin removed them from the list; ratings show "incorrect
    (retired)"), which still find those ratings. Two queries."""
    ids = list(workspace_ids)
    current = reason_choices(session, ids)
    codes = {code for code, _ in current}
    carried = session.scalars(select(Feedback.reason).distinct().where(
        Feedback.workspace_id.in_(ids), Feedback.reason.is_not(None))) if ids else ()
    return current, sorted(code for code in carried if code not in codes)


def reason_options(session: Session, workspace_ids: Iterable[int]) -> list[tuple[str, str]]:
    """(code, label) a reason filter's picker offers (``filter_reasons``): the
    workspaces' reasons, then the retired ones their ratings carry ("incorrect
    (retired)", ``retired_label``)."""
    current, retired = filter_reasons(session, workspace_ids)
    return [*current, *((code, retired_label(code)) for code in retired)]


def _rating_summaries(session: Session, run_pks: Sequence[int]) -> dict[int, dict[str, Any]]:
    summary: dict[int, dict[str, Any]] = {
        pk: {"positive": 0, "negative": 0, "reviewers": 0, "reasons": [], "disagreement": False,
             "disputed": False}
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
    # one statement for both run marks
    runs = select(Run.id, disagreement_clause(Run.id), disputed_mark()).where(Run.id.in_(run_pks))
    for run_pk, disagree, queue_id in session.execute(runs):
        summary[run_pk]["disagreement"] = bool(disagree)
        summary[run_pk]["disputed"] = queue_id is not None
    return summary


def _state_notes(session: Session, items: Sequence[TriageItem]) -> dict[int, str]:
    """Item id -> the note its state carries (``TriageRow.state_note``) for each resolved
    item of ``items`` whose latest state change (``triage_flow.STATE_EVENTS``) is an
    automatic resolve for a reason ``AUTO_RESOLVED_NOTES`` names; one query, none without
    a resolved item."""
    ids = [item.id for item in items if item.state == triage_flow.RESOLVED]
    if not ids:
        return {}
    latest = (select(func.max(TriageEvent.id)).where(TriageEvent.item_id.in_(ids),
                                                     TriageEvent.action.in_(triage_flow.STATE_EVENTS))
              .group_by(TriageEvent.item_id))
    return {item_id: triage_flow.AUTO_RESOLVED_NOTES[detail] for item_id, action, detail in session.execute(
        select(TriageEvent.item_id, TriageEvent.action, TriageEvent.detail).where(TriageEvent.id.in_(latest)))
        if action == triage_flow.EVENT_AUTO_RESOLVED and detail in triage_flow.AUTO_RESOLVED_NOTES}


def row_select() -> Any:
    return (
        select(TriageItem, Run, User.username, Workspace.name)
        .join(Run, Run.id == TriageItem.run_pk)
        .join(Workspace, Workspace.id == TriageItem.workspace_id)
        .outerjoin(User, User.id == TriageItem.assignee_id)
    )


def build_rows(session: Session, records: Sequence[Any]) -> list[TriageRow]:
    run_pks = [item.run_pk for item, *_ in records]
    summaries = _rating_summaries(session, run_pks)
    assignable = assignees_by_workspace(session, (item.workspace_id for item, *_ in records))
    settings = _settings_by_workspace(session, {item.workspace_id for item, *_ in records})
    reasons = {ws_id: workspace_reasons(values) for ws_id, values in settings.items()}
    categories = {ws_id: workspace_categories(values) for ws_id, values in settings.items()}
    notes = _state_notes(session, [item for item, *_ in records])
    rows = []
    for item, run, assignee, ws_name in records:
        s = summaries[item.run_pk]
        rows.append(TriageRow(
            id=item.id, version=item.version, workspace_id=item.workspace_id, workspace=ws_name,
            state=item.state, opened_reason=item.opened_reason, assignee_id=item.assignee_id,
            assignee=assignee, fault_category=item.fault_category, note=item.note,
            fault_category_label=categories[item.workspace_id].label_or_code(item.fault_category) or None,
            state_note=notes.get(item.id),
            created_at=item.created_at, updated_at=item.updated_at, resolved_at=item.resolved_at,
            run_pk=run.id, run_id=run.run_id, run_kind=run.kind, run_status=run.status,
            query=run.query or "", evidence_score=run.evidence_score,
            verifier_verdict=run.verifier_verdict, verdict=run.feedback,
            positive=s["positive"], negative=s["negative"], reviewers=s["reviewers"],
            reasons=tuple(s["reasons"]),
            reason_labels=tuple(label_of(reasons[item.workspace_id], code) for code in s["reasons"]),
            disagreement=s["disagreement"], disputed=s["disputed"],
            assignable=assignable.get(item.workspace_id, ()),
            moves=triage_flow.TRANSITIONS.get(item.state, ()),
        ))
    return rows


def rows_by_id(session: Session, item_ids: Sequence[int]) -> dict[int, TriageRow]:
    if not item_ids:
        return {}
    records = session.execute(row_select().where(TriageItem.id.in_(item_ids))).all()
    return {row.id: row for row in build_rows(session, records)}


def triage_workspaces(session: Session, actor: Actor) -> list[tuple[int, str]]:
    stmt = scope_to_actor(select(Workspace.id, Workspace.name), actor, Workspace.id, Role.LEAD)
    return [(ws_id, name) for ws_id, name in session.execute(stmt.order_by(Workspace.name))]
