"""Runs, what every run-page read starts with: the run with its access check, blind state,
verdict rule, a lead's decision and an open dispute in one query, and the viewer's and
everyone's ratings of its parts."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

from sqlalchemy import Select, bindparam, false, null, select
from sqlalchemy.orm import Session, aliased

from ...actors import Actor, Role
from ...domain.verdicts import VERDICTS
from ...errors import Forbidden
from ...models import DiagnosisSession, Run, User, VerdictDecision, Workspace
from ...prepared import Prepared
from ...queries import scope_to_actor, scope_to_member
from .. import feedback as feedback_service
from ..answer import run_answer_target
from ..blind import blind_condition, blind_condition_of, leads_run_workspace
from ..queue_governing import disputed_queue_id, governing_queue_id

RatingKey = tuple[str, int, str]


@dataclass(frozen=True)
class Decided:
    """A lead's decision that set the run's verdict (issue 16, ``adjudication.decide``):
    ``verdict`` (useful | not_useful) and its ``label`` ("Useful"), ``lead`` the deciding
    lead's username ("(deleted user)" once deleted)."""

    verdict: str
    label: str
    lead: str

    @property
    def by(self) -> str:
        """Who decided, as the page names them: "ann (lead)", the username and the role,
        or only "lead" for a lead whose username is the role's own word (a new user's
        walk read "lead (lead)")."""
        return self.lead if self.lead.casefold() == "lead" else f"{self.lead} (lead)"


def decision_shown(decision: Decided | None, verdict_target: tuple[str, int] | None,
                   target_type: str, target_id: int) -> Decided | None:
    """The lead's ``decision`` a thumbs control of ``(target_type, target_id)`` shows:
    only the control of the run's ``verdict_target`` (its answer-level target,
    ``answer.answer_target``), whose ratings the lead decided between; ``None`` for any
    other control and when no lead decided (issue 16). The one rule of the run page's
    controls and of a control's htmx fragment (``target_decision``)."""
    return decision if decision is not None and verdict_target == (target_type, target_id) else None


def target_decision(session: Session, actor: Actor, run_pk: int, target_type: str,
                    target_id: int) -> Decided | None:
    """``decision_shown`` for one control of run ``run_pk`` read on its own (a thumbs
    fragment after a rating): the run's latest lead decision (``None`` while the run is
    blind for the actor, as on the page) and its answer-level target
    (``answer.run_answer_target``). Raises ``Forbidden`` when the actor may not see the run."""
    loaded = load_run(session, actor, run_pk, dispute=False)
    if loaded.decision is None:
        return None
    return decision_shown(loaded.decision, run_answer_target(session, run_pk, loaded.run.kind),
                          target_type, target_id)


@dataclass(frozen=True)
class Dispute:
    """The run is disputed (issue 16, ``queue_governing.disputed_queue_id``): the
    reviewers of its governing queue ``queue_id`` split and no lead has decided it yet.
    ``may_decide``: the viewer leads or administers the run's workspace, so the
    adjudication page is theirs to open."""

    queue_id: int
    may_decide: bool


class LoadedRun(NamedTuple):
    """What ``load_run`` reads of a run in one query (its docstring)."""

    run: Any
    diagnosis_session: Any
    workspace: Any
    blind: bool
    verdict_reviewers: int
    decision: Decided | None
    dispute: Dispute | None
    leads: bool = False


# The columns a run page reads, as plain rows (no ORM objects: the ORM's loading of three
# entities cost several times the read itself, issue 18). Large JSON no run page shows
# (the trace API does) is not read nor parsed: the run's orchestration trace, the session's
# query, answer and self-evaluation.
_RUN_COLUMNS = tuple(c for c in Run.__table__.c if c.key != "orchestration_trace")
_SESSION_COLUMNS = tuple(c for c in DiagnosisSession.__table__.c
                         if c.key not in ("query", "answer", "self_evaluation"))
_WORKSPACE_COLUMNS = tuple(Workspace.__table__.c)
RunRow = namedtuple("RunRow", [c.key for c in _RUN_COLUMNS])
RunRow.__doc__ = "A run as the run page reads it: ``Run``'s columns but its orchestration trace."
SessionRow = namedtuple("SessionRow", [c.key for c in _SESSION_COLUMNS])
SessionRow.__doc__ = "A run's session: ``DiagnosisSession``'s columns but query, answer, evaluation."
WorkspaceRow = namedtuple("WorkspaceRow", [c.key for c in _WORKSPACE_COLUMNS])
WorkspaceRow.__doc__ = "A workspace: ``Workspace``'s columns."


def _run_statement(blind: Any, leads: Any, dispute: bool = True) -> Select[Any]:
    """The run's, its session's and workspace's columns (``_RUN_COLUMNS`` ...),
    ``blind`` (a condition on ``Run``), the N of its governing queue, its latest lead
    decision (verdict, lead's username; NULLs when none), its governing queue's id while
    it is disputed (``queue_governing.disputed_queue_id``, NULL otherwise) and ``leads``
    (a condition on ``Run``: the viewer leads its workspace), for ``:run_pk``; the caller
    adds the access check. Without ``dispute`` those two are NULL (the timeline's poll:
    PostgreSQL plans the dispute's subqueries on every execution, about 1-2 ms)."""
    reviewers = governing_queue_id(Run.id, Run.workspace_id, "reviewers_per_run")
    latest = (select(VerdictDecision.id).where(VerdictDecision.run_pk == Run.id)
              .order_by(VerdictDecision.id.desc()).limit(1).scalar_subquery())
    decision, decider = aliased(VerdictDecision), aliased(User)
    ds, ws = DiagnosisSession.__table__.c, Workspace.__table__.c
    return (select(*_RUN_COLUMNS,
                   *(ds[c.key].label(f"session_{c.key}") for c in _SESSION_COLUMNS),
                   *(ws[c.key].label(f"workspace_{c.key}") for c in _WORKSPACE_COLUMNS),
                   blind.label("blind"), reviewers.label("reviewers"),
                   decision.verdict.label("decision"), decider.username.label("decider"),
                   (disputed_queue_id() if dispute else null()).label("disputed"),
                   (leads if dispute else null()).label("leads"))
            .select_from(Run)
            .join(DiagnosisSession, DiagnosisSession.id == Run.diagnosis_session_id)
            .join(Workspace, Workspace.id == Run.workspace_id)
            .outerjoin(decision, decision.id == latest)
            .outerjoin(decider, decider.id == decision.decided_by)
            .where(Run.id == bindparam("run_pk")))


@cache
def _user_run_statement(dispute: bool = True) -> Prepared:
    """``_run_statement`` for the user ``:actor_user_id`` (membership in the same query),
    built once (per ``dispute``) and run on the DBAPI cursor (``prepared.Prepared``): a
    page view then costs no statement construction nor ORM loading (issue 18)."""
    user_id = bindparam("actor_user_id")
    return Prepared(scope_to_member(
        _run_statement(blind_condition_of(user_id), leads_run_workspace(user_id), dispute),
        Run.workspace_id, Role.REVIEWER))


def load_run(session: Session, actor: Actor, run_pk: int, dispute: bool = True) -> LoadedRun:
    """The run, its session and workspace (plain rows: ``RunRow``, ``SessionRow``,
    ``WorkspaceRow``, read-only), whether the run is blind for the actor
    (``blind.blind_condition``), how many reviewers' answer ratings make its verdict
    (N of its governing queue, ``queue_governing``, 1 when none; issue 16), the
    lead's decision that set it (``Decided``, the latest; ``None`` when no lead decided)
    and its open dispute (``Dispute``; ``None`` when there is none), the last two
    ``None`` while the run is blind for the actor, and whether the actor leads or
    administers the run's workspace (``leads``: the role in that workspace, not the
    highest anywhere), in one query; without ``dispute`` (a reader that shows no verdict)
    the dispute is not read and is ``None``, ``leads`` False. Raises ``Forbidden``."""
    if actor.is_user:
        session.flush()  # as the ORM's autoflush would before a read
        row = _user_run_statement(dispute).one_or_none(
            session.connection(), {"run_pk": run_pk, "actor_user_id": actor.user_id})
    else:
        stmt = scope_to_actor(_run_statement(blind_condition(actor), false(), dispute), actor,
                              Run.workspace_id, Role.REVIEWER)
        row = session.execute(stmt, {"run_pk": run_pk}).one_or_none()
    if row is None:
        raise Forbidden()
    runs, sessions = len(_RUN_COLUMNS), len(_RUN_COLUMNS) + len(_SESSION_COLUMNS)
    workspaces = sessions + len(_WORKSPACE_COLUMNS)
    blind = bool(row.blind)
    decided = None if blind or row.decision is None else Decided(
        row.decision, VERDICTS.label(row.decision), row.decider or "(deleted user)")
    dispute = None if blind or row.disputed is None else Dispute(row.disputed, bool(row.leads))
    return LoadedRun(RunRow._make(row[:runs]), SessionRow._make(row[runs:sessions]),
                     WorkspaceRow._make(row[sessions:workspaces]), blind,
                     max(1, row.reviewers or 1), decided, dispute, bool(row.leads))


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
