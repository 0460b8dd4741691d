"""Aggregates behind the dashboard (SPEC 8): usefulness rate per day, evidence-score
histogram, verifier verdict counts, most-failing tools, the tools whose calls reviewers rated
negative (most disliked), triage backlog by state and age.

Every number is computed by the database (GROUP BY), over the runs of the workspaces
where the actor is lead or admin, optionally narrowed to one workspace and a date range.
A run's day is its ``started_at`` (the agent's clock) or, when the agent sent none, the
day it was stored; days are UTC. The triage backlog is the queue as it is *now* (open
items by age), so the date range does not apply to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import case, func, literal, select
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..domain import triage_flow
from ..domain.verdicts import VERIFIER_VERDICTS
from ..errors import Forbidden
from ..models import Feedback, Run, TargetType, ToolCall, TriageItem, Workspace
from ..queries import scope_to_actor, utc_day
from .params import date_range_params, day_range, workspace_param

TOP_TOOLS = 10
SCORE_BUCKETS = tuple(f"{low}–{low + 9}" if low < 90 else "90–100" for low in range(0, 100, 10))
AGE_BUCKETS: tuple[tuple[str, int | None], ...] = (
    ("under 1 day", 1), ("1–7 days", 7), ("7–30 days", 30), ("over 30 days", None),
)
VERDICTS = VERIFIER_VERDICTS.codes()


@dataclass(frozen=True)
class DashboardFilters:
    """``workspace_id`` (``None``: every workspace the actor leads) and inclusive UTC days."""

    workspace_id: int | None = None
    date_from: date | None = None
    date_to: date | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> DashboardFilters:
        """Parse query-string values (``services.params``). Raises ``ValidationFailed``
        naming the field."""
        return cls(workspace_param(params), *date_range_params(params))

    def as_params(self) -> dict[str, str]:
        """The query-string form (blank values left out), for links to the other pages."""
        params = {"workspace": self.workspace_id, "date_from": self.date_from,
                  "date_to": self.date_to}
        return {k: str(v) for k, v in params.items() if v is not None}


@dataclass(frozen=True)
class DayUsefulness:
    """One UTC day: runs, verdicts ``useful`` / ``not_useful``, and ``rate`` = useful /
    (useful + not useful) in [0, 1], ``None`` on a day without verdicts."""

    day: str
    runs: int
    useful: int
    not_useful: int

    @property
    def rate(self) -> float | None:
        judged = self.useful + self.not_useful
        return self.useful / judged if judged else None


@dataclass(frozen=True)
class ToolFailures:
    """A tool's failed calls out of all its calls in the range."""

    tool_name: str
    failed: int
    total: int


@dataclass(frozen=True)
class ToolDislikes:
    """A tool's calls rated negative by reviewers (issue 19): ``negative`` ratings out of
    all ``rated`` ratings of its calls in the range, and how many distinct ``calls``
    got a negative one."""

    tool_name: str
    negative: int
    rated: int
    calls: int


@dataclass(frozen=True)
class BacklogBucket:
    """Open triage items of one age bucket, per open state (``{"new": n, "triaged": m}``)."""

    label: str
    counts: dict[str, int]


@dataclass(frozen=True)
class Dashboard:
    """Everything the dashboard page draws; ``workspaces`` are (id, name) the actor leads.
    ``usefulness`` has one entry per day from the first to the last day with runs."""

    filters: DashboardFilters
    workspaces: list[tuple[int, str]]
    runs: int
    usefulness: list[DayUsefulness]
    score_histogram: list[tuple[str, int]]
    unscored: int
    verdicts: list[tuple[str, int]]
    failing_tools: list[ToolFailures]
    backlog: list[BacklogBucket]
    triage_states: dict[str, int]
    disliked_tools: list[ToolDislikes] = field(default_factory=list)


def build(session: Session, actor: Actor, filters: DashboardFilters | None = None,
          now: datetime | None = None) -> Dashboard:
    """The dashboard for ``filters``; ``now`` (UTC) anchors the backlog ages (tests pass it).
    Raises ``Forbidden`` when the actor leads no workspace or names one they do not lead."""
    filters = filters or DashboardFilters()
    now = now or datetime.now(UTC)
    workspaces = [(i, n) for i, n in session.execute(
        scope_to_actor(select(Workspace.id, Workspace.name), actor, Workspace.id, Role.LEAD)
        .order_by(Workspace.name))]
    allowed = {i for i, _ in workspaces}
    if not allowed or (filters.workspace_id is not None and filters.workspace_id not in allowed):
        raise Forbidden()
    ws_ids = [filters.workspace_id] if filters.workspace_id is not None else sorted(allowed)

    run_time = func.coalesce(Run.started_at, Run.created_at)
    run_conds: list[Any] = [Run.workspace_id.in_(ws_ids)]
    start, end = day_range(filters.date_from, filters.date_to)
    if start is not None:
        run_conds.append(run_time >= start)
    if end is not None:
        run_conds.append(run_time < end)

    day = utc_day(session, run_time).label("day")
    usefulness = [
        DayUsefulness(d, int(total), int(useful or 0), int(not_useful or 0))
        for d, total, useful, not_useful in session.execute(
            select(day, func.count(),
                   func.sum(case((Run.feedback == "useful", 1), else_=0)),
                   func.sum(case((Run.feedback == "not_useful", 1), else_=0)))
            .where(*run_conds).group_by(day).order_by(day)
        )
    ]
    runs = sum(d.runs for d in usefulness)
    usefulness = _every_day(usefulness)

    bucket = case((Run.evidence_score >= 90, literal(9)),
                  else_=Run.evidence_score // 10).label("bucket")
    counts = dict.fromkeys(range(10), 0)
    for b, n in session.execute(
        select(bucket, func.count()).where(*run_conds, Run.evidence_score.is_not(None))
        .group_by(bucket)
    ):
        counts[max(0, min(9, int(b)))] += int(n)
    unscored = int(session.scalar(
        select(func.count()).select_from(Run).where(*run_conds, Run.evidence_score.is_(None))
    ) or 0)

    verdict_counts = dict.fromkeys(VERDICTS, 0)
    verdict_col = func.coalesce(Run.verifier_verdict, "none")
    for verdict, n in session.execute(
        select(verdict_col, func.count()).where(*run_conds).group_by(verdict_col)
    ):
        verdict_counts[verdict] = verdict_counts.get(verdict, 0) + int(n)

    failed = func.sum(case((ToolCall.status == "failed", 1), else_=0))
    failing_tools = [
        ToolFailures(name, int(f or 0), int(total))
        for name, f, total in session.execute(
            select(ToolCall.tool_name, failed.label("failed"), func.count())
            .join(Run, Run.id == ToolCall.run_pk)
            .where(*run_conds)
            .group_by(ToolCall.tool_name)
            .having(failed > 0)
            .order_by(failed.desc(), ToolCall.tool_name)
            .limit(TOP_TOOLS)
        )
    ]

    negative = func.sum(case((Feedback.rating == "negative", 1), else_=0))
    disliked_calls = func.count(func.distinct(case(
        (Feedback.rating == "negative", ToolCall.id), else_=None)))
    disliked_tools = [
        ToolDislikes(name, int(n or 0), int(rated), int(calls))
        for name, n, rated, calls in session.execute(
            select(ToolCall.tool_name, negative, func.count(), disliked_calls)
            .select_from(Feedback)
            .join(ToolCall, (ToolCall.run_pk == Feedback.target_id)
                  & (ToolCall.id == Feedback.subject_key)
                  & (ToolCall.workspace_id == Feedback.workspace_id))
            .join(Run, Run.id == Feedback.run_pk)
            .where(*run_conds, Feedback.target_type == TargetType.TOOL_CALL.value)
            .group_by(ToolCall.tool_name)
            .having(negative > 0)
            .order_by(negative.desc(), ToolCall.tool_name)
            .limit(TOP_TOOLS)
        )
    ]

    backlog, states = _backlog(session, ws_ids, now)
    return Dashboard(
        filters=filters, workspaces=workspaces, runs=runs, usefulness=usefulness,
        score_histogram=list(zip(SCORE_BUCKETS, (counts[i] for i in range(10)))),
        unscored=unscored, verdicts=list(verdict_counts.items()),
        failing_tools=failing_tools, backlog=backlog, triage_states=states,
        disliked_tools=disliked_tools,
    )


MAX_DAYS = 400


def _every_day(days: list[DayUsefulness]) -> list[DayUsefulness]:
    """``days`` with the days between the first and the last that had no run added as
    empty days (rate ``None``), so the chart shows a gap instead of a line across it.
    Ranges longer than ``MAX_DAYS`` are left as they are."""
    if len(days) < 2:
        return days
    first, last = date.fromisoformat(days[0].day), date.fromisoformat(days[-1].day)
    span = (last - first).days + 1
    if span > MAX_DAYS or span == len(days):
        return days
    known = {d.day: d for d in days}
    every = (first + timedelta(days=i) for i in range(span))
    return [known.get(d.isoformat(), DayUsefulness(d.isoformat(), 0, 0, 0)) for d in every]


def _backlog(session: Session, ws_ids: list[int], now: datetime
             ) -> tuple[list[BacklogBucket], dict[str, int]]:
    whens = []
    for index, (_, days) in enumerate(AGE_BUCKETS):
        if days is not None:
            whens.append((TriageItem.created_at > now - timedelta(days=days), literal(index)))
    age = case(*whens, else_=literal(len(AGE_BUCKETS) - 1)).label("age")
    grid = {i: dict.fromkeys(triage_flow.OPEN_STATES, 0) for i in range(len(AGE_BUCKETS))}
    for state, index, n in session.execute(
        select(TriageItem.state, age, func.count())
        .where(TriageItem.workspace_id.in_(ws_ids),
               TriageItem.state.in_(triage_flow.OPEN_STATES))
        .group_by(TriageItem.state, age)
    ):
        grid[int(index)][state] = int(n)
    states = dict.fromkeys(triage_flow.STATES, 0)
    for state, n in session.execute(
        select(TriageItem.state, func.count())
        .where(TriageItem.workspace_id.in_(ws_ids)).group_by(TriageItem.state)
    ):
        states[state] = int(n)
    buckets = [BacklogBucket(label, grid[i]) for i, (label, _) in enumerate(AGE_BUCKETS)]
    return buckets, states
