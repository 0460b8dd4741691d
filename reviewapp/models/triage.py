"""The not-useful queue: one triage item per bad run (SPEC 3)."""

from __future__ import annotations

import enum
from datetime import datetime

from sqlalchemy import CheckConstraint, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from ..domain.triage_flow import OPENED_NOT_USEFUL, STATES
from ..extensions import db
from .accounts import User
from .base import TimestampMixin, UTCDateTime, enum_values
from .runs import Run

# A triage item's state (SPEC 8): one member per state of the state machine
# (domain/triage_flow.STATES), e.g. ``TriageState.WONT_FIX.value == "wont_fix"``.
TriageState = enum.Enum(  # type: ignore[misc]
    "TriageState", [(state.upper(), state) for state in STATES], type=str, module=__name__)


class TriageItem(TimestampMixin, db.Model):
    """A bad case under triage. Never touches the run's ``status`` (S000, S001 10.3).

    ``opened_reason`` says why it was opened (``not_useful`` verdict or a negative target
    rating); ``version`` guards against stale pages (SPEC 10).
    """

    __tablename__ = "triage_item"
    __table_args__ = (
        CheckConstraint(f"state IN {enum_values(TriageState)!r}", name="state"),
        Index("ix_triage_item_workspace_state", "workspace_id", "state", "created_at", "id"),
        # who holds an item of a workspace (the triage list's Assignee filter choices)
        Index("ix_triage_item_assignee_workspace", "assignee_id", "workspace_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"))
    run_pk: Mapped[int] = mapped_column(
        ForeignKey("diagnosis_run.id", ondelete="CASCADE"), unique=True
    )
    state: Mapped[str] = mapped_column(String(16), default=TriageState.NEW.value)
    opened_reason: Mapped[str] = mapped_column(String(32), default=OPENED_NOT_USEFUL)
    assignee_id: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"), nullable=True
    )
    fault_category: Mapped[str | None] = mapped_column(String(64), nullable=True)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    version: Mapped[int] = mapped_column(Integer, default=1)

    run: Mapped[Run] = relationship()
    assignee: Mapped[User | None] = relationship()


class TriageEvent(TimestampMixin, db.Model):
    """Append-only history of a triage item: what happened to it, when, and who did it
    (``actor_id`` null: the app did it automatically, e.g. "resolved automatically: the
    run's verdict became useful"). ``action`` is a code of ``domain/triage_flow.py``
    ``TRIAGE_EVENTS``; ``detail`` the sentence shown."""

    __tablename__ = "triage_event"
    __table_args__ = (Index("ix_triage_event_item", "item_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("triage_item.id", ondelete="CASCADE"))
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"))
    actor_id: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"), nullable=True
    )
    action: Mapped[str] = mapped_column(String(32))
    detail: Mapped[str | None] = mapped_column(Text, nullable=True)

    actor: Mapped[User | None] = relationship()
