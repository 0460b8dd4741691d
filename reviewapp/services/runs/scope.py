"""Runs, which ones a list covers: the visible runs of the actor's workspaces narrowed by
``RunFilters``, one index range per workspace (issue 18). The condition a review queue
adds is ``queue_fill.takes_in`` (``rateable.rateable_run`` and an answer-level target;
SPEC 2, 8)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import Select, and_, exists, func, select
from sqlalchemy import false as sa_false
from sqlalchemy.orm import Session

from ...actors import Actor
from ...domain.search_text import search_term
from ...models import Feedback, RatedRun, Run, Workspace
from ...queries import runs_of_workspace_visible_to, runs_visible_to
from ..access import WorkspaceRole, roles_of
from ..blind import blind_condition
from ..keyset import SortOrder
from ..run_text import text_condition
from .filters import RunFilters


def reviewed_by(actor: Actor) -> Any:
    """EXISTS: the actor rated some part of the run."""
    if not actor.is_user:
        return sa_false()
    return exists().where(Feedback.run_pk == Run.id, Feedback.author_id == actor.user_id)


def reviewed_in(actor: Actor, workspace_id: int) -> Any:
    """``reviewed_by`` for the runs of one workspace, as ``Run.id IN`` the runs the actor
    rated there (the ``(author_id, workspace_id, run_pk)`` index): for counting, where
    the database then starts from the actor's ratings — a capped count reads about the
    cap — instead of testing runs one by one until the cap (50,000 runs for 1,000
    matches at 2 % rated). Not for an ordered page: SQLite would then read and sort
    every rated run instead of walking the workspace's runs in order."""
    if not actor.is_user:
        return sa_false()
    return Run.id.in_(select(Feedback.run_pk).where(
        Feedback.author_id == actor.user_id, Feedback.workspace_id == workspace_id))


def rated_by(actor: Actor, stmt: Select[Any], workspace_id: int | None = None) -> Select[Any]:
    """``stmt`` (a select over ``Run``) narrowed to the runs the actor (a user) rated, as a
    join with their list of rated runs (``rated_run``, kept by ``services.rated_runs``):
    at most one row per run, so the database can either start from the user's rated
    runs of the workspace in list order (the index ``(author_id, workspace_id,
    run_created_at, run_pk)``; ``list_order`` orders by its columns) or test a run it
    walks by one key lookup (issue 18). ``workspace_id``: the workspace the statement
    covers, said to the list too. (The row's copies of the run's workspace and time
    are equal to the run's, but not said in the join: a planner would take the three
    equalities for independent and expect one row.)"""
    on = [RatedRun.run_pk == Run.id, RatedRun.author_id == actor.user_id]
    if workspace_id is not None:
        on.append(RatedRun.workspace_id == workspace_id)
    return stmt.join(RatedRun, and_(*on))


def list_order(order: SortOrder, actor: Actor, filters: RunFilters) -> SortOrder:
    """The order a runs-list page of ``filters`` is read in: ``order`` itself, except for
    "reviewed by me" newest or oldest first (a user's), where its time key is the kept
    list's copy of the run's ``created_at`` and its id the list's ``run_pk`` (equal to
    the run's: ``rated_by`` joins on it), so the page is a range of the user's list
    index — read from the cursor on, 50 rows for 50 runs however many runs the
    workspace holds — instead of the workspace's runs tested one by one (issue 18). Same
    name and key values: the cursors are the same."""
    if not (actor.is_user and filters.reviewed == "mine") or len(order.keys) != 2:
        return order
    time, last = order.keys
    if time.expression is not Run.created_at or last.expression is not Run.id:
        return order
    return replace(order, keys=(replace(time, expression=RatedRun.run_created_at),
                                replace(last, expression=RatedRun.run_pk)), identity=Run.id)


def filtered_runs(actor: Actor, filters: RunFilters, only_workspace: int | None, *,
                  counting: bool = False) -> Select[Any]:
    """The visible runs narrowed by ``filters``, unordered. ``only_workspace`` adds an
    equality on the workspace (an index range instead of a scan) when the actor sees one
    workspace or picked one; the membership check stays in the query either way. For
    a list over several workspaces, ``scoped_runs`` (one such statement per workspace).
    ``counting``: the statement is for a count, not a page (``reviewed_in``)."""
    workspace_id = filters.workspace_id or only_workspace
    stmt = (runs_of_workspace_visible_to(actor, workspace_id) if workspace_id is not None
            else runs_visible_to(actor))
    if counting and workspace_id is not None and filters.reviewed == "mine":
        return narrowed(stmt.where(reviewed_in(actor, workspace_id)), actor,
                        replace(filters, reviewed=None))
    return narrowed(stmt, actor, filters, workspace_id)


def scoped_runs(actor: Actor, filters: RunFilters, workspaces: Sequence[WorkspaceRole], *,
                counting: bool = False) -> list[Select[Any]]:
    """The runs of ``filters`` as one ``filtered_runs`` statement per workspace the list
    covers: the picked workspace, the token's, or each of ``workspaces`` (the actor's,
    from ``single_workspace``, read once per request). Each statement is one range of
    the ``(workspace_id, created_at, id)`` index with a constant membership check, so
    ``keyset.page`` / ``keyset.ordered`` merge ordered ranges and ``capped_count`` counts
    them without the per-row membership check that made the database scan and sort
    every run of a two-workspace user (issue 18). ``counting``: for ``capped_count``
    (``filtered_runs``)."""
    if filters.workspace_id is not None:
        return [filtered_runs(actor, filters, None, counting=counting)]
    if filters.workspace_slug:
        ids = [w.workspace_id for w in workspaces if w.slug == filters.workspace_slug]
        return [filtered_runs(actor, filters, ids[0] if ids else None, counting=counting)]
    if actor.is_token:
        return [filtered_runs(actor, filters, actor.token_workspace_id, counting=counting)]
    ids = [w.workspace_id for w in workspaces]
    if len(ids) <= 1:
        return [filtered_runs(actor, filters, ids[0] if ids else None, counting=counting)]
    return [filtered_runs(actor, filters, workspace_id, counting=counting) for workspace_id in ids]


def rated_count_workspaces(actor: Actor, filters: RunFilters,
                           workspaces: Sequence[WorkspaceRole]) -> list[int] | None:
    """The workspaces a list of ``filters`` covers when it is every visible run of them
    (no filter but the workspace, ``reviewed`` aside), for a user: then the runs of it
    they rated are their kept count of rated runs there (``rated_runs.counted``) and
    need no count of their ratings. ``None`` otherwise (another filter, or an actor who
    is not a user); only workspaces of ``workspaces`` (the actor's) are named."""
    if not actor.is_user or replace(filters, workspace_id=None, workspace_slug=None,
                                    reviewed=None).active:
        return None
    if filters.workspace_id is not None:
        return [w.workspace_id for w in workspaces if w.workspace_id == filters.workspace_id]
    if filters.workspace_slug:
        return [w.workspace_id for w in workspaces if w.slug == filters.workspace_slug]
    return [w.workspace_id for w in workspaces]


def narrowed(stmt: Select[Any], actor: Actor, filters: RunFilters,
             workspace_id: int | None = None) -> Select[Any]:
    """``stmt`` (a select over ``Run``) narrowed by every filter but the workspace id
    (``workspace_id``: the one workspace ``stmt`` covers, when it is one)."""
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
        stmt = stmt.where(~reviewed_by(actor))
    elif filters.reviewed == "mine":
        stmt = rated_by(actor, stmt, workspace_id) if actor.is_user else stmt.where(sa_false())
    if filters.failed_calls == "yes":
        stmt = stmt.where(Run.failed_tool_call_count > 0)
    term = search_term(filters.q)
    if term and filters.matched is not None:  # the few runs holding it, read once
        stmt = stmt.where(Run.id.in_(filters.matched))
    elif term:  # through the full-text index (services.run_text, SPEC 8)
        stmt = stmt.where(text_condition(term, stmt, probe=filters.probe))
    return stmt


def single_workspace(session: Session, actor: Actor) -> tuple[list[WorkspaceRole], int | None]:
    """The actor's workspaces, and the id of the only one when there is exactly one."""
    workspaces = roles_of(session, actor)
    return workspaces, (workspaces[0].workspace_id if len(workspaces) == 1 else None)
