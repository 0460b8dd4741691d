"""Adjudication (issue 16): the lead's list of disputed runs and the lead's decision.

A run is **disputed** when the queue that governs its verdict (``queue_governing``:
a queue with N = ``reviewers_per_run`` > 1 holding the run) has at least N answer-level
ratings of it by those who count for it (``queue_completion.counted_rating``: in a
queue that names its reviewers, theirs; the sides shown are theirs) and ``domain.consensus`` finds no verdict in them (a tie, or any split
under the queue's ``any_split`` rule), and no lead has decided it yet.

A **decision** (``verdict_decision``) is a record of its own, not a rating: who decided,
when, the verdict and a note. It sets the run's verdict through the one code path every
verdict takes (``verdict.apply_verdict``: a useful run becomes a case, a not useful one
opens its triage item) and stands from then on: later ratings no longer move the verdict
(``verdict.settle_from_ratings``). Decisions show in the triage item's history and the
adjudication page, and are exported (``exports.export_decisions``).

Leads and admins of the run's workspace only; a missing and a foreign run answer the same
``Forbidden`` (SPEC 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from operator import itemgetter
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from ..actors import Actor, Role
from ..domain.consensus import DISPUTE_RULES, DISPUTED, consensus
from ..domain.feedback import COMMENT_MAX, VERDICTS, InvalidFeedback, check_choice, clean_text
from ..domain.reasons import ReasonRow, label_of
from ..domain.verdicts import VERDICTS as VERDICT_ROWS
from ..domain.vocabulary import Registry
from ..errors import Conflict, Forbidden, ValidationFailed
from ..models import (
    Feedback,
    QueueItem,
    ReviewQueue,
    Run,
    ToolCall,
    User,
    VerdictDecision,
    Workspace,
)
from ..queries import capped_count, get_run_for, lock_run, on_earlier_version
from .agreement import lead_workspaces
from .answer import answer_rating_condition
from .audit import record_event
from .feedback.verdict import (
    answer_ratings_of,
    apply_verdict,
    governing_queue,
    latest_decision,
)
from .keyset import SortKey, SortOrder
from .params import id_value, workspace_param
from .queue_completion import counted_rating
from .queue_governing import disputes
from .secret_scan import redact_typed
from .triage._rows import reasons_by_workspace
from .triage.detail import RatingView, _label, _target_labels

NOTE_MAX = COMMENT_MAX
PAGE_MAX = 50
COUNT_CAP = 10_000  # the list counts disputes up to this ("10,000+"), as the runs list does
# The list's order: the oldest queue item first (one governing item per run, its id unique).
# A page's cursor holds the item id of its last dispute (its rows: run pk, queue, result, item id).
DISPUTE_ORDER = SortOrder("disputed", "Oldest item first", (
    SortKey(QueueItem.id, False, itemgetter(3)),))


@dataclass(frozen=True)
class ReviewerColumn:
    """One reviewer's judgement of a disputed run, side by side with the others':
    ``answer`` their answer-level rating (reason, comment, correction), ``others``
    their ratings of the run's other parts."""

    reviewer: str
    answer: RatingView | None
    others: list[RatingView]


@dataclass(frozen=True)
class DisputedItem:
    """A disputed run: the run (messages, report loaded), its governing ``queue``, how
    many ratings of each kind, one column per reviewer (by name), and ``my_rating``: the
    viewing lead's own answer rating (positive | negative) when they are one side of it."""

    run: Run
    workspace: str
    queue_id: int
    queue_name: str
    needed: int
    rule_label: str
    positive: int
    negative: int
    columns: list[ReviewerColumn]
    reasons: Registry[ReasonRow] | None = None  # the workspace's reasons (labels of codes)
    my_rating: str | None = None  # the viewing lead's own answer rating: they are a side

    def reason_label(self, code: str) -> str:
        """How a saved reason ``code`` reads: the workspace's label for it (as on the
        thumbs and the triage pages, ``domain.reasons.label_of``)."""
        return label_of(self.reasons, code) if self.reasons is not None else code.replace("_", " ")


@dataclass(frozen=True)
class AdjudicationFilters:
    """``workspace_id`` / ``queue_id``: narrow the list (``None``: all the actor leads)."""

    workspace_id: int | None = None
    queue_id: int | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> AdjudicationFilters:
        """Parse query-string values. Raises ``ValidationFailed`` naming ``workspace``
        or ``queue``."""
        return cls(workspace_param(params), id_value(params.get("queue"), "queue",
                                                     "must be a queue id"))

    def as_params(self) -> dict[str, str]:
        """The query-string form (blank values left out); ``from_params`` reads it back."""
        params = {"workspace": self.workspace_id, "queue": self.queue_id}
        return {k: str(v) for k, v in params.items() if v is not None}


@dataclass(frozen=True)
class AdjudicationPage:
    """The lead's list: filters, (id, name) workspaces and queues (N > 1) to filter by,
    one page of the disputed items (``DISPUTE_ORDER``, at most ``PAGE_MAX``) and how many
    there are in all (``total``, at most ``COUNT_CAP``: ``total_capped`` when more), the latest decisions given (newest first, at most ``PAGE_MAX``);
    ``offset`` disputes come before this page, ``next_cursor`` opens the next one
    (``None``: the last), ``has_previous`` / ``previous_cursor`` the one before
    (``None`` with ``has_previous``: the first page)."""

    filters: AdjudicationFilters
    workspaces: list[tuple[int, str]]
    queues: list[tuple[int, str]]
    items: list[DisputedItem]
    total: int
    decided: list[DecisionView] = field(default_factory=list)
    offset: int = 0
    next_cursor: str | None = None
    has_previous: bool = False
    previous_cursor: str | None = None
    total_capped: bool = False


@dataclass(frozen=True)
class DecisionView:
    """A decision as shown and exported: when (UTC), by whom, the verdict, the note, the
    run (pk and agent id) and the queue's name (``None`` once deleted); ``my_rating``: the
    viewing lead's own answer rating of the run when they are one side of it (as
    ``DisputedItem.my_rating``, for the "Decide again" form; ``None`` without a viewer)."""

    id: int
    at: datetime
    lead: str
    verdict: str
    note: str | None
    run_pk: int
    run_id: str
    queue: str | None
    my_rating: str | None = None


@dataclass(frozen=True)
class DecisionResult:
    """What ``decide`` recorded: the decision's id, the run's verdict and its case id (a
    useful run that could be promoted, SPEC 7), else ``None``; ``own_rating``: the lead's
    own answer rating of the run (positive | negative) when they were one side of it."""

    decision_id: int
    run_pk: int
    verdict: str
    case_id: str | None
    own_rating: str | None = None


def disputed(session: Session, actor: Actor, filters: AdjudicationFilters | None = None,
             cursor: str | None = None, limit: int = PAGE_MAX) -> AdjudicationPage:
    """The disputed runs of the workspaces the actor leads (module docstring): the page
    of at most ``limit`` after ``cursor`` (``None``: the first) in ``DISPUTE_ORDER``.
    Raises ``ValidationFailed`` (``cursor``) for a cursor that is malformed or made for
    another list (``keyset``'s one check), ``Forbidden`` when the actor leads none or
    names a workspace or queue they do not lead."""
    filters = filters or AdjudicationFilters()
    after = DISPUTE_ORDER.position(cursor)[0] if cursor else 0
    workspaces, ws_ids = lead_workspaces(session, actor, filters.workspace_id)
    queues = [(qid, name) for qid, name in session.execute(
        select(ReviewQueue.id, ReviewQueue.name)
        .where(ReviewQueue.workspace_id.in_(ws_ids), ReviewQueue.reviewers_per_run > 1)
        .order_by(ReviewQueue.name, ReviewQueue.id))]
    if filters.queue_id is not None and filters.queue_id not in {q for q, _ in queues}:
        raise Forbidden()
    found = disputes(ws_ids, filters.queue_id)
    total, capped = capped_count(session, found, COUNT_CAP)
    offset = capped_count(session, found.where(found.selected_columns.item_id <= after),
                          COUNT_CAP)[0] if after else 0
    rows = session.execute(found.where(found.selected_columns.item_id > after)
                           .order_by(found.selected_columns.item_id).limit(limit + 1)).all()
    before = session.scalar(found.with_only_columns(found.selected_columns.item_id)
                            .where(found.selected_columns.item_id <= after)
                            .order_by(found.selected_columns.item_id.desc())
                            .offset(limit).limit(1)) if offset > limit else None
    queue_of = {q.id: q for q in session.scalars(
        select(ReviewQueue).where(ReviewQueue.id.in_({r.queue_id for r in rows})))}
    answers = _answer_ratings(session, [r.item_id for r in rows[:limit]])
    shown = [(r.run_pk, queue_of[r.queue_id], consensus(
        [x for _, x in answers.get(r.run_pk, [])], queue_of[r.queue_id].reviewers_per_run,
        queue_of[r.queue_id].dispute_rule), r.item_id) for r in rows[:limit]]
    return AdjudicationPage(
        filters, workspaces, queues, _items(session, shown, answers, actor.user_id), total,
        decisions(session, ws_ids, PAGE_MAX, filters.queue_id, viewer=actor.user_id), offset,
        DISPUTE_ORDER.encode(shown[-1]) if len(rows) > limit else None, offset > 0,
        DISPUTE_ORDER.encode((None, None, None, before)) if before is not None else None,
        capped)


def _answer_ratings(session: Session, item_ids: list[int]) -> dict[int, list[tuple[int, str]]]:
    """``{run pk: [(feedback id, rating)]}``: the answer-level ratings of each governing
    item's run that count for its queue (``queue_completion.counted_rating``: a named
    queue's own reviewers; someone else's rating is no side of the dispute)."""
    found: dict[int, list[tuple[int, str]]] = {}
    if not item_ids:
        return found
    for fid, run_pk, rating in session.execute(
            select(Feedback.id, Feedback.run_pk, Feedback.rating)
            .join(Run, Run.id == Feedback.run_pk)
            .join(QueueItem, QueueItem.run_pk == Feedback.run_pk)
            .join(ReviewQueue, ReviewQueue.id == QueueItem.queue_id)
            .where(QueueItem.id.in_(item_ids), answer_rating_condition(),
                   counted_rating(ReviewQueue.id, ReviewQueue.reviewers, Feedback.run_pk,
                                  Feedback.author_id))):
        found.setdefault(run_pk, []).append((fid, rating))
    return found


def _items(session: Session, shown: list[tuple[int, ReviewQueue, Any, int]],
           answers: Mapping[int, list[tuple[int, str]]], viewer: int | None) -> list[DisputedItem]:
    """The side-by-side view of each shown dispute (a fixed number of queries);
    ``viewer``: the user whose own answer rating each item names."""
    pks = [pk for pk, _, _, _ in shown]
    if not pks:
        return []
    runs = {run.id: run for run in session.scalars(
        select(Run).where(Run.id.in_(pks)).options(
            selectinload(Run.messages), selectinload(Run.steps), selectinload(Run.report)))}
    names = dict(session.execute(select(Workspace.id, Workspace.name).where(
        Workspace.id.in_({run.workspace_id for run in runs.values()}))).all())
    reasons = reasons_by_workspace(session, {run.workspace_id for run in runs.values()})
    tools: dict[int, dict[str, str]] = {}
    for run_pk, call_id, tool in session.execute(
            select(ToolCall.run_pk, ToolCall.id, ToolCall.tool_name)
            .where(ToolCall.run_pk.in_(pks))):
        tools.setdefault(run_pk, {})[call_id] = tool
    ratings: dict[int, list[tuple[Feedback, str, bool]]] = {}
    for fb, username, earlier in session.execute(
            select(Feedback, User.username, on_earlier_version(Feedback))
            .join(User, User.id == Feedback.author_id)
            .where(Feedback.run_pk.in_(pks))
            .order_by(User.username, Feedback.target_type, Feedback.target_id,
                      Feedback.subject_key)):
        ratings.setdefault(fb.run_pk, []).append((fb, username, bool(earlier)))
    items = []
    for run_pk, queue, result, _ in shown:
        run = runs[run_pk]
        labels = _target_labels(run, tools.get(run_pk, {}))
        answer_ids = {fid for fid, _ in answers.get(run_pk, [])}
        columns: dict[str, ReviewerColumn] = {}
        for fb, username, earlier in ratings.get(run_pk, []):
            view = RatingView(
                id=fb.id, reviewer=username, target_type=fb.target_type,
                target_label=_label(labels, fb.target_type, fb.target_id, fb.subject_key),
                subject_key=fb.subject_key, rating=fb.rating, reason=fb.reason,
                comment=fb.comment, correction=fb.correction, created_at=fb.created_at,
                updated_at=fb.updated_at, earlier_version=earlier)
            column = columns.setdefault(username, ReviewerColumn(username, None, []))
            if fb.id in answer_ids:
                columns[username] = ReviewerColumn(username, view, column.others)
            else:
                column.others.append(view)
        items.append(DisputedItem(
            run=run, workspace=names.get(run.workspace_id, ""), queue_id=queue.id,
            queue_name=queue.name, needed=queue.reviewers_per_run,
            rule_label=DISPUTE_RULES.label(queue.dispute_rule), positive=result.positive,
            negative=result.negative, columns=sorted((c for c in columns.values() if c.answer is not None),
                           key=lambda c: c.reviewer),
            reasons=reasons.get(run.workspace_id), my_rating=next(
                (fb.rating for fb, _, _ in ratings.get(run_pk, [])
                 if fb.author_id == viewer and fb.id in answer_ids), None)))
    return items


def decide(session: Session, actor: Actor, run_pk: Any, verdict: Any, note: Any = None,
           expected_decision: Any = None) -> DecisionResult:
    """Record a lead's decision on run ``run_pk`` and set its verdict; commit.

    ``verdict``: useful | not_useful (``ValidationFailed`` naming ``verdict``); ``note``:
    optional text up to ``NOTE_MAX`` characters, redacted like every typed text
    (``ValidationFailed`` naming ``note``). The run must be in a queue with more than one
    reviewer per run (``ValidationFailed`` naming ``run``) of a workspace the actor leads
    (``Forbidden`` otherwise, and for a missing run), and disputed under that queue's
    rule or already decided (``ValidationFailed`` naming ``run``: "is not disputed").
    ``expected_decision``: the id of the run's latest decision the lead saw (``None`` or
    "": none yet); any other latest decision (a stale tab, another lead) raises
    ``Conflict`` with the current decision in ``details`` (verdict, lead, note,
    updated_at UTC ISO) and records nothing — deciding again means naming the decision
    being replaced (``ValidationFailed`` naming ``decision`` for a value that is no id). The verdict takes the one path of
    every verdict (``apply_verdict``: case for useful, triage item for not useful; a case
    made now has ``created_by`` = the lead's username) and the decision stands against
    later ratings.

    A lead whose answer rating counts for the queue (``queue_completion.counted_rating``)
    is one side of the dispute (a rating that does not count is no side). SPEC 6 gives a tie to
    "a lead's adjudication" without saying which lead, so they may decide it; the page
    warns them (``DisputedItem.my_rating``) and the decision is recorded in the
    workspace's audit log (``decision.own_rating``: verdict and their rating), in the
    same transaction."""
    pk = id_value(run_pk, "run", "must be a run id")
    run = get_run_for(session, actor, pk, Role.LEAD) if pk is not None else None
    if run is None or not actor.is_user:
        raise Forbidden()
    try:
        chosen = check_choice(verdict, "verdict", VERDICTS)
        text = redact_typed(clean_text(note, "note", NOTE_MAX), NOTE_MAX)
    except InvalidFeedback as invalid:
        raise ValidationFailed(invalid.field, invalid.message) from None
    queue = governing_queue(session, run)
    if queue is None:
        raise ValidationFailed("run", "is in no review queue with more than one reviewer per run")
    expected = _expected_decision(expected_decision)
    lock_run(session, run.id)  # one decider at a time (PostgreSQL; SQLite writes one by one)
    latest = latest_decision(session, run.id)
    if (latest.id if latest is not None else None) != expected:
        raise _decided_meanwhile(session, latest)
    if latest is None and consensus(
            answer_ratings_of(session, run, queue), queue.reviewers_per_run,
            queue.dispute_rule).outcome != DISPUTED:
        raise ValidationFailed("run", f"is not disputed: the reviewers of queue “{queue.name}” "
                                      "have not disagreed on it, so their ratings set its verdict")
    decision = VerdictDecision(workspace_id=run.workspace_id, run_pk=run.id, queue_id=queue.id,
                               decided_by=actor.user_id, verdict=chosen, note=text)
    session.add(decision)
    lead = session.scalar(select(User.username).where(User.id == actor.user_id))
    case_id = apply_verdict(session, run, chosen, author=lead or actor.label)
    own = _audit_a_side(session, actor, run, queue, chosen)
    session.flush()
    result = DecisionResult(decision.id, run.id, chosen, case_id, own)
    session.commit()
    return result


def _audit_a_side(session: Session, actor: Actor, run: Run, queue: ReviewQueue,
                  verdict: str) -> str | None:
    """The deciding lead's own answer rating of the run (positive | negative) when it
    counts for the governing ``queue`` (one side of the dispute), if any; when there is
    one, the audit event ``decision.own_rating`` is added to the caller's transaction
    (the verdict and that rating)."""
    own = session.scalar(
        select(Feedback.rating).join(Run, Run.id == Feedback.run_pk)
        .where(Feedback.run_pk == run.id, Feedback.author_id == actor.user_id,
               answer_rating_condition(),
               counted_rating(queue.id, queue.reviewers, Feedback.run_pk, Feedback.author_id))
        .limit(1))
    if own is not None:
        record_event(session, actor, workspace_id=run.workspace_id, action="decision.own_rating",
                     target_type="run", target_id=run.run_id, target_label=run.run_id,
                     after={"verdict": verdict, "own_rating": own})
    return own


def _expected_decision(value: Any) -> int | None:
    """The decision id a decide form carries: ``None`` for none yet."""
    if value is None or (isinstance(value, str) and value.strip() in ("", "none")):
        return None
    return id_value(value, "decision", "must be the id of the run's latest decision, or empty")


def _decided_meanwhile(session: Session, latest: VerdictDecision | None) -> Conflict:
    """The ``Conflict`` of a decision made on a stale page: the current decision."""
    if latest is None:
        return Conflict("The decision this page showed is gone; nothing was saved. Reload "
                        "the page to see the run as it is now.", details={"verdict": None})
    lead = session.scalar(select(User.username).where(User.id == latest.decided_by))
    label = VERDICT_ROWS.label(latest.verdict)
    return Conflict(
        f"This run was decided meanwhile: {label.lower()}, by {lead or '(deleted user)'}. "
        "Nothing was saved; reload the page to see the current decision and decide again "
        "if you mean to.",
        details={"verdict": label, "lead": lead or "(deleted user)", "note": latest.note,
                 "updated_at": latest.created_at.isoformat()})


def decisions(session: Session, ws_ids: list[int], limit: int | None = None,
              queue_id: int | None = None, run_pk: int | None = None,
              viewer: int | None = None) -> list[DecisionView]:
    """Decisions of the workspaces ``ws_ids`` (optionally of one queue or one run),
    newest first; with ``viewer`` (a user id) each names that user's own answer rating of
    its run (``my_rating``, one more query). No access check: the caller resolved
    ``ws_ids`` / the run through the actor."""
    stmt = (select(VerdictDecision, User.username, Run.run_id, ReviewQueue.name)
            .join(Run, Run.id == VerdictDecision.run_pk)
            .outerjoin(User, User.id == VerdictDecision.decided_by)
            .outerjoin(ReviewQueue, ReviewQueue.id == VerdictDecision.queue_id)
            .where(VerdictDecision.workspace_id.in_(ws_ids))
            .order_by(VerdictDecision.created_at.desc(), VerdictDecision.id.desc()))
    if queue_id is not None:
        stmt = stmt.where(VerdictDecision.queue_id == queue_id)
    if run_pk is not None:
        stmt = stmt.where(VerdictDecision.run_pk == run_pk)
    if limit is not None:
        stmt = stmt.limit(limit)
    rows = session.execute(stmt).all()
    mine = _own_answer_ratings(session, viewer, {d.run_pk: d.queue_id for d, _, _, _ in rows})
    return [DecisionView(d.id, d.created_at, username or "(deleted user)", d.verdict, d.note,
                         d.run_pk, run_id, queue, mine.get(d.run_pk))
            for d, username, run_id, queue in rows]


def _own_answer_ratings(session: Session, user_id: int | None, queue_of: Mapping[int, int | None]
                        ) -> dict[int, str]:
    """{run pk: the user's answer-level rating of it} for the runs of ``queue_of`` ({run
    pk: the queue its decision was for, or ``None``}) they rated, where that rating counts
    for the queue (``counted_rating``: a queue with named reviewers counts theirs only)."""
    if user_id is None or not queue_of:
        return {}
    stmt = (select(Feedback.run_pk, Feedback.rating).join(Run, Run.id == Feedback.run_pk)
            .where(Feedback.run_pk.in_(queue_of), Feedback.author_id == user_id,
                   answer_rating_condition()))
    found: dict[int, str] = {}
    queue_ids = {q for q in queue_of.values() if q is not None}
    counted: set[tuple[int, int]] = set()
    if queue_ids:
        counted = set(session.execute(
            select(Feedback.run_pk, ReviewQueue.id).select_from(Feedback)
            .join(Run, Run.id == Feedback.run_pk).join(ReviewQueue, ReviewQueue.id.in_(queue_ids))
            .where(Feedback.run_pk.in_(queue_of), Feedback.author_id == user_id,
                   answer_rating_condition(),
                   counted_rating(ReviewQueue.id, ReviewQueue.reviewers, Feedback.run_pk,
                                  Feedback.author_id))).all())
    for run_pk, rating in session.execute(stmt).all():
        queue_id = queue_of[run_pk]
        if queue_id is None or (run_pk, queue_id) in counted:
            found[run_pk] = rating
    return found
