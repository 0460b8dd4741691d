"""The admin audit log (SPEC 8): one append-only row per admin action or settings change."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from ..extensions import db
from .base import JSONType, UTCDateTime, utcnow


class AuditEvent(db.Model):
    """Who (``actor_id`` and the name they had then, ``actor_label``), when
    (``created_at``, UTC), what (``action`` from ``domain.audit.AUDIT_ACTIONS`` on
    ``target_type`` / ``target_id`` / ``target_label``) and ``before`` → ``after`` (JSON,
    scrubbed of secrets). ``workspace_id`` is the workspace the action was taken in.
    ``action`` has no CHECK constraint on purpose: the service validates it against the
    registry, so a new action is one registry row, not a migration."""

    __tablename__ = "audit_event"
    __table_args__ = (
        Index("ix_audit_event_workspace_id_id", "workspace_id", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int | None] = mapped_column(
        ForeignKey("workspace.id", ondelete="CASCADE"), nullable=True)
    actor_id: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"), nullable=True)
    actor_label: Mapped[str] = mapped_column(String(120))
    action: Mapped[str] = mapped_column(String(48))
    target_type: Mapped[str] = mapped_column(String(32))
    target_id: Mapped[str] = mapped_column(String(64))
    target_label: Mapped[str] = mapped_column(String(200), default="")
    before: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    after: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, nullable=False)
