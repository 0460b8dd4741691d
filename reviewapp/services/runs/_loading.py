"""Runs, what every run-page read starts with: the run with its access check, blind state,
verdict rule and a lead's decision in one query, and the viewer's and everyone's ratings
of its parts."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import Select, bindparam, select
from sqlalchemy.orm import Session, aliased, defer

from ...actors import Actor, Role
from ...domain.verdicts import VERDICTS
from ...errors import Forbidden
from ...models import DiagnosisSession, Run, User, VerdictDecision, Workspace
from ...queries import scope_to_actor, scope_to_member
from .. import feedback as feedback_service
from ..blind import blind_condition, blind_condition_of
from ..queue_governing import governing_queue_id

RatingKey = tuple[str, int, str]


@dataclass(frozen=True)
class Decided:
    """A lead's decision that set the run's verdict (issue 16, ``adjudication.decide``):
    ``verdict`` (useful | not_useful) and its ``label`` ("Useful"), ``lead`` the deciding
    lead's username ("(deleted user)" once deleted)."""

    verdict: str
    label: str
    lead: str


def _run_statement(blind: Any) -> Select[Any]:
    """The run with its session and workspace, ``blind`` (a condition on ``Run``), the
    N of its governing queue and its latest lead decision (verdict, lead's username;
    NULLs when none), for ``:run_pk``; the caller adds the access check."""
    reviewers = governing_queue_id(Run.id, Run.workspace_id, "reviewers_per_run")
    latest = (select(VerdictDecision.id).where(VerdictDecision.run_pk == Run.id)
              .order_by(VerdictDecision.id.desc()).limit(1).scalar_subquery())
    decision, decider = aliased(VerdictDecision), aliased(User)
    return (select(Run, DiagnosisSession, Workspace, blind, reviewers, decision.verdict,
                   decider.username)
            .join(DiagnosisSession, DiagnosisSession.id == Run.diagnosis_session_id)
            .join(Workspace, Workspace.id == Run.workspace_id)
            .outerjoin(decision, decision.id == latest)
            .outerjoin(decider, decider.id == decision.decided_by)
            .where(Run.id == bindparam("run_pk"))
            # Large JSON no run page shows (the trace API does): not read nor parsed here.
            .options(defer(Run.orchestration_trace), defer(DiagnosisSession.query),
                     defer(DiagnosisSession.answer), defer(DiagnosisSession.self_evaluation)))


@cache
def _user_run_statement() -> Select[Any]:
    """``_run_statement`` for the user ``:actor_user_id`` (membership in the same query),
    built once: a page view then costs no statement construction (issue 18)."""
    user_id = bindparam("actor_user_id")
    return scope_to_member(_run_statement(blind_condition_of(user_id)), Run.workspace_id,
                           Role.REVIEWER)


def load_run(session: Session, actor: Actor, run_pk: int
              ) -> tuple[Run, DiagnosisSession, Workspace, bool, int, Decided | None]:
    """The run, its session and workspace, whether the run is blind for the actor
    (``blind.blind_condition``), how many reviewers' answer ratings make its verdict
    (N of its governing queue, ``queue_governing``, 1 when none; issue 16) and the
    lead's decision that set it (``Decided``, the latest; ``None`` when no lead decided,
    and while the run is blind for the actor), in one query. Raises ``Forbidden``."""
    if actor.is_user:
        row = session.execute(_user_run_statement(),
                              {"run_pk": run_pk, "actor_user_id": actor.user_id}).one_or_none()
    else:
        stmt = scope_to_actor(_run_statement(blind_condition(actor)), actor, Run.workspace_id,
                              Role.REVIEWER)
        row = session.execute(stmt, {"run_pk": run_pk}).one_or_none()
    if row is None:
        raise Forbidden()
    blind = bool(row[3])
    decided = None if blind or row[5] is None else Decided(
        row[5], VERDICTS.label(row[5]), row[6] or "(deleted user)")
    return row[0], row[1], row[2], blind, max(1, row[4] or 1), decided


def ratings_of(session: Session, actor: Actor, run: Run, blind: bool
               ) -> tuple[dict[RatingKey, Any], dict[RatingKey, Any], frozenset[int]]:
    """The actor's own ratings of ``run``'s parts, every reviewer's counts (empty while
    the run is ``blind`` for them), both keyed by (target_type, target_id, subject_key),
    and the ids of the actor's ratings given on an earlier version of their target's
    text (SPEC 10); ``run`` was access-checked by ``load_run``: no second check. Raises
    ``Forbidden`` for an actor that is not a user (ratings belong to people)."""
    if actor.user_id is None:
        raise Forbidden()
    mine, earlier = {}, set()
    for f, on_earlier in feedback_service.my_ratings_of_visible_run(session, actor.user_id, run.id):
        mine[(f.target_type, f.target_id, f.subject_key or "")] = f
        if on_earlier:
            earlier.add(f.id)
    summary = {} if blind else feedback_service.summary_of_visible_run(session, run.id)
    return mine, summary, frozenset(earlier)
