"""Sessions, runs and their parts: messages, diagnostic steps, the report (SPEC 3)."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
    func,
    literal_column,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from ..domain.verdicts import VERDICTS
from ..extensions import db
from .base import JSONType, TimestampMixin, UTCDateTime, enum_values


class RunKind(str, enum.Enum):
    """What started a run: a chat question or an AIOps diagnosis."""

    CHAT = "chat"
    AIOPS = "aiops"


class RunStatus(str, enum.Enum):
    """Execution state only; a verdict never changes it (SPEC 3, S000)."""

    RUNNING = "RUNNING"
    SUCCESS = "SUCCESS"
    FAILED = "FAILED"


# A run's current verdict (``run.feedback``, SPEC 6.2): one member per row of the
# registry (domain/verdicts.py).
Verdict = enum.Enum(  # type: ignore[misc]
    "Verdict", [(row.code.upper(), row.code) for row in VERDICTS], type=str, module=__name__)


class MessageRole(str, enum.Enum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


class DiagnosisSession(TimestampMixin, db.Model):
    """A conversation or diagnostic task (``diagnosis_session``).

    ``session_id`` is the agent's external id, unique within a workspace. Legacy
    sessions carry the old run-level fields (``query`` ... ``feedback``) and have no runs
    (SPEC 3, S001 3/7).
    """

    __tablename__ = "diagnosis_session"
    __table_args__ = (
        UniqueConstraint("workspace_id", "session_id"),
        CheckConstraint(f"kind IN {enum_values(RunKind)!r}", name="kind"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[str] = mapped_column(String(160))
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))
    # legacy run-level columns
    query: Mapped[str | None] = mapped_column(Text, nullable=True)
    answer: Mapped[str | None] = mapped_column(Text, nullable=True)
    status: Mapped[str | None] = mapped_column(String(16), nullable=True)
    self_evaluation: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    feedback: Mapped[str | None] = mapped_column(String(16), nullable=True)

    runs: Mapped[list[Run]] = relationship(back_populates="session")

    @property
    def is_legacy(self) -> bool:
        """A session that carries run-level fields itself (it predates runs)."""
        return self.query is not None or self.answer is not None or self.status is not None


class Run(TimestampMixin, db.Model):
    """One agent execution (``diagnosis_run``).

    ``run_id`` is the agent's external id, unique within a workspace (so a token of one
    workspace can never see or touch another's run with the same id). ``evidence_score``,
    ``verifier_verdict``, ``tool_call_count`` and ``failed_tool_call_count`` are copies kept
    by the services for filtering and sorting large lists; ``self_evaluation`` and the
    ``tool_call_audit`` rows are the source of truth. ``external_outcome`` is a benchmark's
    own label (e.g. tau-bench reward), never the execution status. ``rateable`` is kept
    the same way from the run's status and parts (``services/runs/rateable.py``): the
    run is finished and has something a reviewer can rate, so the review queue reads
    an index of rateable runs instead of probing every run's parts (SPEC 8, issue 18).
    """

    __tablename__ = "diagnosis_run"
    __table_args__ = (
        UniqueConstraint("workspace_id", "run_id"),
        CheckConstraint(f"kind IN {enum_values(RunKind)!r}", name="kind"),
        CheckConstraint(f"status IN {enum_values(RunStatus)!r}", name="status"),
        CheckConstraint(f"feedback IS NULL OR feedback IN {VERDICTS.sql_in()}", name="feedback"),
        Index("ix_diagnosis_run_workspace_created", "workspace_id", "created_at", "id"),
        Index("ix_diagnosis_run_workspace_feedback", "workspace_id", "feedback"),
        Index("ix_diagnosis_run_workspace_status", "workspace_id", "status"),
        Index("ix_diagnosis_run_session", "diagnosis_session_id", "created_at"),
        # The review queue's runs, newest first per workspace (services/unrated_runs.py).
        Index("ix_diagnosis_run_workspace_rateable", "workspace_id", "created_at", "id",
              sqlite_where=text("rateable = 1"), postgresql_where=text("rateable")),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[str] = mapped_column(String(160))
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"))
    diagnosis_session_id: Mapped[int] = mapped_column(
        ForeignKey("diagnosis_session.id", ondelete="CASCADE")
    )
    kind: Mapped[str] = mapped_column(String(16))
    query: Mapped[str] = mapped_column(Text, default="")
    answer: Mapped[str | None] = mapped_column(Text, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default=RunStatus.RUNNING.value)
    self_evaluation: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    feedback: Mapped[str | None] = mapped_column(String(16), nullable=True)
    orchestration_trace: Mapped[Any | None] = mapped_column(JSONType, nullable=True)
    alert: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    external_outcome: Mapped[str | None] = mapped_column(String(32), nullable=True)
    external_outcome_detail: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    evidence_score: Mapped[int | None] = mapped_column(Integer, nullable=True)
    verifier_verdict: Mapped[str | None] = mapped_column(String(16), nullable=True)
    tool_call_count: Mapped[int] = mapped_column(Integer, default=0)
    failed_tool_call_count: Mapped[int] = mapped_column(Integer, default=0)
    rateable: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    session: Mapped[DiagnosisSession] = relationship(back_populates="runs")
    messages: Mapped[list[Message]] = relationship(
        back_populates="run", order_by="Message.ordinal", cascade="all, delete-orphan"
    )
    steps: Mapped[list[DiagnosticStep]] = relationship(
        back_populates="run", order_by="DiagnosticStep.ordinal", cascade="all, delete-orphan"
    )
    report: Mapped[DiagnosticReport | None] = relationship(
        back_populates="run", cascade="all, delete-orphan", uselist=False
    )



def score_or(missing: int) -> Any:
    """SQL: the run's evidence score, ``missing`` (an int, written inline: an index on the
    expression matches only the same constant, never a bound parameter) when unscored."""
    return func.coalesce(Run.evidence_score, literal_column(str(int(missing)), Integer))


# The runs list's other orders (services/runs/filters.SORT_TABLE), one index range per
# workspace each, the id last as in the order (issue 18): by score (unscored last either
# way: -1 high first, 101 low first), by failed and by all tool calls.
Index("ix_diagnosis_run_workspace_score_high", Run.workspace_id, score_or(-1), Run.id)
Index("ix_diagnosis_run_workspace_score_low", Run.workspace_id, score_or(101), Run.id)
Index("ix_diagnosis_run_workspace_failed", Run.workspace_id, Run.failed_tool_call_count, Run.id)
Index("ix_diagnosis_run_workspace_calls", Run.workspace_id, Run.tool_call_count, Run.id)

class Message(TimestampMixin, db.Model):
    """A message of a run. ``meta`` (column ``metadata``) of an assistant message holds
    ``citations`` ([{id, title, source, excerpt, evidence_ref?}]) and ``tool_call_ids``.
    ``message_id`` is the agent's id when it sent one; re-ingest matches on it, else on
    ``ordinal``."""

    __tablename__ = "message"
    __table_args__ = (
        UniqueConstraint("run_pk", "ordinal"),
        CheckConstraint(f"role IN {enum_values(MessageRole)!r}", name="role"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_pk: Mapped[int] = mapped_column(ForeignKey("diagnosis_run.id", ondelete="CASCADE"))
    message_id: Mapped[str | None] = mapped_column(String(160), nullable=True)
    ordinal: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str | None] = mapped_column(Text, nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSONType, default=dict)

    run: Mapped[Run] = relationship(back_populates="messages")

    @property
    def citations(self) -> list[dict[str, Any]]:
        return list((self.meta or {}).get("citations") or [])


class DiagnosticStep(TimestampMixin, db.Model):
    """One step of an AIOps diagnosis, in ``ordinal`` order. ``step_id`` is the agent's id."""

    __tablename__ = "diagnostic_step"
    __table_args__ = (UniqueConstraint("run_pk", "ordinal"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    run_pk: Mapped[int] = mapped_column(ForeignKey("diagnosis_run.id", ondelete="CASCADE"))
    step_id: Mapped[str | None] = mapped_column(String(160), nullable=True)
    ordinal: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(300))
    status: Mapped[str | None] = mapped_column(String(32), nullable=True)
    summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    run: Mapped[Run] = relationship(back_populates="steps")


class DiagnosticReport(TimestampMixin, db.Model):
    """The final report of a run (Markdown, untrusted). One per run."""

    __tablename__ = "diagnostic_report"

    id: Mapped[int] = mapped_column(primary_key=True)
    run_pk: Mapped[int] = mapped_column(
        ForeignKey("diagnosis_run.id", ondelete="CASCADE"), unique=True
    )
    content: Mapped[str] = mapped_column(Text, default="")

    run: Mapped[Run] = relationship(back_populates="report")


class TargetRevision(TimestampMixin, db.Model):
    """The earlier text of a rated part that a re-ingest changed (SPEC 10): ``content``
    is the text before the change, ``created_at`` when it was replaced. A rating of
    (``target_type``, ``target_id``) last submitted before a revision's ``created_at``
    was "given on an earlier version"."""

    __tablename__ = "target_revision"
    __table_args__ = (
        Index("ix_target_revision_target", "target_type", "target_id", "created_at"),
        Index("ix_target_revision_run", "run_pk"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"))
    run_pk: Mapped[int] = mapped_column(ForeignKey("diagnosis_run.id", ondelete="CASCADE"))
    target_type: Mapped[str] = mapped_column(String(32))
    target_id: Mapped[int] = mapped_column(Integer)
    content: Mapped[str | None] = mapped_column(Text, nullable=True)
