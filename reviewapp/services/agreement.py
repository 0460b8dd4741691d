"""Reviewer agreement (issue 16 "Agreement"): how far the reviewers of a workspace agree
on run answers, over a date range.

An *item* is one run's answer-level target (SPEC 6.1 / 6.2, ``answer_level`` rows of
``domain/target_types.py``): a chat run's answer message (its last assistant message with
text, subject ""), an AIOps run's report — or its answer message when it has no report,
as the feedback service decides (``services/feedback/_targets.py``). Each reviewer's
current rating of it (``user_feedback``, positive / negative) is one rating; ratings of
citations, steps and earlier messages are not answer ratings and do not count.

The figures (``domain/agreement.summarise``): Cohen's κ per pair of reviewers with at
least ``min_shared`` shared items, Krippendorff's α (nominal) over all reviewers with
missing ratings, each reviewer's agreement with the majority of the item's other
reviewers, and how many items each rests on.

Access as the dashboard: the workspaces where the actor is lead or admin, optionally one
of them; a run's day is its ``started_at`` or, without one, the day it was stored (UTC),
the dashboard's rule.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, TypeVar

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..domain.agreement import (
    AgreementSummary,
    DecisionAgreement,
    decision_agreement,
    summarise,
)
from ..domain.verdicts import VERDICTS
from ..errors import Forbidden
from ..models import (
    Feedback,
    QueueItem,
    ReviewQueue,
    Run,
    User,
    VerdictDecision,
    Workspace,
)
from ..queries import scope_to_actor
from . import rollups
from .access import workspace_id_of
from .answer import answer_rating_condition
from .params import date_range_params, day_range, id_value, int_param, workspace_ref
from .queue_completion import counted_rating

DEFAULT_MIN_SHARED = 5
MAX_MIN_SHARED = 10_000
EXPORT_COLUMNS = ("figure", "reviewer", "other_reviewer", "items", "agreed", "value")


@dataclass(frozen=True)
class AgreementFilters:
    """``workspace_id`` (``None``: every workspace the actor leads), inclusive UTC days,
    ``min_shared``: the fewest shared items for a pair's κ (1 .. 10,000), and
    ``queue_id``: only the runs of that review queue (``None``: all runs)."""

    workspace_id: int | None = None
    date_from: date | None = None
    date_to: date | None = None
    min_shared: int = DEFAULT_MIN_SHARED
    queue_id: int | None = None
    workspace_slug: str | None = None  # ``?workspace=demo``; ``build`` sets its id

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> AgreementFilters:
        """Parse query-string values (the workspace an id or a short name,
        ``params.workspace_ref``). Raises ``ValidationFailed`` naming the field
        (``workspace``, ``date_from``, ``date_to``, ``min_shared``, ``queue``)."""
        min_shared = int_param(params, "min_shared", 1, MAX_MIN_SHARED)
        workspace = workspace_ref(params)
        return cls(workspace if isinstance(workspace, int) else None, *date_range_params(params),
                   min_shared=DEFAULT_MIN_SHARED if min_shared is None else min_shared,
                   queue_id=id_value(params.get("queue"), "queue", "must be a queue id"),
                   workspace_slug=workspace if isinstance(workspace, str) else None)

    def as_params(self) -> dict[str, str]:
        """The query-string form (blank values left out), for links and exports."""
        params = {"workspace": self.workspace_id or self.workspace_slug, "date_from": self.date_from,
                  "date_to": self.date_to,
                  "min_shared": None if self.min_shared == DEFAULT_MIN_SHARED else self.min_shared,
                  "queue": self.queue_id}
        return {k: str(v) for k, v in params.items() if v is not None}


@dataclass(frozen=True)
class AgreementReport:
    """The page: the filters, the (id, name) workspaces the actor leads, the figures,
    the (id, name) review queues of those workspaces (to filter by) and each reviewer's
    agreement with the leads' decisions (adjudication, issue 16)."""

    filters: AgreementFilters
    workspaces: list[tuple[int, str]]
    summary: AgreementSummary
    queues: list[tuple[int, str]] = field(default_factory=list)
    decisions: list[DecisionAgreement] = field(default_factory=list)


def lead_workspaces(session: Session, actor: Actor, workspace_id: int | None
                    ) -> tuple[list[tuple[int, str]], list[int]]:
    """((id, name) of every workspace the actor leads, ids in scope). Raises ``Forbidden``
    when the actor leads none or ``workspace_id`` is not one of them (the dashboard's
    rule: a foreign workspace and a missing one answer alike)."""
    workspaces = [(i, n) for i, n in session.execute(
        scope_to_actor(select(Workspace.id, Workspace.name), actor, Workspace.id, Role.LEAD)
        .order_by(Workspace.name))]
    allowed = {i for i, _ in workspaces}
    if not allowed or (workspace_id is not None and workspace_id not in allowed):
        raise Forbidden()
    return workspaces, [workspace_id] if workspace_id is not None else sorted(allowed)


F = TypeVar("F")  # AgreementFilters, alignment.AlignmentFilters


def with_workspace_id(session: Session, filters: F) -> F:
    """``filters`` (agreement or alignment) with the id of the workspace named by its short
    name (``workspace_slug``; none such: 0, which ``lead_workspaces`` refuses as any
    workspace the actor does not lead)."""
    if filters.workspace_slug and filters.workspace_id is None:
        return replace(filters, workspace_id=workspace_id_of(session, filters.workspace_slug))
    return filters


def run_time_conditions(ws_ids: list[int], date_from: date | None, date_to: date | None
                        ) -> list[Any]:
    """SQL conditions: the run is in ``ws_ids`` and its day (``started_at``, else
    ``created_at``; UTC) lies in the inclusive range."""
    run_time = rollups.run_time()  # the one day rule (the dashboard's)
    conds: list[Any] = [Run.workspace_id.in_(ws_ids)]
    start, end = day_range(date_from, date_to)
    if start is not None:
        conds.append(run_time >= start)
    if end is not None:
        conds.append(run_time < end)
    return conds


def answer_ratings(session: Session, ws_ids: list[int], date_from: date | None = None,
                   date_to: date | None = None, queue_id: int | None = None
                   ) -> dict[int, dict[str, str]]:
    """``{run id: {username: "positive" | "negative"}}``: the current answer-level
    ratings of the runs of ``ws_ids`` in the date range (and in review queue
    ``queue_id`` when given: only the ratings that count for it,
    ``queue_completion.counted_rating`` — in a queue that names its reviewers, theirs). No access check: the caller resolved ``ws_ids`` (and the
    queue) through the actor (``lead_workspaces``)."""
    # A queue's figures: its runs, rated by those who count for it (a named queue's own
    # reviewers, ``queue_completion.counted_rating``).
    in_queue = ([exists().where(QueueItem.queue_id == queue_id, QueueItem.run_pk == Run.id,
                                ReviewQueue.id == QueueItem.queue_id,
                                counted_rating(ReviewQueue.id, ReviewQueue.reviewers,
                                               Feedback.run_pk, Feedback.author_id))]
                if queue_id is not None else [])
    # On the session's connection: plain rows, no ORM result processing (100,000 ratings).
    rows = session.connection().execute(
        select(Feedback.run_pk, User.username, Feedback.rating)
        .join(Run, Run.id == Feedback.run_pk)
        .join(User, User.id == Feedback.author_id)
        # The rating's own workspace column too: the database can start from the ratings
        # (ix_user_feedback_workspace_created) instead of every run of the workspace.
        .where(Feedback.workspace_id.in_(ws_ids),
               *run_time_conditions(ws_ids, date_from, date_to), answer_rating_condition(),
               *in_queue)
    )
    ratings: dict[int, dict[str, str]] = {}
    for run_pk, username, rating in rows:
        ratings.setdefault(run_pk, {})[username] = rating
    return ratings


def build(session: Session, actor: Actor, filters: AgreementFilters | None = None
          ) -> AgreementReport:
    """The agreement figures for ``filters``. Raises ``Forbidden`` when the actor leads
    no workspace or names one they do not lead."""
    filters = with_workspace_id(session, filters or AgreementFilters())
    workspaces, ws_ids = lead_workspaces(session, actor, filters.workspace_id)
    queues = [(qid, name) for qid, name in session.execute(
        select(ReviewQueue.id, ReviewQueue.name).where(ReviewQueue.workspace_id.in_(ws_ids))
        .order_by(ReviewQueue.name, ReviewQueue.id))]
    if filters.queue_id is not None and filters.queue_id not in {q for q, _ in queues}:
        raise Forbidden()  # a queue of a workspace the actor does not lead, or none
    ratings = answer_ratings(session, ws_ids, filters.date_from, filters.date_to,
                             filters.queue_id)
    return AgreementReport(filters, workspaces, summarise(ratings, filters.min_shared), queues,
                           decision_agreement(ratings, latest_decisions(session, ws_ids),
                                              {row.code: row.rating for row in VERDICTS}))


def latest_decisions(session: Session, ws_ids: list[int]) -> dict[int, str]:
    """``{run id: verdict}``: the latest lead decision of each decided run of ``ws_ids``
    (adjudication, issue 16; one query, decisions are few). No access check."""
    found: dict[int, str] = {}
    for run_pk, verdict in session.execute(
            select(VerdictDecision.run_pk, VerdictDecision.verdict)
            .where(VerdictDecision.workspace_id.in_(ws_ids)).order_by(VerdictDecision.id)):
        found[run_pk] = verdict  # ordered by id: a run's latest decision wins
    return found


def export_rows(report: AgreementReport) -> Iterator[dict[str, Any]]:
    """The figures as rows of ``EXPORT_COLUMNS`` (CSV / JSONL): one ``alpha`` row (items =
    items rated by two or more), one ``kappa`` row per pair of reviewers (value empty
    below the minimum of shared items or when undefined), one ``majority`` row per
    reviewer (items = items where the others had a majority), one ``decision`` row per
    reviewer who rated a decided item (items = those items). Values are fractions."""
    s = report.summary
    yield {"figure": "alpha", "reviewer": None, "other_reviewer": None,
           "items": s.multi_rated, "agreed": None, "value": s.alpha}
    for p in s.pairs:
        yield {"figure": "kappa", "reviewer": p.first, "other_reviewer": p.second,
               "items": p.shared, "agreed": p.agreed, "value": p.kappa}
    for r in s.reviewers:
        yield {"figure": "majority", "reviewer": r.reviewer, "other_reviewer": None,
               "items": r.with_majority, "agreed": r.agreed, "value": r.rate}
    for d in report.decisions:
        yield {"figure": "decision", "reviewer": d.reviewer, "other_reviewer": None,
               "items": d.decided, "agreed": d.agreed, "value": d.rate}
