"""TEMPORARY stand-in for the feedback services of issue 5 — delete on merge.

The review pages (issue 6) are built against the interface agreed for
``reviewapp/services/feedback.py``; until that module lands, this thin version lets the
pages and their browser tests run. It implements the same four signatures and the rules
the pages depend on (validation, the owner check through the target's run, upsert on
(author, target, subject), delete own only, answer-level rating sets the run verdict), and
nothing more: no FeedbackEvent history, no case library, no triage item.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..errors import Forbidden, ValidationFailed
from ..models import (
    DiagnosticReport, DiagnosticStep, Feedback, Message, MessageRole, Rating, Run, RunKind,
    TargetType, User, Workspace,
)
from ..models.base import utcnow
from ..queries import insert_for, scope_to_actor

DEFAULT_REASONS = ("incorrect", "incomplete", "citation", "unsafe", "other")
LIMITS = {"subject_id": 160, "reason": 80, "comment": 2000, "correction": 4000}


@dataclass(frozen=True)
class TargetSummary:
    """Every reviewer's ratings of one target: counts, initials, and whether they differ."""

    positive: int = 0
    negative: int = 0
    positive_initials: list[str] = field(default_factory=list)
    negative_initials: list[str] = field(default_factory=list)
    disagree: bool = False


def _clean(name: str, value: str | None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationFailed(name, "must be text")
    if not value.strip():
        return None
    if len(value) > LIMITS[name]:
        raise ValidationFailed(name, f"at most {LIMITS[name]} characters")
    return value


def _run_of_target(session: Session, actor: Actor, target_type: str, target_id: int,
                   subject: str | None) -> tuple[Run, Workspace, bool]:
    """(run, workspace, answer_level) of a target the actor may rate; Forbidden else."""
    model = {
        TargetType.CHAT_MESSAGE.value: Message, TargetType.CITATION.value: Message,
        TargetType.DIAGNOSTIC_STEP.value: DiagnosticStep,
        TargetType.DIAGNOSTIC_REPORT.value: DiagnosticReport,
    }[target_type]
    stmt = scope_to_actor(
        select(model, Run, Workspace).join(Run, Run.id == model.run_pk)
        .join(Workspace, Workspace.id == Run.workspace_id).where(model.id == target_id),
        actor, Run.workspace_id, Role.REVIEWER,
    )
    row = session.execute(stmt).one_or_none()
    if row is None:
        raise Forbidden()
    target, run, workspace = row
    answer_level = False
    if model is Message:
        if target.role != MessageRole.ASSISTANT.value:
            raise Forbidden()
        if target_type == TargetType.CITATION.value:
            if subject not in {str(c.get("id")) for c in target.citations if isinstance(c, dict)}:
                raise Forbidden()
        else:
            last = session.scalar(
                select(Message.id).where(Message.run_pk == run.id,
                                         Message.role == MessageRole.ASSISTANT.value)
                .order_by(Message.ordinal.desc()).limit(1))
            answer_level = last == target.id and run.kind == RunKind.CHAT.value
    elif model is DiagnosticReport:
        answer_level = True
    return run, workspace, answer_level


def upsert_feedback(session: Session, actor: Actor, target_type: str, target_id: int,
                    subject_id: str | None, rating: str, reason: str | None = None,
                    comment: str | None = None, correction: str | None = None) -> Feedback:
    """Create or update the actor's rating of one target (SPEC 6.1); answer-level
    ratings set the run verdict (SPEC 6.2). Raises ValidationFailed, Forbidden."""
    if target_type not in {t.value for t in TargetType}:
        raise ValidationFailed("target_type", "unknown target type")
    if rating not in {r.value for r in Rating}:
        raise ValidationFailed("rating", "must be positive or negative")
    if isinstance(target_id, bool) or not isinstance(target_id, int):
        raise ValidationFailed("target_id", "must be an integer")
    subject = _clean("subject_id", subject_id) if target_type == TargetType.CITATION.value else None
    if target_type == TargetType.CITATION.value and subject is None:
        raise ValidationFailed("subject_id", "required for a citation")
    reason, comment, correction = (_clean("reason", reason), _clean("comment", comment),
                                   _clean("correction", correction))
    if not actor.is_user:
        raise Forbidden()
    run, workspace, answer_level = _run_of_target(session, actor, target_type, target_id, subject)
    reasons = (workspace.settings or {}).get("feedback_reasons") or DEFAULT_REASONS
    if reason is not None and reason not in reasons:
        raise ValidationFailed("reason", f"must be one of {', '.join(reasons)}")
    now = utcnow()
    values = {"rating": rating, "reason": reason, "comment": comment,
              "correction": correction, "updated_at": now}
    stmt = insert_for(session, Feedback.__table__).values(
        author_id=actor.user_id, workspace_id=run.workspace_id, run_pk=run.id,
        target_type=target_type, target_id=target_id, subject_key=subject or "",
        created_at=now, **values,
    ).on_conflict_do_update(
        index_elements=["author_id", "target_type", "target_id", "subject_key"], set_=values)
    session.execute(stmt)
    if answer_level:
        run.feedback = "useful" if rating == Rating.POSITIVE.value else "not_useful"
    session.commit()
    return session.scalars(select(Feedback).where(
        Feedback.author_id == actor.user_id, Feedback.target_type == target_type,
        Feedback.target_id == target_id, Feedback.subject_key == (subject or ""),
    ).execution_options(populate_existing=True)).one()


def delete_feedback(session: Session, actor: Actor, feedback_id: int) -> Feedback:
    """Delete one of the actor's own ratings; anything else is Forbidden (SPEC 6.1).
    Returns the deleted row (detached) so callers know its target."""
    row = None
    if actor.is_user:
        row = session.scalars(scope_to_actor(
            select(Feedback).where(Feedback.id == feedback_id,
                                   Feedback.author_id == actor.user_id),
            actor, Feedback.workspace_id, Role.REVIEWER)).one_or_none()
    if row is None:
        raise Forbidden()
    session.delete(row)
    session.commit()
    return row


def list_my_feedback(session: Session, actor: Actor, run_pk: int) -> list[Feedback]:
    """The actor's own ratings on run ``run_pk`` (to restore the controls)."""
    if not actor.is_user:
        return []
    return list(session.scalars(scope_to_actor(
        select(Feedback).where(Feedback.run_pk == run_pk, Feedback.author_id == actor.user_id),
        actor, Feedback.workspace_id, Role.REVIEWER)))


def _initials(username: str) -> str:
    parts = [p for p in re.split(r"[._\-\s@]+", username) if p]
    if len(parts) >= 2:
        return (parts[0][0] + parts[1][0]).upper()
    return username[:2].upper()


def feedback_summary(session: Session, actor: Actor,
                     run_pk: int) -> dict[tuple[str, int, str], Any]:
    """Every reviewer's ratings per target of run ``run_pk``."""
    rows = session.execute(scope_to_actor(
        select(Feedback.target_type, Feedback.target_id, Feedback.subject_key,
               Feedback.rating, User.username)
        .join(User, User.id == Feedback.author_id).where(Feedback.run_pk == run_pk)
        .order_by(Feedback.id),
        actor, Feedback.workspace_id, Role.REVIEWER)).all()
    grouped: dict[tuple[str, int, str], dict[str, list[str]]] = {}
    for target_type, target_id, subject_key, rating, username in rows:
        entry = grouped.setdefault((target_type, target_id, subject_key or ""),
                                   {"positive": [], "negative": []})
        entry[rating].append(_initials(username))
    return {key: TargetSummary(len(v["positive"]), len(v["negative"]), v["positive"],
                               v["negative"], bool(v["positive"] and v["negative"]))
            for key, v in grouped.items()}
