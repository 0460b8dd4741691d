"""The reviewer's actions on the run page: rate a target, take a rating back, and the
state one thumbs control shows afterwards (SPEC 6.1, 8).

The rules live in ``services.feedback`` (validation, owner check, upsert, verdict); this
module only composes them with the read the page needs, so each thumbs endpoint calls
one service and re-renders its own fragment.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..domain.target_types import TARGET_TYPES
from ..errors import Forbidden
from ..models import Feedback, Run, TargetType, ToolCall, Workspace, target_model
from ..queries import scope_to_actor
from . import feedback as feedback_service
from .blind import is_blind
from .runs import TargetState, reason_choices, target_decision, tool_call_name, workspace_reasons


def _state(session: Session, actor: Actor, run_pk: int, workspace_id: int, target_type: str,
           target_id: int, subject_key: str) -> TargetState:
    key = (target_type, target_id, subject_key)
    mine = next((f for f in feedback_service.list_my_feedback(session, actor, run_pk)
                 if (f.target_type, f.target_id, f.subject_key or "") == key), None)
    summary = feedback_service.feedback_summary(session, actor, run_pk).get(key)
    decided = None
    if is_blind(session, actor, run_pk):  # blind review: others' ratings stay hidden
        summary = None
    elif summary is not None:  # what the page's control says of a lead's decision
        decided = target_decision(session, actor, run_pk, target_type, target_id)
    workspace = session.get(Workspace, workspace_id)
    reasons = workspace_reasons(workspace) if workspace is not None else []
    choices = reason_choices(workspace) if workspace is not None else ()
    positive = reason_choices(workspace, "positive") if workspace is not None else ()
    earlier = mine is not None and mine.id in feedback_service.earlier_version_ids(session, run_pk)
    name = None
    if target_type == TargetType.TOOL_CALL.value:  # named like its timeline row
        tool_name = session.scalar(select(ToolCall.tool_name).where(
            ToolCall.run_pk == run_pk, ToolCall.workspace_id == workspace_id,
            ToolCall.id == subject_key))
        name = tool_call_name(tool_name) if tool_name is not None else None
    run = session.get(Run, run_pk)
    return TargetState(target_type, target_id, subject_key, run_pk, mine, summary, reasons,
                       choices, positive, earlier, name=name, decided=decided,
                       run_kind=run.kind if run else "")


def rate_target(session: Session, actor: Actor, target_type: str, target_id: int,
                subject_id: str | None, rating: str, reason: str | None = None,
                comment: str | None = None, correction: str | None = None, *,
                switch: bool = False, based_on: str | None = None) -> TargetState:
    """Save the actor's rating through ``feedback.upsert_feedback`` (which validates,
    checks access, upserts and sets the run verdict for answer-level targets) and return
    the control's new state. ``switch``: only the thumb was clicked (texts kept, a reason
    of the other polarity dropped). ``based_on``: the rating the caller's form showed
    (``feedback.rating_version``; ``None``: no check). Raises ``ValidationFailed``,
    ``Forbidden``, ``Conflict`` (409: the rating changed since the form was shown)."""
    saved = feedback_service.upsert_feedback(
        session, actor, target_type, target_id, subject_id, rating,
        reason=reason, comment=comment, correction=correction, switch=switch,
        based_on=based_on)
    return _state(session, actor, saved.run_pk, saved.workspace_id, saved.target_type,
                  saved.target_id, saved.subject_key or "")


def clear_rating(session: Session, actor: Actor, feedback_id: int) -> TargetState:
    """Delete one of the actor's own ratings through ``feedback.delete_feedback`` and
    return the control's new (unrated) state. Raises ``Forbidden`` for a rating that is
    missing or not the actor's."""
    if not actor.is_user:
        raise Forbidden()
    row = session.execute(scope_to_actor(
        select(Feedback.run_pk, Feedback.workspace_id, Feedback.target_type,
               Feedback.target_id, Feedback.subject_key)
        .where(Feedback.id == feedback_id, Feedback.author_id == actor.user_id),
        actor, Feedback.workspace_id, Role.REVIEWER)).one_or_none()
    if row is None:
        raise Forbidden()
    feedback_service.delete_feedback(session, actor, feedback_id)
    run_pk, workspace_id, target_type, target_id, subject_key = row
    return _state(session, actor, run_pk, workspace_id, target_type, target_id,
                  subject_key or "")


def target_state(session: Session, actor: Actor, target_type: str, target_id: int,
                 subject_id: str | None) -> TargetState:
    """The current state of one thumbs control (to re-render it next to a validation
    error). Raises ``Forbidden`` when the actor cannot see the target's run."""
    if target_type not in TARGET_TYPES:
        raise Forbidden()  # a tampered form: no control of this page has that type
    spec = TARGET_TYPES.get(target_type)
    model = target_model(target_type)
    subject = (subject_id or "") if spec.subject is not None else ""
    stmt = (select(Run.id, Run.workspace_id).join(model, getattr(model, spec.parent) == Run.id)
            .where(getattr(model, spec.key) == target_id))
    if spec.subject_column is not None:  # the subject completes the key (a tool call)
        stmt = stmt.where(getattr(model, spec.subject_column) == subject).limit(1)
    row = session.execute(scope_to_actor(stmt, actor, Run.workspace_id, Role.REVIEWER)
                          ).one_or_none()
    if row is None:
        raise Forbidden()
    return _state(session, actor, row[0], row[1], target_type, target_id, subject)
