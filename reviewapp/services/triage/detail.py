"""One triage item's page: its row, every rating of its run, its history (SPEC 8)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from ...actors import Actor
from ...domain.fault_categories import FaultCategory, grouped
from ...domain.reasons import ReasonRow, label_of
from ...domain.suggest import (
    RunFacts,
    Suggestion,
    suggest_triage_category,
)
from ...domain.target_types import TARGET_TYPES, part_noun
from ...domain.triage_flow import EVENT_CATEGORISED
from ...domain.vocabulary import Registry
from ...errors import Forbidden
from ...models import (
    Case,
    Feedback,
    FeedbackEvent,
    Run,
    TargetType,
    ToolCall,
    User,
    VerdictDecision,
)
from ...queries import get_triage_item_for, on_earlier_version
from ..admin.settings import categories_of, time_zone_in
from ._rows import TriageRow, reasons_by_workspace, rows_by_id
from .history import ItemEvent, item_history


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
    earlier_version: bool = False  # given before the part's text changed (SPEC 10)


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
class DecisionEntry:
    """A lead's decision on the run's verdict (issue 16 adjudication), a record apart
    from the ratings: when (UTC), who, the verdict, the note."""

    at: datetime
    lead: str
    verdict: str
    note: str | None


@dataclass(frozen=True)
class TriageDetail:
    """Everything the item page shows: the queue row, the run (messages, steps, report
    loaded), every reviewer's ratings, the feedback history, the proposed triage
    category (``suggestion``: what the rules found; ``proposal``: the same when the
    workspace's categories hold it, else ``None``), the known categories (codes; with
    ``category_names`` their workspace labels), the run's case if there is one in the
    library (a withdrawn case is not: SPEC 7), the item's own history (``item_events``:
    state moves, assignments, automatic resolve / reopen, with their times), and the tools
    whose calls reviewers rated negative, (name, count) most first."""

    row: TriageRow
    run: Run
    ratings: list[RatingView]
    history: list[HistoryEntry]
    suggestion: Suggestion
    categories: tuple[str, ...]
    case: Case | None
    item_events: list[ItemEvent]
    disliked_tools: tuple[tuple[str, int], ...] = ()
    decisions: tuple[DecisionEntry, ...] = ()  # the run's verdict decisions, oldest first
    reasons: Registry[ReasonRow] | None = None  # the workspace's reasons (labels of saved codes)
    time_zone: str = "UTC"  # the IANA zone the page shows times in (the workspace's setting)
    category_names: Registry[FaultCategory] | None = None  # the workspace's categories (SPEC 7)

    @property
    def proposal(self) -> Suggestion | None:
        """The proposed category when the workspace's list holds it (SPEC 7: proposals
        come from the workspace's one vocabulary); ``None`` when the list dropped it:
        accepting it would be refused, so it is not offered."""
        allowed = self.category_names.codes() if self.category_names is not None else self.categories
        return self.suggestion if self.suggestion.value in allowed else None

    @property
    def offer_proposal(self) -> bool:
        """True when the page offers "Accept the proposal": there is one (``proposal``)
        and the item has no category yet (once a lead chose one, the proposal is only a
        hint: new-user walk)."""
        return self.proposal is not None and not self.row.fault_category

    @property
    def proposal_chosen(self) -> bool:
        """True when the item's category is the proposal (the hint says "chosen")."""
        return self.proposal is not None and self.proposal.value == self.row.fault_category

    @property
    def category_choices(self) -> tuple[tuple[str, str], ...]:
        """(code, label) of each of the workspace's categories, in its order."""
        if self.category_names is None:
            return tuple((code, code) for code in self.categories)
        return tuple((c.code, c.label) for c in self.category_names)

    @property
    def category_groups(self) -> tuple[tuple[str, tuple[FaultCategory, ...]], ...]:
        """The workspace's categories by kind for the page's select: (group label, rows)
        in ``fault_categories.GROUPS`` order (``domain.fault_categories.grouped``)."""
        if self.category_names is None:
            return (("", tuple(FaultCategory(code, code) for code in self.categories)),)
        return grouped(self.category_names)

    def category_listed(self, code: str | None) -> bool:
        """True when ``code`` is one of the workspace's categories (what saving accepts)."""
        return bool(code) and code in (self.category_names.codes() if self.category_names is not None
                                       else self.categories)

    def category_label(self, code: str | None) -> str:
        """How a category ``code`` reads on the page: the workspace's label for it, or the
        code itself when the list no longer holds it ("" for ``None``)."""
        if self.category_names is None:
            return code or ""
        return self.category_names.label_or_code(code)

    def reason_label(self, code: str) -> str:
        """How a saved reason ``code`` reads on the page: the workspace's label for it."""
        return label_of(self.reasons, code) if self.reasons is not None else code.replace("_", " ")


# The run's rows of each model a target type without a subject rates, which the type's
# ``part_label`` names (a type of another model fails at import until it is listed).
_ROWS_OF: dict[str, Callable[[Run], list[Any]]] = {
    "Message": lambda run: list(run.messages),
    "DiagnosticStep": lambda run: list(run.steps),
    "DiagnosticReport": lambda run: [run.report] if run.report is not None else [],
}
# How the item page names each subject of a type with one (a citation of a message, a
# tool call of the run): (run, the run's tool names by call id) -> ((target_id,
# subject_key), label) of every subject; every such type is listed (checked at import).
_SubjectLabels = Callable[[Run, Mapping[str, str]], Iterable[tuple[tuple[int, str], str]]]


def _citation_labels(run: Run, tool_names: Mapping[str, str]) -> Iterator[tuple[tuple[int, str], str]]:
    for message in run.messages:
        for citation in message.citations:
            cid = str(citation.get("id", ""))
            title = citation.get("title") or cid
            yield (message.id, cid), f"citation {cid}: {title}"


_SUBJECT_LABELS: dict[str, _SubjectLabels] = {
    TargetType.CITATION.value: _citation_labels,
    TargetType.TOOL_CALL.value: lambda run, tool_names: (
        ((run.id, call_id), f"tool call {name} ({call_id})") for call_id, name in tool_names.items()),
}


def _check_labels() -> None:
    """Every target type is named: a type with a subject by ``_SUBJECT_LABELS``, any
    other by its ``part_label`` over ``_ROWS_OF`` its model. Raises ``ValueError``."""
    Registry("subject type", (row for row in TARGET_TYPES if row.subject is not None)).check_covered(
        _SUBJECT_LABELS, "triage item labels")
    unnamed = [row.code for row in TARGET_TYPES if row.subject is None
               and (row.part_label is None or row.model not in _ROWS_OF)]
    if unnamed:
        raise ValueError(f"triage item labels: no part_label or _ROWS_OF model for {unnamed}")


_check_labels()


def _target_labels(run: Run, tool_names: Mapping[str, str]) -> dict[tuple[str, int, str], str]:
    """How the item page names each rateable part of ``run``, by (target_type,
    target_id, subject_key); ``tool_names`` maps the run's call ids to tool names."""
    labels: dict[tuple[str, int, str], str] = {}
    for row in TARGET_TYPES:
        if row.subject is not None:
            labels.update(((row.code, *key), label)
                          for key, label in _SUBJECT_LABELS[row.code](run, tool_names))
        else:
            noun = part_noun(row.code, run.kind)
            labels.update(((row.code, part.id, ""), row.part_label.format(part=part, noun=noun))
                          for part in _ROWS_OF[row.model](run))
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
    row = rows_by_id(session, [item.id])[item.id]
    run = session.scalars(
        select(Run).where(Run.id == item.run_pk).options(
            selectinload(Run.messages), selectinload(Run.steps), selectinload(Run.report)
        )
    ).one()
    tool_names = dict(session.execute(
        select(ToolCall.id, ToolCall.tool_name)
        .where(ToolCall.run_pk == run.id, ToolCall.workspace_id == run.workspace_id)).all())
    labels = _target_labels(run, tool_names)
    ratings = _ratings(session, run.id, labels)
    history = _history(session, run.id, labels)
    facts = _facts(run, ratings)
    case = session.scalars(
        select(Case).where(Case.workspace_id == run.workspace_id, Case.diagnosis_id == run.run_id,
                           Case.withdrawn_at.is_(None))
    ).one_or_none()
    decisions = _decisions(session, run.id)
    categories = categories_of(session, item.workspace_id)
    return TriageDetail(row, run, ratings, history, suggest_triage_category(facts),
                        categories.codes(), case, _item_events(session, item.id, categories),
                        _disliked_tools(ratings, tool_names), decisions,
                        reasons_by_workspace(session, [item.workspace_id])[item.workspace_id],
                        time_zone_in(session, item.workspace_id), categories)


def _item_events(session: Session, item_id: int, categories: Registry[FaultCategory]) -> list[ItemEvent]:
    """The item's history with each category change naming the category as the workspace's
    list labels it (the code when the list no longer holds it; "cleared" as stored)."""
    return [replace(e, detail=categories.label_or_code(e.detail)) if e.action == EVENT_CATEGORISED else e
            for e in item_history(session, item_id)]


def _ratings(session: Session, run_pk: int, labels: Mapping[tuple[str, int, str], str]
             ) -> list[RatingView]:
    """Every reviewer's rating of the run, by target then reviewer, each part labelled."""
    return [
        RatingView(
            id=f.id, reviewer=username, target_type=f.target_type,
            target_label=_label(labels, f.target_type, f.target_id, f.subject_key),
            subject_key=f.subject_key, rating=f.rating, reason=f.reason, comment=f.comment,
            correction=f.correction, created_at=f.created_at, updated_at=f.updated_at,
            earlier_version=bool(earlier),
        )
        for f, username, earlier in session.execute(
            select(Feedback, User.username, on_earlier_version(Feedback))
            .join(User, User.id == Feedback.author_id)
            .where(Feedback.run_pk == run_pk)
            .order_by(Feedback.target_type, Feedback.target_id, Feedback.subject_key,
                      User.username)
        )
    ]


def _history(session: Session, run_pk: int, labels: Mapping[tuple[str, int, str], str]
             ) -> list[HistoryEntry]:
    """The run's feedback history, oldest first (a deleted user's entries kept as such)."""
    return [
        HistoryEntry(
            at=e.created_at, actor=username or "(deleted user)", action=e.action,
            target_label=_label(labels, e.target_type, e.target_id, e.subject_key),
            before=e.before, after=e.after,
        )
        for e, username in session.execute(
            select(FeedbackEvent, User.username)
            .outerjoin(User, User.id == FeedbackEvent.actor_id)
            .where(FeedbackEvent.run_pk == run_pk)
            .order_by(FeedbackEvent.created_at, FeedbackEvent.id)
        )
    ]


def _facts(run: Run, ratings: list[RatingView]) -> RunFacts:
    """What the triage category suggestion reads of the run: status, calls, evidence
    factors, the verifier's verdict and the negative ratings' reasons."""
    factors = [f.get("name", "") for f in
               ((run.self_evaluation or {}).get("rule_evaluation") or {}).get("factors") or []
               if isinstance(f, Mapping)]
    return RunFacts(
        status=run.status, tool_call_count=run.tool_call_count,
        failed_tool_call_count=run.failed_tool_call_count, evidence_factors=factors,
        verifier_verdict=run.verifier_verdict,
        reasons=[r.reason for r in ratings if r.rating == "negative" and r.reason],
    )


def _decisions(session: Session, run_pk: int) -> tuple[DecisionEntry, ...]:
    """The lead's verdict decisions on the run, in order."""
    return tuple(DecisionEntry(d.created_at, username or "(deleted user)", d.verdict, d.note)
                 for d, username in session.execute(
                     select(VerdictDecision, User.username)
                     .outerjoin(User, User.id == VerdictDecision.decided_by)
                     .where(VerdictDecision.run_pk == run_pk)
                     .order_by(VerdictDecision.id)))


def _disliked_tools(ratings: list[RatingView], tool_names: Mapping[str, str]
                    ) -> tuple[tuple[str, int], ...]:
    """(tool name, negative ratings of its calls) of the run, most first (issue 19)."""
    counts: dict[str, int] = {}
    for r in ratings:
        if r.target_type == TargetType.TOOL_CALL.value and r.rating == "negative":
            name = tool_names.get(r.subject_key, r.subject_key)
            counts[name] = counts.get(name, 0) + 1
    return tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
