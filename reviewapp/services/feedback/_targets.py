"""Package-private: what feedback checks before any write — the input rules (no
database) and the owner check of a target through its run, in the same query as the
membership (SPEC 2, 6.1)."""


from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

from sqlalchemy import Integer, and_, bindparam, select
from sqlalchemy.orm import Session

from ... import models
from ...actors import Actor, Role
from ...domain.feedback import (
    COMMENT_MAX,
    CORRECTION_MAX,
    RATINGS,
    REASON_MAX,
    SUBJECT_MAX,
    TARGET_TYPES,
    InvalidFeedback,
    check_choice,
    clean_text,
    has_answer_text,
)
from ...domain.target_types import TARGET_TYPES as TARGET_TYPE_REGISTRY
from ...domain.target_types import subject_types
from ...errors import Forbidden, ValidationFailed
from ...models import (
    DiagnosticReport,
    Feedback,
    Message,
    MessageRole,
    Run,
    RunKind,
    TargetType,
    Workspace,
)
from ...models.base import MAX_ID
from ...prepared import Prepared
from ...queries import scope_to_actor, scope_to_member
from ..secret_scan import redact_typed


class StoredRating(NamedTuple):
    """The actor's stored rating of a target as the upsert reads it before writing."""

    id: int
    rating: str
    reason: str | None
    comment: str | None
    correction: str | None
    updated_at: Any  # datetime, UTC


@dataclass(frozen=True)
class Target:
    """A resolved, access-checked feedback target. ``stored``: the actor's rating of it
    read in the same query (``resolve_target(with_rating=True)``; ``None``: none yet),
    meaningful only when ``stored_read``."""

    run_pk: int
    workspace_id: int
    settings: dict[str, Any]
    subject_key: str
    is_answer: bool
    stored: StoredRating | None = None
    stored_read: bool = False


# --- validation ------------------------------------------------------------------------


def validated(
    target_type: Any, target_id: Any, subject_id: Any, rating: Any = None, *,
    reason: Any = None, comment: Any = None, correction: Any = None, check_rating: bool = True,
    needs_subject: bool = True,
) -> tuple[str, int, str | None, dict[str, Any]]:
    """Check everything that needs no database (SPEC 6.1 "validation first"):
    (target_type, target_id, subject or None, the cleaned rating fields). A type with a
    subject (citation, tool_call) needs it unless ``needs_subject`` is false (a list of
    every subject of one target id). Raises ``ValidationFailed`` naming the field."""
    try:
        target_type = check_choice(target_type, "target_type", TARGET_TYPES)
        values: dict[str, Any] = {}
        if check_rating:
            values["rating"] = check_choice(rating, "rating", RATINGS)
            values["reason"] = clean_text(reason, "reason", REASON_MAX, strip=True)
            # Typed text is redacted before storage like an agent's (SPEC 4).
            values["comment"] = redact_typed(clean_text(comment, "comment", COMMENT_MAX), COMMENT_MAX)
            values["correction"] = redact_typed(
                clean_text(correction, "correction", CORRECTION_MAX), CORRECTION_MAX)
        subject = clean_text(subject_id, "subject_id", SUBJECT_MAX, strip=True)
    except InvalidFeedback as exc:
        raise ValidationFailed(exc.field, exc.message) from None
    if isinstance(target_id, bool) or not isinstance(target_id, int):
        raise ValidationFailed("target_id", "must be an integer")
    if target_id > MAX_ID:  # no row can have it, and the database integer would overflow
        raise ValidationFailed("target_id", f"out of range (at most {MAX_ID})")
    row = TARGET_TYPE_REGISTRY.get(target_type)
    if row.subject is not None and subject is None and needs_subject:
        raise ValidationFailed("subject_id", f"a {row.code} rating needs the {row.subject}")
    if row.subject is None and subject is not None:
        raise ValidationFailed("subject_id",
                               f"only {' / '.join(subject_types())} ratings have a subject")
    return target_type, target_id, subject, values


def author_of(actor: Actor) -> int:
    """Feedback belongs to a person: ingest tokens and the system cannot rate."""
    if actor.user_id is None:
        raise Forbidden()
    return actor.user_id


# --- owner check -----------------------------------------------------------------------


_STORED_COLUMNS = [getattr(Feedback, name).label(f"stored_{name}") for name in StoredRating._fields]


@cache
def _target_statement(target_type: str, with_rating: bool = False) -> Prepared:
    """The owner-check query of one target type, built once from its registry row with
    bound parameters ``:target_id`` and ``:actor_user_id`` (membership, same query: SPEC 2):
    the target's row joined to its run through the row's ``parent`` column, narrowed to
    the row's ``role``, plus the columns the type's own check reads (``_CHECKS``).
    ``with_rating``: also the actor's stored rating of the target (an outer join on the
    feedback key; ``:rating_author_id``, ``:rating_target_type``, ``:rating_subject_key``),
    its columns labelled ``stored_<field>``. ``Prepared``: run on the DBAPI cursor."""
    row = TARGET_TYPE_REGISTRY.get(target_type)
    model = models.target_model(target_type)
    target_id = bindparam("target_id", type_=Integer)
    columns = (Run.id, Run.workspace_id, Run.kind, Workspace.settings)
    stmt = (
        select(*columns, *_CHECKS.get(target_type, _NO_CHECK).columns())
        .select_from(Run)
        .join(model, getattr(model, row.parent) == Run.id)
        .where(getattr(model, row.key) == target_id)
    )
    if row.subject_column is not None:
        # The subject completes the key (a tool call: its run and its call id), in the
        # same query; the row must also be of the run's own workspace.
        stmt = stmt.where(getattr(model, row.subject_column) == bindparam("subject"))
        if hasattr(model, "workspace_id"):
            stmt = stmt.where(model.workspace_id == Run.workspace_id)
    if row.role is not None:
        stmt = stmt.where(model.role == row.role)
    stmt = stmt.join(Workspace, Workspace.id == Run.workspace_id)
    if with_rating:
        stmt = stmt.outerjoin(Feedback, and_(
            Feedback.author_id == bindparam("rating_author_id"),
            Feedback.target_type == bindparam("rating_target_type"),
            Feedback.target_id == target_id,
            Feedback.subject_key == bindparam("rating_subject_key"),
        )).add_columns(*_STORED_COLUMNS)
    return Prepared(scope_to_member(stmt, Run.workspace_id, Role.REVIEWER))


def _has_report(session: Session, run_pk: int) -> bool:
    return session.scalar(select(DiagnosticReport.id).where(DiagnosticReport.run_pk == run_pk)) is not None


def _is_answer_message(session: Session, row: Any) -> bool:
    """Whether the resolved message is its run's answer: it has text and no later
    assistant message has (``has_answer_text``, the run page's own definition)."""
    if not has_answer_text(row.content):
        return False
    later = session.scalars(
        select(Message.content).where(
            Message.run_pk == row.run_pk,
            Message.role == MessageRole.ASSISTANT.value,
            Message.ordinal > row.ordinal,
        )
    )
    return not any(has_answer_text(content) for content in later)


def resolve_target(
    session: Session, author_id: int, target_type: str, target_id: int, subject: str | None,
    *, with_rating: bool = False,
) -> Target:
    """The target's run, workspace settings and answer-level flag, in one query scoped to
    the user's workspaces (SPEC 2). Missing, foreign, a non-assistant message, a
    citation id absent from the message's ``metadata.citations``, a tool call id not of
    run ``target_id``, the answer rated as a conversation turn: ``Forbidden``.
    ``with_rating``: the same query also reads the author's stored rating of the target
    (``Target.stored``), read only once the target is known to be the author's to rate."""
    if not 1 <= target_id <= MAX_ID:
        raise Forbidden()
    params: dict[str, Any] = {"target_id": target_id, "actor_user_id": author_id}
    if TARGET_TYPE_REGISTRY.get(target_type).subject_column is not None:
        if subject is None:
            raise Forbidden()
        params["subject"] = subject
    if with_rating:
        params.update(rating_author_id=author_id, rating_target_type=target_type,
                      rating_subject_key=subject or "")
    # On the session's connection and transaction, through its DBAPI cursor.
    row = _target_statement(target_type, with_rating).one_or_none(session.connection(), params)
    if row is None:
        raise Forbidden()

    is_answer = _CHECKS.get(target_type, _NO_CHECK).check(session, row, subject)
    stored = None
    if with_rating and row.stored_id is not None:
        stored = StoredRating(*(getattr(row, f"stored_{name}") for name in StoredRating._fields))
    return Target(
        run_pk=row.id,
        workspace_id=row.workspace_id,
        settings=row.settings or {},
        subject_key=subject or "",
        is_answer=is_answer,
        stored=stored,
        stored_read=with_rating,
    )


# --- each target type's own check -------------------------------------------------------


class _Check:
    """What one target type checks beyond the owner check, on the resolved row: extra
    ``columns()`` the statement reads, and ``check`` -> whether the target is the run's
    answer (its rating sets the verdict, SPEC 6.2), or ``Forbidden``."""

    def columns(self) -> tuple[Any, ...]:
        return ()

    def check(self, session: Session, row: Any, subject: str | None) -> bool:
        return False


class _AnswerMessage(_Check):
    def columns(self) -> tuple[Any, ...]:
        return (Message.run_pk, Message.ordinal, Message.content)

    def check(self, session: Session, row: Any, subject: str | None) -> bool:
        # A chat run's answer message; an AIOps run's only when it has no report (its
        # conclusion then exists only as the answer text, SPEC 6.2).
        return (row.kind == RunKind.CHAT.value or not _has_report(session, row.run_pk)) \
            and _is_answer_message(session, row)


class _Citation(_Check):
    def columns(self) -> tuple[Any, ...]:
        return (Message.run_pk, Message.ordinal, Message.content, Message.meta.label("meta"))

    def check(self, session: Session, row: Any, subject: str | None) -> bool:
        citations = (row.meta or {}).get("citations") if isinstance(row.meta, dict) else None
        ids = {
            str(c.get("id")) for c in citations or [] if isinstance(c, dict) and c.get("id") is not None
        }
        if subject not in ids:
            raise Forbidden()
        return False


class _Turn(_Check):
    """A conversation turn: an assistant message that is not the run's answer (the
    answer is rated as ``chat_message``, whose rating sets the verdict)."""

    def columns(self) -> tuple[Any, ...]:
        return (Message.run_pk, Message.ordinal, Message.content)

    def check(self, session: Session, row: Any, subject: str | None) -> bool:
        if _is_answer_message(session, row):
            raise Forbidden()
        return False


class _Report(_Check):
    def check(self, session: Session, row: Any, subject: str | None) -> bool:
        return row.kind == RunKind.AIOPS.value


_NO_CHECK = _Check()
_CHECKS: dict[str, _Check] = {
    TargetType.CHAT_MESSAGE.value: _AnswerMessage(),
    TargetType.CITATION.value: _Citation(),
    TargetType.DIAGNOSTIC_REPORT.value: _Report(),
    TargetType.CONVERSATION_TURN.value: _Turn(),
}
# The other types need no check beyond their registry row (``_NO_CHECK``); an unknown type
# never gets here (``TARGET_TYPE_REGISTRY.get`` raises first).
TARGET_TYPE_REGISTRY.check_covered(_CHECKS, "owner checks", every=False)

def visible_run(session: Session, actor: Actor, run_pk: Any) -> tuple[int, int]:
    """(run id, workspace id) of a run the actor may see, else ``Forbidden``."""
    if isinstance(run_pk, bool) or not isinstance(run_pk, int) or not 1 <= run_pk <= MAX_ID:
        raise Forbidden()
    stmt = scope_to_actor(
        select(Run.id, Run.workspace_id).where(Run.id == run_pk), actor, Run.workspace_id,
        Role.REVIEWER,
    )
    row = session.execute(stmt).one_or_none()
    if row is None:
        raise Forbidden()
    return row.id, row.workspace_id

