"""Aggregates behind the dashboard (SPEC 8): usefulness rate per day, evidence-score
histogram, verifier verdict counts, most-failing tools, the tools whose calls reviewers rated
negative (most disliked), triage backlog by state and age.

Over the runs of the workspaces where the actor is lead or admin, optionally narrowed
to one workspace and a date range (inclusive UTC days). The run and tool figures are
read from the roll-ups the services keep per workspace and day (``services/rollups.py``,
``flask dashboard rebuild``), so a range costs what its days and tools cost, not its
runs. A run's day is its ``started_at`` (the agent's clock) or, when the agent sent
none, the day it was stored; days are UTC — the workspace's time zone setting is stored
but not used here. The triage backlog is the queue as it is *now* (open items by age),
so the date range does not apply to it; it comes from the triage roll-up (items per
state and UTC day opened), with only the age bounds' own days counted from the items.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import case, func, literal, select, union_all
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..domain import triage_flow
from ..domain.verdicts import VERIFIER_VERDICTS
from ..errors import Forbidden
from ..models import RunDayCount, ToolDayCount, TriageDayCount, TriageItem, Workspace
from ..queries import scope_to_actor
from . import rollups, rollups_rebuild
from .access import require_admin_scope, role_workspace_choice, workspace_id_of
from .params import Refusals, read_date_range, workspace_ref

TOP_TOOLS = 10
SCORE_BUCKETS = tuple(f"{low}–{low + 9}" if low < 90 else "90–100" for low in range(0, 100, 10))
AGE_BUCKETS: tuple[tuple[str, int | None], ...] = (
    ("under 1 day", 1), ("1–7 days", 7), ("7–30 days", 30), ("over 30 days", None),
)
VERDICTS = VERIFIER_VERDICTS.codes()


@dataclass(frozen=True)
class DashboardFilters:
    """``workspace_id`` (``None``: every workspace the actor leads) and inclusive UTC days;
    ``workspace_slug``: the workspace as typed by its short name (``read_filters`` sets its id)."""

    workspace_id: int | None = None
    date_from: date | None = None
    date_to: date | None = None
    workspace_slug: str | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> DashboardFilters:
        """Parse query-string values (``services.params``; the workspace an id or a short
        name, ``workspace_ref``). Raises one ``ValidationFailed`` naming every refused field
        (``problems``). Whether the workspace is one the actor leads is ``read_filters``'s check."""
        refused = Refusals()
        filters = cls._read(params, refused)
        refused.check()
        return filters

    @classmethod
    def _read(cls, params: Mapping[str, Any], refused: Refusals) -> DashboardFilters:
        workspace = refused.read(workspace_ref, params)
        return cls(workspace if isinstance(workspace, int) else None, *read_date_range(params, refused),
                   workspace_slug=workspace if isinstance(workspace, str) else None)

    def as_params(self) -> dict[str, str]:
        """The query-string form (blank values left out), for links to the other pages."""
        params = {"workspace": self.workspace_id or self.workspace_slug, "date_from": self.date_from,
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

    @property
    def other(self) -> int:
        """Calls that did not fail (succeeded, or never ended)."""
        return self.total - self.failed


@dataclass(frozen=True)
class ToolDislikes:
    """A tool's calls rated negative by reviewers (issue 19): ``negative`` ratings out of
    all ``rated`` ratings of its calls in the range, and how many distinct ``calls``
    got a negative one."""

    tool_name: str
    negative: int
    rated: int
    calls: int

    @property
    def positive(self) -> int:
        """Ratings of its calls that were not negative (helpful)."""
        return self.rated - self.negative


@dataclass(frozen=True)
class BacklogBucket:
    """Open triage items of one age bucket, per open state (``{"new": n, "triaged": m}``)."""

    label: str
    counts: dict[str, int]


# The share of useful verdicts from which the page marks the usefulness rate good.
USEFUL_RATE_GOOD = 0.7


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

    @property
    def useful(self) -> int:
        """Runs in range judged useful."""
        return sum(day.useful for day in self.usefulness)

    @property
    def judged(self) -> int:
        """Runs in range with a verdict (useful or not useful)."""
        return self.useful + sum(day.not_useful for day in self.usefulness)

    @property
    def useful_rate(self) -> float | None:
        """``useful`` / ``judged`` in [0, 1]; ``None`` without a verdict."""
        return self.useful / self.judged if self.judged else None

    @property
    def useful_rate_good(self) -> bool:
        """The usefulness rate reaches ``USEFUL_RATE_GOOD`` (the page marks it good,
        otherwise bad)."""
        return self.useful_rate is not None and self.useful_rate >= USEFUL_RATE_GOOD

    @property
    def open_items(self) -> int:
        """Triage items in an open state (``triage_flow.OPEN_STATES``)."""
        return sum(self.triage_states.get(state, 0) for state in triage_flow.OPEN_STATES)


def lead_workspaces(session: Session, actor: Actor) -> list[tuple[int, str]]:
    """(id, name) of the workspaces the actor leads (or administers), by name: the
    dashboard's workspace choices. Raises ``Forbidden`` when they lead none."""
    workspaces = [(i, n) for i, n in session.execute(
        scope_to_actor(select(Workspace.id, Workspace.name), actor, Workspace.id, Role.LEAD)
        .order_by(Workspace.name))]
    if not workspaces:
        raise Forbidden()
    return workspaces


def read_filters(session: Session, actor: Actor, params: Mapping[str, Any]) -> DashboardFilters:
    """``DashboardFilters.from_params`` plus the workspace check the triage list makes: the
    workspace (an id or a short name) must be one the actor leads
    (``access.role_workspace_choice``: else ``no_workspace``, or the role they hold there).
    Returns the filters with the workspace's id. Raises one ``ValidationFailed`` naming
    every refused field (``problems``); ``Forbidden`` when the actor leads no workspace."""
    led = [ws_id for ws_id, _ in lead_workspaces(session, actor)]
    refused = Refusals()
    filters = DashboardFilters._read(params, refused)
    ws_id, reason = role_workspace_choice(session, actor, filters.workspace_slug or filters.workspace_id,
                                          led, "leads and admins see its dashboard")
    if reason:
        refused.add("workspace", reason)
    refused.check()
    return replace(filters, workspace_id=ws_id)


def build(session: Session, actor: Actor, filters: DashboardFilters | None = None,
          now: datetime | None = None) -> Dashboard:
    """The dashboard for ``filters``; ``now`` (UTC) anchors the backlog ages (tests pass it).
    Raises ``Forbidden`` when the actor leads no workspace or names one they do not lead."""
    filters = filters or DashboardFilters()
    now = now or datetime.now(UTC)
    if filters.workspace_slug and filters.workspace_id is None:  # none such: 0, Forbidden below
        filters = replace(filters, workspace_id=workspace_id_of(session, filters.workspace_slug))
    workspaces = lead_workspaces(session, actor)
    allowed = {i for i, _ in workspaces}
    if not allowed or (filters.workspace_id is not None and filters.workspace_id not in allowed):
        raise Forbidden()
    ws_ids = [filters.workspace_id] if filters.workspace_id is not None else sorted(allowed)

    runs_by_day = _run_counts(session, ws_ids, filters, by_day=True)
    usefulness = [
        DayUsefulness(d.isoformat(), sum(values.values()), values.get("useful", 0),
                      values.get("not_useful", 0))
        for d, values in sorted(runs_by_day.items())
    ]
    runs = sum(d.runs for d in usefulness)
    usefulness = _every_day(usefulness)

    bands = _run_counts(session, ws_ids, filters, "score_band")
    unscored = bands.pop(rollups.NO_VALUE, 0)
    counts = {i: bands.get(str(i), 0) for i in range(10)}

    verdict_counts = dict.fromkeys(VERDICTS, 0)
    for verdict, n in _run_counts(session, ws_ids, filters, "verifier").items():
        key = verdict or "none"
        verdict_counts[key] = verdict_counts.get(key, 0) + n

    failing_tools, disliked_tools = _tool_tables(session, ws_ids, filters)
    backlog, states = _backlog(session, ws_ids, now)
    return Dashboard(
        filters=filters, workspaces=workspaces, runs=runs, usefulness=usefulness,
        score_histogram=list(zip(SCORE_BUCKETS, (counts[i] for i in range(10)))),
        unscored=unscored, verdicts=list(verdict_counts.items()),
        failing_tools=failing_tools, backlog=backlog, triage_states=states,
        disliked_tools=disliked_tools,
    )


def _tool_tables(session: Session, ws_ids: list[int], filters: DashboardFilters
                 ) -> tuple[list[ToolFailures], list[ToolDislikes]]:
    """The tools with the most failed calls, and those with the most negative ratings
    (``TOP_TOOLS`` each, then by name), from the tool roll-ups of the filtered days."""
    tools = ToolDayCount
    tool_conds = _day_conds(tools.workspace_id, tools.day, ws_ids, filters)
    failed = func.sum(tools.failed)
    failing_tools = [
        ToolFailures(name, int(f), int(total))
        for name, f, total in session.execute(
            select(tools.tool_name, failed, func.sum(tools.calls)).where(*tool_conds)
            .group_by(tools.tool_name).having(failed > 0)
            .order_by(failed.desc(), tools.tool_name).limit(TOP_TOOLS))
    ]
    negative = func.sum(tools.negative)
    disliked_tools = [
        ToolDislikes(name, int(n), int(rated), int(calls))
        for name, n, rated, calls in session.execute(
            select(tools.tool_name, negative, func.sum(tools.rated),
                   func.sum(tools.disliked_calls)).where(*tool_conds)
            .group_by(tools.tool_name).having(negative > 0)
            .order_by(negative.desc(), tools.tool_name).limit(TOP_TOOLS))
    ]
    return failing_tools, disliked_tools


def _day_conds(workspace_col: Any, day_col: Any, ws_ids: list[int],
               filters: DashboardFilters) -> list[Any]:
    conds = [workspace_col.in_(ws_ids)]
    if filters.date_from is not None:
        conds.append(day_col >= filters.date_from)
    if filters.date_to is not None:
        conds.append(day_col <= filters.date_to)
    return conds


def _run_counts(session: Session, ws_ids: list[int], filters: DashboardFilters,
                dimension: str = "verdict", *, by_day: bool = False) -> Any:
    """Runs per value of ``dimension`` in the range, from the roll-up; ``by_day``:
    ``{day: {value: runs}}`` instead of ``{value: runs}``. Zero counts left out."""
    table = RunDayCount
    conds = [*_day_conds(table.workspace_id, table.day, ws_ids, filters),
             table.dimension == dimension]
    keys = (table.day, table.value) if by_day else (table.value,)
    total = func.sum(table.runs)
    rows = session.execute(select(*keys, total).where(*conds).group_by(*keys)
                           .having(total != 0))
    if not by_day:
        return {value: int(n) for value, n in rows}
    out: dict[date, dict[str, int]] = {}
    for day, value, n in rows:
        out.setdefault(day, {})[value] = int(n)
    return out


def rebuild(session: Session, actor: Actor, workspace_id: int | None = None
            ) -> rollups_rebuild.RebuildSummary:
    """Recompute the dashboard's roll-ups from the runs, tool calls and ratings (of one
    workspace, or of all: ``None``); commit (``rollups_rebuild.rebuild``). For repairs and after
    bulk loads that bypass the services. Access: the system actor; an admin for their own
    workspace. Raises ``Forbidden``."""
    require_admin_scope(session, actor, workspace_id)
    return rollups_rebuild.rebuild(session, workspace_id)


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
    """Open items per age bucket and state, and items per state, from the triage
    roll-up (``TriageDayCount``): the whole days after each bucket's bound summed there,
    the bound's own day counted live over the items' (workspace, state, created_at)
    index, so the cost is days, not items."""
    now = now.astimezone(UTC)
    bounds = [now - timedelta(days=days) for _, days in AGE_BUCKETS if days is not None]
    table = TriageDayCount
    rows = session.execute(
        select(table.state, func.sum(table.items),
               *(func.sum(case((table.day > bound.date(), table.items), else_=0))
                 for bound in bounds))
        .where(table.workspace_id.in_(ws_ids)).group_by(table.state))
    states = dict.fromkeys(triage_flow.STATES, 0)
    after: dict[str, list[int]] = {state: [0] * len(bounds) for state in triage_flow.OPEN_STATES}
    for state, total, *later in rows:
        states[state] = int(total)
        if state in after:
            after[state] = [int(n) for n in later]
    for state, index, n in session.execute(_bound_days(ws_ids, bounds)):
        after[state][int(index)] += int(n)
    # after[state][k]: open items created after bound k; the buckets are the differences.
    grid = []
    for k in range(len(AGE_BUCKETS)):
        grid.append({state: (after[state][k] if k < len(bounds) else states[state])
                     - (after[state][k - 1] if k else 0) for state in triage_flow.OPEN_STATES})
    buckets = [BacklogBucket(label, grid[i]) for i, (label, _) in enumerate(AGE_BUCKETS)]
    return buckets, states


def _bound_days(ws_ids: list[int], bounds: list[datetime]) -> Any:
    """(state, bound index, open items created after the bound on the bound's own UTC
    day): one range of the (workspace_id, state, created_at) index per bound."""
    arms = []
    for index, bound in enumerate(bounds):
        midnight = datetime.combine(bound.date() + timedelta(days=1), time(), UTC)
        arms.append(
            select(TriageItem.state, literal(index).label("bound"), func.count())
            .where(TriageItem.workspace_id.in_(ws_ids),
                   TriageItem.state.in_(triage_flow.OPEN_STATES),
                   TriageItem.created_at > bound, TriageItem.created_at < midnight)
            .group_by(TriageItem.state))
    return union_all(*arms)
