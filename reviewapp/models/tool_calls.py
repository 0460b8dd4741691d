"""The tool-call audit record (``tool_call_audit``, SPEC 3, 4)."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from ..extensions import db
from .base import JSONType, TimestampMixin, UTCDateTime, enum_values
from .runs import Run


class ToolCallStatus(str, enum.Enum):
    """Only these three states are persisted; a streaming ``delta`` never is (SPEC 4)."""

    STARTED = "started"
    COMPLETED = "completed"
    FAILED = "failed"


class MatchLevel(str, enum.Enum):
    """Retrieval hit level: L0 exact, L1 semantic."""

    L0 = "L0"
    L1 = "L1"


class ToolCall(TimestampMixin, db.Model):
    """One tool call of a run, keyed by (workspace, the agent's own call ``id``).

    Exactly one parent: ``chat_session_id`` (chat runs) or ``diagnostic_task_id`` (AIOps
    runs), both pointing at ``diagnosis_session`` — a database CHECK holds it. ``ordinal``
    keeps call order for sources without times. ``duration_ms`` is
    ``max(0, round(completed_at - started_at))`` in milliseconds; ``compensated`` marks a
    row created from a terminal event whose ``started`` never arrived, whose duration is
    therefore not the tool's real duration.
    """

    __tablename__ = "tool_call_audit"
    __table_args__ = (
        CheckConstraint(
            "(chat_session_id IS NULL) <> (diagnostic_task_id IS NULL)", name="one_parent"
        ),
        CheckConstraint(f"status IN {enum_values(ToolCallStatus)!r}", name="status"),
        CheckConstraint(
            f"match_level IS NULL OR match_level IN {enum_values(MatchLevel)!r}",
            name="match_level",
        ),
        CheckConstraint("duration_ms IS NULL OR duration_ms >= 0", name="duration_nonnegative"),
        Index("ix_tool_call_audit_run_started", "run_pk", "started_at"),
        Index("ix_tool_call_audit_run_ordinal", "run_pk", "ordinal"),
    )

    workspace_id: Mapped[int] = mapped_column(
        ForeignKey("workspace.id", ondelete="CASCADE"), primary_key=True
    )
    id: Mapped[str] = mapped_column(String(160), primary_key=True)
    run_pk: Mapped[int] = mapped_column(ForeignKey("diagnosis_run.id", ondelete="CASCADE"))
    chat_session_id: Mapped[int | None] = mapped_column(
        ForeignKey("diagnosis_session.id", ondelete="CASCADE"), nullable=True
    )
    diagnostic_task_id: Mapped[int | None] = mapped_column(
        ForeignKey("diagnosis_session.id", ondelete="CASCADE"), nullable=True
    )
    step_pk: Mapped[int | None] = mapped_column(
        ForeignKey("diagnostic_step.id", ondelete="SET NULL"), nullable=True
    )
    ordinal: Mapped[int] = mapped_column(Integer, default=0)
    tool_name: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16))
    arguments: Mapped[Any | None] = mapped_column(JSONType, nullable=True)
    result_summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    error_message: Mapped[str | None] = mapped_column(Text, nullable=True)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # 64-bit on PostgreSQL: SPEC 10's 2000-2100 timestamps span ~3.2e12 ms (SQLite's
    # INTEGER is 64-bit already).
    duration_ms: Mapped[int | None] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), nullable=True
    )
    compensated: Mapped[bool] = mapped_column(Boolean, default=False)
    match_level: Mapped[str | None] = mapped_column(String(4), nullable=True)
    hit_count: Mapped[int | None] = mapped_column(Integer, nullable=True)
    evidence_refs: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType, nullable=True)
    # Characters before the cut (SPEC 10: "cut at 2,000 of 5,731 characters"): of the
    # arguments as JSON (stored whole, capped on pages), of the result and of the error
    # (stored cut to 2,000). NULL for rows stored before these columns existed.
    arguments_length: Mapped[int | None] = mapped_column(Integer, nullable=True)
    result_length: Mapped[int | None] = mapped_column(Integer, nullable=True)
    error_length: Mapped[int | None] = mapped_column(Integer, nullable=True)

    run: Mapped[Run] = relationship()
