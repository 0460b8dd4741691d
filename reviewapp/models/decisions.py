"""A lead's decision on a disputed run (issue 16 "Adjudication"): a record of its own,
distinct from a rating, append-only; the latest decision of a run is its verdict. The
rules live in ``services/adjudication.py``."""

from __future__ import annotations

from sqlalchemy import CheckConstraint, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from ..domain.verdicts import VERDICTS
from ..extensions import db
from .accounts import User
from .base import TimestampMixin


class VerdictDecision(TimestampMixin, db.Model):
    """One decision (``verdict_decision``): ``verdict`` (useful / not_useful) given by
    ``decided_by`` on run ``run_pk``, for the queue ``queue_id`` whose reviewers were
    split (null once that queue is deleted), with the lead's ``note``. ``created_at`` is
    when (UTC). Never updated: a new decision is a new row."""

    __tablename__ = "verdict_decision"
    __table_args__ = (
        CheckConstraint(f"verdict IN {VERDICTS.sql_in()}", name="verdict"),
        Index("ix_verdict_decision_run", "run_pk", "id"),
        Index("ix_verdict_decision_workspace_created", "workspace_id", "created_at", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"))
    run_pk: Mapped[int] = mapped_column(ForeignKey("diagnosis_run.id", ondelete="CASCADE"))
    queue_id: Mapped[int | None] = mapped_column(
        ForeignKey("review_queue.id", ondelete="SET NULL"), nullable=True)
    decided_by: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"), nullable=True)
    verdict: Mapped[str] = mapped_column(String(16))
    note: Mapped[str | None] = mapped_column(Text, nullable=True)

    decider: Mapped[User | None] = relationship()
