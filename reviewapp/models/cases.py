"""The case library (``case_library``, SPEC 3, 7)."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime

from sqlalchemy import CheckConstraint, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from ..extensions import db
from .base import TimestampMixin, UTCDateTime, enum_values
from .runs import Run


class SourceType(str, enum.Enum):
    AUTO = "AUTO"
    MANUAL = "MANUAL"


def new_case_id() -> str:
    return str(uuid.uuid4())


class Case(TimestampMixin, db.Model):
    """A curated case. ``diagnosis_id`` is the run's ``run_id`` (legacy: the session id),
    unique within a workspace — the constraint that makes get-or-create idempotent under
    concurrent submits. ``version`` guards edits against stale pages (SPEC 10).

    When the run's verdict leaves ``useful`` (SPEC 7): an AUTO case no person has edited
    gets ``withdrawn_at`` (the row is kept, but it is gone from the library and the
    exports), any other case gets ``run_not_useful_at`` (kept, flagged "run no longer
    judged useful"). Both are cleared when the verdict comes back to ``useful``."""

    __tablename__ = "case_library"
    __table_args__ = (
        UniqueConstraint("workspace_id", "diagnosis_id"),
        CheckConstraint(f"source_type IN {enum_values(SourceType)!r}", name="source_type"),
        Index("ix_case_library_workspace_created", "workspace_id", "created_at", "case_id"),
    )

    case_id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_case_id)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"))
    diagnosis_id: Mapped[str] = mapped_column(String(160))
    run_pk: Mapped[int | None] = mapped_column(
        ForeignKey("diagnosis_run.id", ondelete="SET NULL"), nullable=True
    )
    source_type: Mapped[str] = mapped_column(String(8), default=SourceType.AUTO.value)
    fault_category: Mapped[str] = mapped_column(String(64), default="GENERAL")
    title: Mapped[str] = mapped_column(String(200), default="")
    root_cause: Mapped[str | None] = mapped_column(Text, nullable=True)
    solution: Mapped[str | None] = mapped_column(Text, nullable=True)
    error_code: Mapped[str | None] = mapped_column(String(120), nullable=True)
    service: Mapped[str | None] = mapped_column(String(120), nullable=True)
    created_by: Mapped[str] = mapped_column(String(80), default="system")
    # who saved the latest edit (None: never edited, or the account is gone): a stale
    # page's 409 names them ("you, in another tab or window" or their username)
    edited_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"), nullable=True
    )
    version: Mapped[int] = mapped_column(Integer, default=1)
    withdrawn_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    run_not_useful_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    run: Mapped[Run | None] = relationship()
