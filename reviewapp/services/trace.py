"""The trace of one run: everything recorded about it, in one read (SPEC 9, S001 §9)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..domain.self_evaluation import AIOPS_KEY, VERIFIER_KEY, read_self_evaluation
from ..errors import Forbidden
from ..models import (
    DiagnosisSession,
    DiagnosticReport,
    DiagnosticStep,
    Feedback,
    Message,
    Run,
    ToolCall,
    User,
)
from ..queries import get_run_by_external_id_for
from .blind import is_blind
from .runs import check_run_id


@dataclass(frozen=True)
class FeedbackRow:
    """One reviewer's rating of one part of the run, with the author's username."""

    feedback: Feedback
    author: str


@dataclass(frozen=True)
class RunTrace:
    """The read model behind ``GET /api/runs/<run_id>/trace``.

    ``self_evaluation`` is read tolerantly (legacy roots wrapped, keys may be missing:
    SPEC 5). ``has_feedback``: the run has a verdict (``run.feedback``) or at least one
    reviewer rating. ``verdict`` is ``run.feedback`` as the actor may see it; while the run
    is ``blind`` for them (services/blind.py) ``verdict`` is ``None`` and ``feedback``
    holds only their own ratings. ``step_ids`` maps ``diagnostic_step.id`` to the agent's step id for
    the tool calls that belong to a step.
    """

    run: Run
    session: DiagnosisSession
    messages: list[Message]
    steps: list[DiagnosticStep]
    report: DiagnosticReport | None
    tool_calls: list[ToolCall]
    step_ids: dict[int, str | None]
    self_evaluation: dict[str, Any]
    feedback: list[FeedbackRow]
    has_feedback: bool
    verdict: str | None
    blind: bool
    has_verifier_evaluation: bool
    has_aiops_rule_evaluation: bool


def get_trace(session: Session, actor: Actor, run_id: str) -> RunTrace:
    """The trace of the run whose agent id is ``run_id``, if the actor may read it: a
    member (any role) of its workspace, an ingest token of its workspace, or the system.

    Raises ``ValidationFailed`` (``run_id`` not a valid run id, ``runs.check_run_id``: a
    run with such an id cannot exist) and ``Forbidden`` for a run that does not exist or
    is not the actor's (identical, SPEC 2).
    """
    check_run_id(run_id)
    run = get_run_by_external_id_for(session, actor, run_id, Role.REVIEWER)
    if run is None:
        raise Forbidden()
    diagnosis_session = session.get(DiagnosisSession, run.diagnosis_session_id)
    assert diagnosis_session is not None  # FK, same workspace
    messages = list(session.scalars(
        select(Message).where(Message.run_pk == run.id).order_by(Message.ordinal)))
    steps = list(session.scalars(
        select(DiagnosticStep).where(DiagnosticStep.run_pk == run.id)
        .order_by(DiagnosticStep.ordinal)))
    report = session.scalars(
        select(DiagnosticReport).where(DiagnosticReport.run_pk == run.id)).one_or_none()
    tool_calls = list(session.scalars(
        select(ToolCall).where(ToolCall.run_pk == run.id)
        .order_by(ToolCall.ordinal, ToolCall.started_at, ToolCall.id)))
    blind = is_blind(session, actor, run.id)
    ratings = (select(Feedback, User.username).join(User, User.id == Feedback.author_id)
               .where(Feedback.run_pk == run.id, Feedback.workspace_id == run.workspace_id))
    if blind:  # blind review: only the actor's own ratings
        ratings = ratings.where(Feedback.author_id == actor.user_id)
    feedback = [FeedbackRow(row, username) for row, username in session.execute(
        ratings.order_by(Feedback.created_at, Feedback.id))]
    verdict = None if blind else run.feedback
    evaluation = read_self_evaluation(run.self_evaluation)
    return RunTrace(
        run=run,
        session=diagnosis_session,
        messages=messages,
        steps=steps,
        report=report,
        tool_calls=tool_calls,
        step_ids={s.id: s.step_id for s in steps},
        self_evaluation=evaluation,
        feedback=feedback,
        has_feedback=verdict is not None or bool(feedback),
        verdict=verdict,
        blind=blind,
        has_verifier_evaluation=VERIFIER_KEY in evaluation,
        has_aiops_rule_evaluation=AIOPS_KEY in evaluation,
    )
