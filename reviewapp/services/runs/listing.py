"""Runs, the list side: one keyset page with its bounded counts, a run's neighbours in
the list order, a run found by the agent's run id (SPEC 8). What the list shows is
``filters``, which runs ``scope``, where a search matched ``matches``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from sqlalchemy import literal, select, union_all
from sqlalchemy.orm import Session, aliased

from ...actors import Actor, Role
from ...domain.search_text import MIN_INDEXED_CHARS, SHORT_TERM_RUNS, Snippet, is_short, search_term
from ...errors import Forbidden, ValidationFailed
from ...models import Membership, Run, Workspace
from ...prepared import Prepared
from ...queries import capped_count, role_in, runs_visible_to
from .. import keyset, rated_runs, run_text
from ..access import WorkspaceRole
from ..blind import blind_condition
from ..params import Refusals, no_workspace
from ..queue_governing import disputed_mark
from ..run_text import snippets
from .filters import RELEVANCE, RunFilters, order_of
from .matches import match_places
from .scope import (
    filtered_runs,
    list_order,
    narrowed,
    rated_count_workspaces,
    reviewed_by,
    scoped_runs,
    single_workspace,
)

# Counts stop here ("10,000+"): counting costs at most this many index entries.
COUNT_CAP = 10_000
# A filtered count reads about cap / selectivity rows, so it stops earlier: with a
# selective filter a million-run workspace is then counted as fast as a small one.
FILTERED_COUNT_CAP = 1_000


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
    page's runs whose verdict the actor may not see yet (services/blind.py); ``disputed``
    the ids of the page's runs without a verdict because their reviewers split and no lead
    decided yet (``queue_governing.disputed_queue_id``: the list says "disputed", not "none").
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
    disputed: frozenset[int] = frozenset()
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


def read_filters(session: Session, actor: Actor, params: Mapping[str, Any]) -> RunFilters:
    """``RunFilters.from_params`` plus the check that needs the database: a workspace's
    short name or id must be one of the actor's (as ``list_runs``). Raises one
    ``ValidationFailed`` naming every refused field (``problems``)."""
    refused = Refusals()
    filters = RunFilters.read(params, refused)
    if (filters.workspace_slug or filters.workspace_id) and "workspace" not in refused.problems:
        workspaces, _ = single_workspace(session, actor)
        if reason := _workspace_refusal(actor, filters, workspaces):
            refused.add("workspace", reason)
    refused.check()
    return filters.validated()


def _workspace_refusal(actor: Actor, filters: RunFilters,
                       workspaces: list[WorkspaceRole]) -> str | None:
    """Why the filters' workspace lists nothing on purpose (not one of ``workspaces``, or
    for a token not its own), else ``None``."""
    if filters.workspace_slug and all(w.slug != filters.workspace_slug for w in workspaces):
        return no_workspace(filters.workspace_slug)
    ids = {actor.token_workspace_id} if actor.is_token else {w.workspace_id for w in workspaces}
    if filters.workspace_id is not None and filters.workspace_id not in ids:
        return no_workspace(filters.workspace_id)
    return None


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
    Raises ``ValidationFailed`` for a bad filter (naming it: a workspace not the actor's
    too, ``no_workspace``) or a malformed cursor.
    """
    filters = (filters or RunFilters()).validated().with_match_count(session)
    if not 1 <= limit <= 500:
        raise ValidationFailed("limit", "must be 1-500")
    workspaces, only = single_workspace(session, actor)
    if reason := _workspace_refusal(actor, filters, workspaces):
        raise ValidationFailed("workspace", reason)
    stmt = scoped_runs(actor, filters, workspaces)
    total_count = Count(*capped_count(session, scoped_runs(actor, RunFilters(), workspaces),
                                      count_cap))
    filtered = (_filtered_count(session, actor, filters, workspaces,
                                min(count_cap, FILTERED_COUNT_CAP))
                if filters.active else total_count)
    order = list_order(order_of(filters), actor, filters)
    rows, next_cursor = keyset.page(session, stmt, order, cursor, limit,
                                    scalars=True)
    reviewed: frozenset[int] = frozenset()
    blind: frozenset[int] = frozenset()
    disputed: frozenset[int] = frozenset()
    if rows and actor.is_user:  # one query: rated by the actor, blind for them, disputed
        marks = session.execute(select(Run.id, reviewed_by(actor), blind_condition(actor),
                                       disputed_mark())
                                .where(Run.id.in_([r.id for r in rows]))).all()
        reviewed = frozenset(pk for pk, mine, _, _ in marks if mine)
        blind = frozenset(pk for pk, _, hidden, _ in marks if hidden)
        disputed = frozenset(pk for pk, _, _, queue in marks if queue is not None)
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
                   matches=match_places(session, rows, filters.q), blind=blind, disputed=disputed,
                   snippets=snippets(rows, search_term(filters.q)),
                   search_note=_search_note(filters))


def _filtered_count(session: Session, actor: Actor, filters: RunFilters,
                    workspaces: list[WorkspaceRole], cap: int) -> Count:
    """The list's count, up to ``cap``. "Reviewed by me" alone (in all or one workspace)
    is the user's kept count of rated runs (``rated_runs``: a row a workspace, whatever
    they rated, issue 18); anything else counts the rows of the filtered list."""
    ids = (rated_count_workspaces(actor, filters, workspaces)
           if filters.reviewed == "mine" else None)
    if ids is not None:
        found = rated_runs.counted(session, actor.user_id, ids, rateable=False)
        return Count(cap, True) if found > cap else Count(found, False)
    return Count(*capped_count(session, scoped_runs(actor, filters, workspaces, counting=True),
                               cap))


def neighbours(session: Session, actor: Actor, run: Run, filters: RunFilters,
               only: int | None) -> tuple[int | None, int | None]:
    """The ids of the runs just before and just after ``run`` in the filtered list order
    (one query: the two one-row lookups joined with UNION ALL). A user's list over all
    their workspaces looks up the nearest run in each workspace they belong to (a
    correlated one-row index range per membership) and keeps the nearest of those, so
    the workspace index gives the order however many workspaces there are (issue 18)."""
    filters = filters.with_match_count(session)  # the list's order for a common term
    order = order_of(filters)
    params = order.params(_NEAR, run)
    if search_term(filters.q):
        rows = session.execute(_neighbours_statement(actor, filters, only), params)
    else:  # the same statement, built once per viewer and list (no per-run values in it)
        session.flush()  # as the ORM's autoflush would before a read
        rows = _prepared_neighbours(actor, filters, only).rows(session.connection(), params)
    found = {side: pk for pk, side in rows}
    return found.get(1), found.get(2)


_NEAR = "near"  # the bound parameters of the run's own key values: :near0, :near1 ...


def _neighbours_statement(actor: Actor, filters: RunFilters, only: int | None) -> Any:
    """``neighbours``' UNION ALL for any run: the run's key values are the parameters of
    ``order.after_params(_NEAR)``."""
    order = order_of(filters)
    per_membership = (actor.is_user and only is None and filters.workspace_id is None
                      and not filters.workspace_slug)

    def one(previous: bool) -> Any:
        side = literal(1 if previous else 2).label("side")
        near = order.after_params(_NEAR, reverse=previous)
        if per_membership:
            member = aliased(Membership)
            nearest = (narrowed(select(Run.id).where(Run.workspace_id == member.workspace_id),
                                 actor, filters)
                       .where(near).order_by(*order.order_by(reverse=previous)).limit(1)
                       .scalar_subquery())
            candidates = (select(nearest.label("id"))
                          .where(member.user_id == actor.user_id,
                                 role_in(member.role, Role.REVIEWER.at_least())).subquery())
            return (select(Run.id, side).join(candidates, candidates.c.id == Run.id)
                    .order_by(*order.order_by(reverse=previous)).limit(1).subquery())
        base = filtered_runs(actor, filters, only)
        return (base.with_only_columns(Run.id, side, maintain_column_froms=True)
                .where(near).order_by(*order.order_by(reverse=previous)).limit(1).subquery())

    before, after = one(True), one(False)
    return union_all(select(before.c.id, before.c.side), select(after.c.id, after.c.side))


@lru_cache(maxsize=64)
def _prepared_neighbours(actor: Actor, filters: RunFilters, only: int | None) -> Prepared:
    """``_neighbours_statement`` without a search, run on the DBAPI cursor
    (``prepared.Prepared``). Building the statement costs more than running it (about
    5 ms of CPU against well under one for the query), and SQLAlchemy's execution of it
    about 0.3 ms more (issue 18): kept per (viewer, list filters, workspace), the 64 most
    recent. Only the run's own key values change between run pages."""
    return Prepared(_neighbours_statement(actor, filters, only))


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
