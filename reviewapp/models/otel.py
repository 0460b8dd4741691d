"""Spans received over OTLP (``otel_span``, SPEC 9): what a trace's run is rebuilt from."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from ..extensions import db
from .base import JSONType, UTCDateTime, utcnow


class OtelSpan(db.Model):
    """One span of a trace, keyed by (workspace, trace id, span id): a repeated span is
    stored once. ``is_tool`` spans become tool calls through the lifecycle events (which
    redact their texts) and keep ``data = {}``; for the others ``data`` is the decoded span
    (``domain/otel_mapping.py``), redacted before storage (SPEC 4), read back whenever the
    trace's run document is rebuilt."""

    __tablename__ = "otel_span"

    workspace_id: Mapped[int] = mapped_column(
        ForeignKey("workspace.id", ondelete="CASCADE"), primary_key=True)
    trace_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    span_id: Mapped[str] = mapped_column(String(16), primary_key=True)
    parent_span_id: Mapped[str | None] = mapped_column(String(16))
    is_tool: Mapped[bool] = mapped_column(Boolean, nullable=False)
    start_ns: Mapped[int] = mapped_column(BigInteger, nullable=False)
    data: Mapped[dict[str, Any]] = mapped_column(JSONType, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, nullable=False)
