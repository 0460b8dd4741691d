"""Per-reviewer feedback on a run's parts and its append-only history (SPEC 3, 6.1)."""

from __future__ import annotations

import enum
from typing import Any

from sqlalchemy import CheckConstraint, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from ..domain.feedback import RATINGS
from ..domain.target_types import TARGET_TYPES
from ..extensions import db
from .accounts import User
from .base import JSONType, TimestampMixin, enum_values

# What a feedback row rates (SPEC 6.1): one member per row of the registry
# (domain/target_types.py), e.g. ``TargetType.CHAT_MESSAGE.value == "chat_message"``.
TargetType = enum.Enum(  # type: ignore[misc]
    "TargetType", [(row.code.upper(), row.code) for row in TARGET_TYPES], type=str,
    module=__name__)


# A rating's two values (SPEC 6.1), from ``domain/feedback.RATINGS``.
Rating = enum.Enum(  # type: ignore[misc]
    "Rating", [(code.upper(), code) for code in RATINGS], type=str, module=__name__)


class Feedback(TimestampMixin, db.Model):
    """One reviewer's current rating of one target (``user_feedback``).

    Unique on (author, target_type, target_id, subject_key); ``subject_key`` is "" or a
    citation id. ``run_pk`` and ``workspace_id`` are the target's run and tenant, kept so
    lists and exports need no walk through the target.
    """

    __tablename__ = "user_feedback"
    __table_args__ = (
        UniqueConstraint("author_id", "target_type", "target_id", "subject_key"),
        CheckConstraint(f"target_type IN {TARGET_TYPES.sql_in()}", name="target_type"),
        CheckConstraint(f"rating IN {enum_values(Rating)!r}", name="rating"),
        Index("ix_user_feedback_target", "target_type", "target_id", "subject_key"),
        Index("ix_user_feedback_run", "run_pk"),
        Index("ix_user_feedback_workspace_created", "workspace_id", "created_at", "id"),
        # The runs an author rated, per workspace: the "reviewed by me" count (issue 18).
        Index("ix_user_feedback_author_workspace_run", "author_id", "workspace_id", "run_pk"),
        # Ids are never reused on SQLite either: the history (feedback_event.feedback_id)
        # and stale pages refer to deleted rows by id.
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    author_id: Mapped[int] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"))
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"))
    run_pk: Mapped[int] = mapped_column(ForeignKey("diagnosis_run.id", ondelete="CASCADE"))
    target_type: Mapped[str] = mapped_column(String(32))
    target_id: Mapped[int] = mapped_column(Integer)
    subject_key: Mapped[str] = mapped_column(String(160), default="")
    rating: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(String(80), nullable=True)
    comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    correction: Mapped[str | None] = mapped_column(Text, nullable=True)

    author: Mapped[User] = relationship()


class FeedbackEvent(TimestampMixin, db.Model):
    """Append-only history of every feedback create / update / delete.

    ``before`` / ``after`` are the rating fields ({rating, reason, comment, correction})
    or null. ``feedback_id`` is not a foreign key: the history outlives a deleted row.
    """

    __tablename__ = "feedback_event"
    __table_args__ = (
        CheckConstraint("action IN ('create', 'update', 'delete')", name="action"),
        Index("ix_feedback_event_run", "run_pk", "id"),
        Index("ix_feedback_event_feedback", "feedback_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    feedback_id: Mapped[int] = mapped_column(Integer)
    actor_id: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"), nullable=True
    )
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"))
    run_pk: Mapped[int] = mapped_column(ForeignKey("diagnosis_run.id", ondelete="CASCADE"))
    target_type: Mapped[str] = mapped_column(String(32))
    target_id: Mapped[int] = mapped_column(Integer)
    subject_key: Mapped[str] = mapped_column(String(160), default="")
    action: Mapped[str] = mapped_column(String(8))
    before: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    after: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)

    actor: Mapped[User | None] = relationship()
