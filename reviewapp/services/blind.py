"""Blind review (issue 16 "Blind review"): the one rule deciding whether a reader may see
other people's judgement of a run.

A run is **blind** for an actor when all of these hold:

- the actor is a user whose role in the run's workspace is ``reviewer`` (leads and
  admins always see everything; ingest tokens and the system are not reviewers);
- the run is an item of a queue of its workspace with ``blind`` on;
- the actor has not yet rated the run's answer-level target (a chat run's answer, an
  AIOps run's report — ``answer.answer_rating_condition``).

While a run is blind for them, the actor sees only their own ratings of it: no other
reviewer's ratings, reasons, comments or corrections (thumbs summaries, trace API), no
run verdict (badge, runs list column and verdict filter, trace API), no triage state
and no case link. Every reader of those calls this module: ``runs.detail`` (page,
timeline, verdict badge), ``review`` (thumbs fragments), ``trace`` (JSON API),
``runs.listing`` (runs list), ``cases`` (case library). Exports, the dashboard, the
agreement and alignment pages and the triage pages are for leads and admins only.

Reads only; never commits.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import and_, exists, false, or_, select
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..models import Case, Feedback, Membership, QueueItem, ReviewQueue, Run, Workspace
from ..queries import role_in
from .answer import answer_rating_condition

LEAD_ROLES = Role.LEAD.at_least()


def blind_condition(actor: Actor) -> Any:
    """SQL condition on ``Run``: the run is blind for ``actor`` (module docstring). Always
    false for tokens, the system and an empty actor."""
    if not actor.is_user:
        return false()
    return blind_condition_of(actor.user_id)


def leads_run_workspace(user_id: Any) -> Any:
    """SQL condition on ``Run``: the user ``user_id`` (a user id, or a bound parameter)
    leads or administers the run's workspace (sees everything of its runs; decides its
    disputes, ``adjudication``)."""
    return exists().where(Membership.workspace_id == Run.workspace_id,
                          Membership.user_id == user_id,
                          role_in(Membership.role, LEAD_ROLES))


def blind_condition_of(user_id: Any) -> Any:
    """``blind_condition`` of the user ``user_id``: a user id, or a bound parameter (a
    statement built once and run for any user, e.g. ``runs._loading``)."""
    leads = leads_run_workspace(user_id)
    in_blind_queue = exists().where(QueueItem.run_pk == Run.id,
                                    ReviewQueue.id == QueueItem.queue_id,
                                    ReviewQueue.workspace_id == Run.workspace_id,
                                    ReviewQueue.blind.is_(True))
    rated = (select(Feedback.id)
             .where(Feedback.run_pk == Run.id, Feedback.author_id == user_id,
                    answer_rating_condition())
             .exists())
    return and_(in_blind_queue, ~leads, ~rated)


def not_blind_case(actor: Actor) -> Any:
    """SQL condition on ``Case``: its run is not blind for the actor (a case without a
    run always passes)."""
    # Run is FROM inside (the list joins Run outside too); Case correlates to the list.
    return or_(Case.run_pk.is_(None), ~select(Run.id).where(
        Run.id == Case.run_pk, blind_condition(actor)).correlate_except(Run).exists())


def blind_runs(session: Session, actor: Actor, run_pks: Iterable[int]) -> frozenset[int]:
    """Which of ``run_pks`` are blind for ``actor`` (one query). No access check: the
    caller has resolved the runs through the actor's scope; a run the actor cannot see
    is simply reported as it would be for a member."""
    pks = sorted(set(run_pks))
    if not pks or not actor.is_user:
        return frozenset()
    return frozenset(session.scalars(
        select(Run.id).where(Run.id.in_(pks), blind_condition(actor))))


def is_blind(session: Session, actor: Actor, run_pk: int) -> bool:
    """Whether run ``run_pk`` is blind for ``actor`` (``blind_runs`` for one run)."""
    return run_pk in blind_runs(session, actor, [run_pk])


def blind_workspaces(session: Session, actor: Actor, workspace_ids: Iterable[int]
                     ) -> tuple[frozenset[int], frozenset[int]]:
    """Of ``workspace_ids``: (those the actor leads or administers, those where a run may
    be blind for them — a queue there is blind and they do not lead it). A list can
    then leave ``blind_condition``, a per-row check, out of every other workspace's rows
    (issue 18: it cost 7 us a case on a 10,000-case search count). One query."""
    ids = sorted(set(workspace_ids))
    if not ids or not actor.is_user:
        return frozenset(), frozenset()
    leads = exists().where(Membership.workspace_id == Workspace.id,
                           Membership.user_id == actor.user_id,
                           role_in(Membership.role, LEAD_ROLES))
    blind_queue = exists().where(ReviewQueue.workspace_id == Workspace.id,
                                 ReviewQueue.blind.is_(True))
    rows = session.execute(select(Workspace.id, leads, blind_queue).where(Workspace.id.in_(ids)))
    led, blind = set(), set()
    for ws_id, is_lead, has_blind_queue in rows:
        if is_lead:
            led.add(ws_id)
        elif has_blind_queue:
            blind.add(ws_id)
    return frozenset(led), frozenset(blind)
