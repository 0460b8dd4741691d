"""Runs, the list side: filters, sort orders, keyset pagination, bounded counts (SPEC 8)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from operator import attrgetter
from typing import Any

from sqlalchemy import Select, Text, cast, exists, func, literal, or_, select, union_all
from sqlalchemy import false as sa_false
from sqlalchemy.orm import Session, aliased

from ...actors import Actor, Role
from ...domain.search_text import (
    MIN_INDEXED_CHARS,
    SHORT_TERM_RUNS,
    Snippet,
    is_short,
    search_term,
)
from ...domain.search_text import rank as search_rank
from ...domain.verdicts import VERDICTS as VERDICT_REGISTRY
from ...domain.verdicts import VERIFIER_VERDICTS as VERIFIER_VERDICT_REGISTRY
from ...errors import Forbidden, ValidationFailed
from ...models import (
    DiagnosisSession,
    DiagnosticReport,
    DiagnosticStep,
    Feedback,
    Membership,
    Message,
    MessageRole,
    Run,
    RunKind,
    RunStatus,
    ToolCall,
    Workspace,
)
from ...queries import (
    capped_count,
    runs_of_workspace_visible_to,
    runs_visible_to,
)
from .. import keyset, run_text
from ..access import WorkspaceRole, roles_of
from ..blind import blind_condition
from ..keyset import SortKey, SortOrder
from ..params import choice_param, int_param, text_param, workspace_param
from ..run_text import match_load, snippets, text_condition, text_rank

_ID_DESC = SortKey(Run.id, True, attrgetter("id"))
_ID_ASC = SortKey(Run.id, False, attrgetter("id"))


def _score_or(missing: int) -> Callable[[Run], int]:
    return lambda run: missing if run.evidence_score is None else run.evidence_score


# The runs list's orders, one row each (a new order is one row): the keys, the id last so
# the order is total; unscored runs sort last either way (coalesce to -1 / 101).
SORT_TABLE: dict[str, SortOrder] = {order.name: order for order in (
    SortOrder("newest", "Newest first", (
        SortKey(Run.created_at, True, attrgetter("created_at"), datetime), _ID_DESC)),
    SortOrder("oldest", "Oldest first", (
        SortKey(Run.created_at, False, attrgetter("created_at"), datetime), _ID_ASC)),
    SortOrder("score_desc", "Highest evidence score", (
        SortKey(func.coalesce(Run.evidence_score, -1), True, _score_or(-1)), _ID_DESC)),
    SortOrder("score_asc", "Lowest evidence score", (
        SortKey(func.coalesce(Run.evidence_score, 101), False, _score_or(101)), _ID_ASC)),
    SortOrder("failed_desc", "Most failed tool calls", (
        SortKey(Run.failed_tool_call_count, True, attrgetter("failed_tool_call_count")),
        _ID_DESC)),
    SortOrder("calls_desc", "Most tool calls", (
        SortKey(Run.tool_call_count, True, attrgetter("tool_call_count")), _ID_DESC)),
)}
# A text search's own order (``order_of``): best match first (``domain.search_text.rank``:
# the term in the question, then in the answer, then elsewhere), newest first within a rank.
RELEVANCE = "relevance"
# name -> label, for the sort select.
SORTS: dict[str, str] = {**{name: order.label for name, order in SORT_TABLE.items()},
                         RELEVANCE: "Best match (with a search)"}


def order_of(filters: RunFilters) -> SortOrder:
    """The sort order of ``filters``: a row of ``SORT_TABLE``, or for ``relevance`` with a
    search term the rank of the match (never NULL; computed from the index row, the same
    rule as ``domain.search_text.rank`` on the run's own text), then newest, then id.
    ``relevance`` without a term, or for a term that very many runs hold
    (``many_matches``), is ``newest``."""
    term = search_term(filters.q)
    if filters.sort != RELEVANCE:
        return SORT_TABLE[filters.sort]
    newest = SORT_TABLE["newest"]
    if not term or filters.many_matches:
        return SortOrder(RELEVANCE, SORTS[RELEVANCE], newest.keys)
    return SortOrder(RELEVANCE, SORTS[RELEVANCE], (
        SortKey(text_rank(term), True, lambda run: _rank_of(run, term)), *newest.keys))


def _rank_of(run: Run, term: str) -> int:
    return search_rank(run.query, run.answer, term)
# The registries' codes plus "none" (no verdict yet / not verified).
FEEDBACK_STATES = (*VERDICT_REGISTRY.codes(), "none")
VERIFIER_VERDICTS = (*VERIFIER_VERDICT_REGISTRY.codes(), "none")
REVIEWED_STATES = ("not_mine", "mine")
MAX_QUERY_TEXT = 200
# A workspace slug as ``services.admin`` accepts it (a shape check only: the membership
# check stays in the query).
WORKSPACE_SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")

# Counts stop here ("10,000+"): counting costs at most this many index entries.
COUNT_CAP = 10_000
# A filtered count reads about cap / selectivity rows, so it stops earlier: with a
# selective filter a million-run workspace is then counted as fast as a small one.
FILTERED_COUNT_CAP = 1_000
FAILED_CALLS_STATES = ("yes",)
# Where a search can match inside a tool call (``match_places``), in the order shown.
TOOL_CALL_PLACES = ("tool name", "arguments", "result", "error")
MAX_MATCH_PLACES = 4


@dataclass(frozen=True)
class RunFilters:
    """What the runs list (and the review queue, and a run page's prev / next) shows.

    Every field is optional: ``workspace_id``, or ``workspace_slug`` (the slug every CLI
    command takes: ``?workspace=demo`` reads as that); ``kind`` chat | aiops; ``status`` RUNNING |
    SUCCESS | FAILED; ``verdict`` the verifier's PASS | LOW_CONFID | REJECT | none (not
    scored); ``feedback`` the run's verdict useful | not_useful | none; ``score_min`` /
    ``score_max`` evidence score bounds, inclusive, 0-100 (unscored runs drop out when a
    bound is set); ``outcome`` the external outcome (case-insensitive); ``reviewed`` not_mine (no
    rating of mine on any part of the run) | mine; ``q`` text contained (ignoring case:
    full Unicode case folding, ``domain.search_text.fold``) in the query, the answer, the
    run id, the session id, or a tool call's name, arguments (as JSON text), result or
    error (``match_places`` says which), through the full-text index (``run_text``; a
    term under 3 characters only in the newest ``SHORT_TERM_RUNS`` runs);
    ``failed_calls`` "yes": only runs with at least one failed tool call; ``sort`` a key
    of ``SORTS`` (default ``relevance`` with ``q``, else ``newest``).
    """

    workspace_id: int | None = None
    kind: str | None = None
    status: str | None = None
    verdict: str | None = None
    feedback: str | None = None
    score_min: int | None = None
    score_max: int | None = None
    outcome: str | None = None
    reviewed: str | None = None
    q: str | None = None
    sort: str = "newest"
    failed_calls: str | None = None
    workspace_slug: str | None = None
    # Set by the services, never from parameters (``with_match_count``): more than
    # ``RANKED_MATCHES`` runs hold ``q`` (not ranked), more than ``PROBED_MATCHES`` (tested
    # run by run in the list's order).
    many_matches: bool = False
    probe: bool = False

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> RunFilters:
        """Parse query-string values (all text), with the parsers every list page uses
        (``services.params``). Raises ``ValidationFailed`` naming the field."""
        raw_workspace = str(params.get("workspace") or "").strip()
        slug = raw_workspace if raw_workspace and not raw_workspace.isdigit() else None
        if slug is not None and not WORKSPACE_SLUG_RE.match(slug):
            raise ValidationFailed("workspace", "must be a workspace's number or its short name "
                                   "(e.g. demo)")
        return cls(
            workspace_id=None if slug else workspace_param(params),
            workspace_slug=slug,
            kind=choice_param(params, "kind", (k.value for k in RunKind)),
            status=choice_param(params, "status", (s.value for s in RunStatus)),
            verdict=choice_param(params, "verdict", VERIFIER_VERDICTS),
            feedback=choice_param(params, "feedback", FEEDBACK_STATES),
            score_min=int_param(params, "score_min", 0, 100),
            score_max=int_param(params, "score_max", 0, 100),
            outcome=text_param(params, "outcome", 32),
            reviewed=choice_param(params, "reviewed", REVIEWED_STATES),
            q=text_param(params, "q", MAX_QUERY_TEXT),
            # A search lists the best matches first unless another order is asked for.
            sort=choice_param(params, "sort", SORTS) or (
                RELEVANCE if search_term(params.get("q")) else "newest"),
            failed_calls=choice_param(params, "failed_calls", FAILED_CALLS_STATES),
        ).validated()

    def as_params(self, **overrides: Any) -> dict[str, str]:
        """The filters as query-string values (empty ones and the default sort left out),
        for links and forms; ``from_params`` reads them back."""
        values: dict[str, Any] = {
            "workspace": self.workspace_id or self.workspace_slug, "kind": self.kind,
            "status": self.status,
            "verdict": self.verdict, "feedback": self.feedback, "score_min": self.score_min,
            "score_max": self.score_max, "outcome": self.outcome, "reviewed": self.reviewed,
            "q": self.q, "sort": None if self.sort == self.default_sort else self.sort,
            "failed_calls": self.failed_calls,
        }
        values.update(overrides)
        return {k: str(v) for k, v in values.items() if v not in (None, "")}

    def validated(self) -> RunFilters:
        """This value when every field is allowed. Raises ``ValidationFailed`` naming the field."""
        allowed = {
            "kind": tuple(k.value for k in RunKind),
            "status": tuple(s.value for s in RunStatus),
            "verdict": VERIFIER_VERDICTS,
            "feedback": FEEDBACK_STATES,
            "reviewed": REVIEWED_STATES,
            "failed_calls": FAILED_CALLS_STATES,
        }
        for name, values in allowed.items():
            value = getattr(self, name)
            if value is not None and value not in values:
                raise ValidationFailed(name, f"must be one of {', '.join(values)}")
        if self.sort not in SORTS:
            raise ValidationFailed("sort", f"must be one of {', '.join(SORTS)}")
        for name in ("score_min", "score_max"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not 0 <= value <= 100):
                raise ValidationFailed(name, "must be a whole number from 0 to 100")
        if self.score_min is not None and self.score_max is not None \
                and self.score_min > self.score_max:
            raise ValidationFailed("score_max", "must not be below the minimum score")
        if self.q is not None and len(self.q) > MAX_QUERY_TEXT:
            raise ValidationFailed("q", f"at most {MAX_QUERY_TEXT} characters")
        if self.outcome is not None and len(self.outcome) > 32:
            raise ValidationFailed("outcome", "at most 32 characters")
        return self

    def with_match_count(self, session: Session) -> RunFilters:
        """This value with ``many_matches`` and ``probe`` set from the index
        (``run_text.match_load``: one query; none without ``q``)."""
        many, probe = match_load(session, search_term(self.q))
        return replace(self, many_matches=many, probe=probe)

    @property
    def default_sort(self) -> str:
        """The order a list gets without a ``sort`` parameter: ``relevance`` with a
        search term, else ``newest``."""
        return RELEVANCE if search_term(self.q) else "newest"

    @property
    def active(self) -> bool:
        """True when any filter (not the sort) narrows the list."""
        return any(getattr(self, f) not in (None, "") for f in (
            "workspace_id", "workspace_slug", "kind", "status", "verdict", "feedback",
            "score_min", "score_max", "outcome", "reviewed", "q", "failed_calls"))


def sort_keys(sort: str) -> list[tuple[Any, bool]]:
    """(expression, descending) pairs of the order ``sort`` (``SORT_TABLE``; ``relevance``
    without a term reads as ``newest``)."""
    return order_of(RunFilters(sort=sort)).pairs()


def sort_values(run: Run, sort: str) -> list[Any]:
    """``run``'s values for the keys of ``sort`` (what a cursor stores)."""
    return order_of(RunFilters(sort=sort)).values(run)


def bind_sort_values(sort: str, values: list[Any]) -> list[Any]:
    """Cursor values back to bind parameters. Raises ``ValidationFailed`` for bad cursors."""
    return order_of(RunFilters(sort=sort)).bind(values)


def _reviewed_by(actor: Actor) -> Any:
    """EXISTS: the actor rated some part of the run."""
    if not actor.is_user:
        return sa_false()
    return exists().where(Feedback.run_pk == Run.id, Feedback.author_id == actor.user_id)


def rateable_run() -> Any:
    """Condition: the run is finished (not RUNNING) and has a part a reviewer can rate:
    an assistant message with text (the answer and its citations), a diagnostic step or
    a diagnostic report (SPEC 6.1 targets). The review queue offers only such runs, so
    it never stops on a run nobody can rate (SPEC 8)."""
    text = func.trim(func.coalesce(Message.content, ""))
    return (Run.status != RunStatus.RUNNING.value) & or_(
        exists().where(Message.run_pk == Run.id, Message.role == MessageRole.ASSISTANT.value,
                       text != ""),
        exists().where(DiagnosticStep.run_pk == Run.id),
        exists().where(DiagnosticReport.run_pk == Run.id),
    )


def filtered_runs(actor: Actor, filters: RunFilters, only_workspace: int | None) -> Select[Any]:
    """The visible runs narrowed by ``filters``, unordered. ``only_workspace`` adds an
    equality on the workspace (an index range instead of a scan) when the actor sees one
    workspace or picked one; the membership check stays in the query either way. For
    a list over several workspaces, ``scoped_runs`` (one such statement per workspace)."""
    workspace_id = filters.workspace_id or only_workspace
    stmt = (runs_of_workspace_visible_to(actor, workspace_id) if workspace_id is not None
            else runs_visible_to(actor))
    return _narrowed(stmt, actor, filters)


def scoped_runs(actor: Actor, filters: RunFilters,
                workspaces: Sequence[WorkspaceRole]) -> list[Select[Any]]:
    """The runs of ``filters`` as one ``filtered_runs`` statement per workspace the list
    covers: the picked workspace, the token's, or each of ``workspaces`` (the actor's,
    from ``single_workspace``, read once per request). Each statement is one range of
    the ``(workspace_id, created_at, id)`` index with a constant membership check, so
    ``keyset.page`` / ``keyset.ordered`` merge ordered ranges and ``capped_count`` counts
    them without the per-row membership check that made the database scan and sort
    every run of a two-workspace user (issue 18)."""
    if filters.workspace_id is not None:
        return [filtered_runs(actor, filters, None)]
    if filters.workspace_slug:
        ids = [w.workspace_id for w in workspaces if w.slug == filters.workspace_slug]
        return [filtered_runs(actor, filters, ids[0] if ids else None)]
    if actor.is_token:
        return [filtered_runs(actor, filters, actor.token_workspace_id)]
    ids = [w.workspace_id for w in workspaces]
    if len(ids) <= 1:
        return [filtered_runs(actor, filters, ids[0] if ids else None)]
    return [filtered_runs(actor, filters, workspace_id) for workspace_id in ids]


def _narrowed(stmt: Select[Any], actor: Actor, filters: RunFilters) -> Select[Any]:
    """``stmt`` (a select over ``Run``) narrowed by every filter but the workspace id."""
    if filters.workspace_slug:
        stmt = stmt.where(Run.workspace_id == select(Workspace.id).where(
            Workspace.slug == filters.workspace_slug).scalar_subquery())
    if filters.kind:
        stmt = stmt.where(Run.kind == filters.kind)
    if filters.status:
        stmt = stmt.where(Run.status == filters.status)
    if filters.verdict:
        stmt = stmt.where(Run.verifier_verdict.is_(None) if filters.verdict == "none"
                          else Run.verifier_verdict == filters.verdict)
    if filters.feedback:
        # Blind review: a run whose verdict the actor may not see yet matches no
        # verdict filter (services/blind.py), so the filter cannot reveal it.
        stmt = stmt.where(Run.feedback.is_(None) if filters.feedback == "none"
                          else Run.feedback == filters.feedback, ~blind_condition(actor))
    if filters.score_min is not None:
        stmt = stmt.where(Run.evidence_score >= filters.score_min)
    if filters.score_max is not None:
        stmt = stmt.where(Run.evidence_score <= filters.score_max)
    if filters.outcome:
        stmt = stmt.where(func.lower(Run.external_outcome) == filters.outcome.lower())
    if filters.reviewed == "not_mine":
        stmt = stmt.where(~_reviewed_by(actor))
    elif filters.reviewed == "mine":
        stmt = stmt.where(_reviewed_by(actor))
    if filters.failed_calls == "yes":
        stmt = stmt.where(Run.failed_tool_call_count > 0)
    term = search_term(filters.q)
    if term:  # through the full-text index (services.run_text, SPEC 8)
        stmt = stmt.where(text_condition(term, stmt, probe=filters.probe))
    return stmt


def _tool_call_matches(text: str) -> list[Any]:
    """One condition per searched field of a tool call: name, arguments (their JSON
    text), result, error — in ``TOOL_CALL_PLACES`` order. LIKE (no regular expression):
    linear in the stored text."""
    return [ToolCall.tool_name.icontains(text, autoescape=True),
            cast(ToolCall.arguments, Text).icontains(text, autoescape=True),
            ToolCall.result_summary.icontains(text, autoescape=True),
            ToolCall.error_message.icontains(text, autoescape=True)]


def match_places(session: Session, runs: list[Run], q: str | None) -> dict[int, tuple[str, ...]]:
    """Where ``q`` (case-insensitive) occurs in each of ``runs`` (a page the actor was
    just shown, so already access-checked): "query", "answer", "run id", "session id",
    then per tool call "<place> of <tool name>" with place one of ``TOOL_CALL_PLACES``
    — at most ``MAX_MATCH_PLACES`` per run, in that order. Two queries at most (session
    ids, matching tool calls), whatever the page size; ``{}`` without ``q``."""
    text = (q or "").strip()
    if not text or not runs:
        return {}
    needle = text.casefold()
    sessions = dict(session.execute(
        select(DiagnosisSession.id, DiagnosisSession.session_id)
        .where(DiagnosisSession.id.in_({r.diagnosis_session_id for r in runs}))).all())
    conditions = _tool_call_matches(text)
    calls: dict[int, list[str]] = {}
    for row in session.execute(
        select(ToolCall.run_pk, ToolCall.tool_name, *conditions)
        .where(ToolCall.run_pk.in_([r.id for r in runs]), or_(*conditions))
        .order_by(ToolCall.run_pk, ToolCall.ordinal, ToolCall.id)
    ):
        run_pk, tool_name, *hits = row
        for place, hit in zip(TOOL_CALL_PLACES, hits, strict=True):
            label = f"{place} of {tool_name}" if place != "tool name" else f"tool {tool_name}"
            if hit and label not in calls.setdefault(run_pk, []):
                calls[run_pk].append(label)
    places: dict[int, tuple[str, ...]] = {}
    for run in runs:
        found = [name for name, value in (
            ("query", run.query), ("answer", run.answer), ("run id", run.run_id),
            ("session id", sessions.get(run.diagnosis_session_id)),
        ) if value and needle in value.casefold()]
        found += calls.get(run.id, [])
        if found:
            places[run.id] = tuple(found[:MAX_MATCH_PLACES])
    return places


def single_workspace(session: Session, actor: Actor) -> tuple[list[WorkspaceRole], int | None]:
    """The actor's workspaces, and the id of the only one when there is exactly one."""
    workspaces = roles_of(session, actor)
    return workspaces, (workspaces[0].workspace_id if len(workspaces) == 1 else None)


@dataclass(frozen=True)
class Count:
    """A row count that stops at a cap: ``capped`` True means "``value`` or more"."""

    value: int
    capped: bool


@dataclass(frozen=True)
class RunPage:
    """A page of runs plus the cursor of the next page (``None`` on the last page).

    ``total`` counts every visible run (up to ``COUNT_CAP``), ``filtered`` those matching
    the filters (up to ``FILTERED_COUNT_CAP``; see ``queries.capped_count``); ``reviewed_by_me`` holds the
    ids of the page's runs the actor has rated; ``workspaces`` the actor's workspaces
    (for the workspace filter); ``matches`` where the search text was found in each run
    of the page (``match_places``; empty without a search); ``blind`` the ids of the
    page's runs whose verdict the actor may not see yet (services/blind.py).
    """

    runs: list[Run]
    next_cursor: str | None
    total: int
    filtered: Count = Count(0, False)
    total_count: Count = Count(0, False)
    reviewed_by_me: frozenset[int] = frozenset()
    workspaces: list[WorkspaceRole] = field(default_factory=list)
    filters: RunFilters = RunFilters()
    # Paging back and where the page is (issue 17): ``has_previous`` / ``previous_cursor``
    # (None with ``has_previous``: the first page), ``offset`` the runs before this page
    # (capped like the counts).
    has_previous: bool = False
    previous_cursor: str | None = None
    offset: Count = Count(0, False)
    matches: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    blind: frozenset[int] = frozenset()
    # The excerpt around the match in each run's question or answer (``run_text.snippets``).
    snippets: Mapping[int, Snippet] = field(default_factory=dict)
    # What the page says about how the search was done: a term too short for the index
    # (searched in the newest ``SHORT_TERM_RUNS`` runs of the list only), a term very many
    # runs hold (newest first), or several words (matched as one phrase).
    search_note: str | None = None


def _search_note(filters: RunFilters) -> str | None:
    if filters.many_matches and filters.sort == RELEVANCE:
        return (f"More than {run_text.RANKED_MATCHES:,} runs hold this term: newest first instead of "
                "best match.")
    if not is_short(search_term(filters.q)):
        text = (filters.q or "").strip()
        if len(text.split()) > 1:  # one substring, not words in any order: say so
            return f"Searched for “{text}” as written: its words together, in this order."
        return None
    return (f"Terms shorter than {MIN_INDEXED_CHARS} characters are looked for in the newest "
            f"{SHORT_TERM_RUNS:,} runs of this list only; type {MIN_INDEXED_CHARS} or more to "
            "search every run.")


def list_runs(
    session: Session, actor: Actor, *, limit: int = 50, cursor: str | None = None,
    filters: RunFilters | None = None, count_cap: int = COUNT_CAP,
) -> RunPage:
    """The actor's visible runs matching ``filters``, keyset-paginated in ``filters.sort``
    order (default newest first, ties broken by id so equal timestamps never skip or
    repeat a row). ``cursor`` is the opaque value of a previous page's ``next_cursor``.

    Queries: workspaces, total count, filtered count (skipped when no filter is set),
    the page, the page's "reviewed by me" ids — five at most, whatever the size — plus
    two with a search (where it matched: ``match_places``) and two on a later page (the
    previous page's cursor and the number of runs before this page).
    Raises ``ValidationFailed`` for a bad filter (naming it) or a malformed cursor.
    """
    filters = (filters or RunFilters()).validated().with_match_count(session)
    if not 1 <= limit <= 500:
        raise ValidationFailed("limit", "must be 1-500")
    workspaces, only = single_workspace(session, actor)
    if filters.workspace_slug and all(w.slug != filters.workspace_slug for w in workspaces):
        raise ValidationFailed("workspace", f"you have no workspace '{filters.workspace_slug}'")
    stmt = scoped_runs(actor, filters, workspaces)
    total_count = Count(*capped_count(session, scoped_runs(actor, RunFilters(), workspaces),
                                      count_cap))
    filtered = (Count(*capped_count(session, stmt, min(count_cap, FILTERED_COUNT_CAP)))
                if filters.active else total_count)
    order = order_of(filters)
    rows, next_cursor = keyset.page(session, stmt, order, cursor, limit,
                                    scalars=True)
    reviewed: frozenset[int] = frozenset()
    blind: frozenset[int] = frozenset()
    if rows and actor.is_user:  # one query: rated by the actor, and blind for them
        marks = session.execute(select(Run.id, _reviewed_by(actor), blind_condition(actor))
                                .where(Run.id.in_([r.id for r in rows]))).all()
        reviewed = frozenset(pk for pk, mine, _ in marks if mine)
        blind = frozenset(pk for pk, _, hidden in marks if hidden)
    has_previous, previous_cursor, offset = False, None, Count(0, False)
    if cursor and rows:  # a later page: the way back and how many runs come before it
        has_previous, previous_cursor = keyset.previous(session, stmt, order, rows[0], limit,
                                                        scalars=True)
        before = order.after(rows[0], reverse=True)
        offset = Count(*capped_count(session, [s.where(before) for s in stmt],
                                     min(count_cap, FILTERED_COUNT_CAP)))
    return RunPage(rows, next_cursor, total_count.value, filtered, total_count, reviewed,
                   workspaces, filters, has_previous=has_previous,
                   previous_cursor=previous_cursor, offset=offset,
                   matches=match_places(session, rows, filters.q), blind=blind,
                   snippets=snippets(rows, search_term(filters.q)),
                   search_note=_search_note(filters))


def neighbours(session: Session, actor: Actor, run: Run, filters: RunFilters,
               only: int | None) -> tuple[int | None, int | None]:
    """The ids of the runs just before and just after ``run`` in the filtered list order
    (one query: the two one-row lookups joined with UNION ALL). A user's list over all
    their workspaces looks up the nearest run in each workspace they belong to (a
    correlated one-row index range per membership) and keeps the nearest of those, so
    the workspace index gives the order however many workspaces there are (issue 18)."""
    filters = filters.with_match_count(session)  # the list's order for a common term
    order = order_of(filters)
    per_membership = (actor.is_user and only is None and filters.workspace_id is None
                      and not filters.workspace_slug)

    def one(previous: bool) -> Any:
        side = literal(1 if previous else 2).label("side")
        near = order.after(run, reverse=previous)
        if per_membership:
            member = aliased(Membership)
            nearest = (_narrowed(select(Run.id).where(Run.workspace_id == member.workspace_id),
                                 actor, filters)
                       .where(near).order_by(*order.order_by(reverse=previous)).limit(1)
                       .scalar_subquery())
            candidates = (select(nearest.label("id"))
                          .where(member.user_id == actor.user_id,
                                 member.role.in_(Role.REVIEWER.at_least())).subquery())
            return (select(Run.id, side).join(candidates, candidates.c.id == Run.id)
                    .order_by(*order.order_by(reverse=previous)).limit(1).subquery())
        base = filtered_runs(actor, filters, only)
        return (base.with_only_columns(Run.id, side, maintain_column_froms=True)
                .where(near).order_by(*order.order_by(reverse=previous)).limit(1).subquery())

    before, after = one(True), one(False)
    found = {side: pk for pk, side in session.execute(
        union_all(select(before.c.id, before.c.side), select(after.c.id, after.c.side)))}
    return found.get(1), found.get(2)


@dataclass(frozen=True)
class RunById:
    """One run the actor may see that carries a given agent run id."""

    run_pk: int
    workspace_slug: str
    workspace_name: str


def find_run_by_id(session: Session, actor: Actor, run_id: Any) -> list[RunById]:
    """The runs with the agent's own ``run_id`` in the actor's workspaces (a run id is
    unique per workspace, SPEC 3), by workspace name: one when the id names one run for
    this user, more when it is in several of their workspaces (the page then asks which,
    HTTP 409). Raises ``Forbidden`` when there is none the actor may see: a missing id
    and a foreign one get the same answer (SPEC 2)."""
    if not isinstance(run_id, str) or not 1 <= len(run_id) <= 160:
        raise Forbidden()  # no stored run can have it
    rows = session.execute(
        runs_visible_to(actor).with_only_columns(Run.id, Workspace.slug, Workspace.name)
        .join(Workspace, Workspace.id == Run.workspace_id)
        .where(Run.run_id == run_id)
        .order_by(Workspace.name, Workspace.id)
    ).all()
    if not rows:
        raise Forbidden()
    return [RunById(pk, slug, name) for pk, slug, name in rows]
