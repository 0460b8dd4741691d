"""Column types and helpers shared by every model."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, DateTime, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

# The largest value of an Integer primary key (int4 on PostgreSQL): a larger id cannot
# name a row, and sending it to the database would overflow (PostgreSQL, SQLite).
MAX_ID = 2**31 - 1


def utcnow() -> datetime:
    """The current time, timezone-aware, in UTC."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator):
    """A timestamp stored and returned timezone-aware in UTC (SPEC 10).

    A naive value given to it is read as UTC. SQLite keeps no offset, so values read
    back from it get UTC attached again.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


# JSON everywhere, JSONB on PostgreSQL (indexable, key-level atomic updates). Python None
# is stored as SQL NULL (not JSON null), so "IS NULL" means "absent" for every JSON column.
JSONType = JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


class TimestampMixin:
    """``created_at`` / ``updated_at`` in UTC, set by the database and by the ORM."""

    created_at: Mapped[datetime] = mapped_column(
        UTCDateTime(), default=utcnow, server_default=func.now(), nullable=False
    )
    updated_at: Mapped[datetime] = mapped_column(
        UTCDateTime(), default=utcnow, onupdate=utcnow, server_default=func.now(), nullable=False
    )


def enum_values(enum_cls: Any) -> tuple[str, ...]:
    """The string values of a ``str`` enum, for CHECK constraints and validation."""
    return tuple(member.value for member in enum_cls)
