"""Workspaces (tenants), users, memberships and ingest tokens (SPEC 2, 3)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask_login import UserMixin
from sqlalchemy import (
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
    false,
    func,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from ..actors import Role
from ..extensions import db
from .base import JSONType, TimestampMixin, UTCDateTime, enum_values


class Workspace(TimestampMixin, db.Model):
    """A tenant. ``settings`` holds per-workspace overrides: ``feedback_reasons`` (list of
    codes), ``aiops_evidence_tools`` ({group: [tool names]}), ``triage_negative_targets``
    (bool: also open a triage item for negative citation / step / report ratings),
    ``fault_categories``, ``time_zone``; ``services/admin/settings.py`` is their registry."""

    __tablename__ = "workspace"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    settings: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    # Bumped by every settings change: a save from a stale tab carries an older one (409).
    settings_version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")

    memberships: Mapped[list[Membership]] = relationship(back_populates="workspace")


class User(UserMixin, TimestampMixin, db.Model):
    """A person who logs in. ``session_token`` is part of the login cookie's identity:
    rotating it (on logout or password change) invalidates every copied cookie."""

    __tablename__ = "user_account"

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(80), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    session_token: Mapped[str] = mapped_column(String(64))
    # Set when an admin chose the password (new account, reset): every page asks for a
    # new one until the user has changed it.
    must_change_password: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    last_login_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    memberships: Mapped[list[Membership]] = relationship(back_populates="user")

    @property
    def is_active(self) -> bool:  # Flask-Login
        return bool(self.active)

    def get_id(self) -> str:  # Flask-Login: "<id>:<session_token>"
        return f"{self.id}:{self.session_token}"


# Login matches the username ignoring case (services/admin/accounts.authenticate), and a
# new account may not differ from another only in case (members.create_user): both search
# lower(username). Not unique: accounts from before that rule may differ only in case.
Index("ix_user_account_username_lower", func.lower(User.username))


class Membership(TimestampMixin, db.Model):
    """A user's role in one workspace."""

    __tablename__ = "membership"
    __table_args__ = (
        UniqueConstraint("user_id", "workspace_id"),
        CheckConstraint(f"role IN {enum_values(Role)!r}", name="role"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"), index=True)
    workspace_id: Mapped[int] = mapped_column(
        ForeignKey("workspace.id", ondelete="CASCADE"), index=True
    )
    role: Mapped[str] = mapped_column(String(16))

    user: Mapped[User] = relationship(back_populates="memberships")
    workspace: Mapped[Workspace] = relationship(back_populates="memberships")


class IngestToken(TimestampMixin, db.Model):
    """A per-workspace machine credential. Only the SHA-256 of the secret is stored;
    ``prefix`` (first characters) lets people tell tokens apart."""

    __tablename__ = "ingest_token"

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(
        ForeignKey("workspace.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(120))
    prefix: Mapped[str] = mapped_column(String(16))
    secret_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"), nullable=True
    )
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)

    workspace: Mapped[Workspace] = relationship()
