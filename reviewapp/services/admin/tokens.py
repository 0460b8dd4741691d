"""Ingest tokens (SPEC 2, 3, 8): create (the secret shown once, only its SHA-256 kept),
list, revoke, and authenticate a bearer secret. Admins of the token's workspace only;
every create / revoke is audited (without the secret)."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from ...actors import Actor, Role
from ...db_setup import write_intent
from ...domain.redaction import INGEST_TOKEN_BYTES, INGEST_TOKEN_PREFIX
from ...errors import Forbidden, Unauthenticated, ValidationFailed
from ...models import IngestToken, User
from ...models.base import utcnow
from ..access import require_role
from ..audit import record_event
from ..secret_scan import redact_typed

TOKEN_PREFIX = INGEST_TOKEN_PREFIX  # the redaction rules know the shape (SPEC 4)
NAME_LIMIT = 120  # characters of a token's name (ingest_token.name)


@dataclass(frozen=True)
class NewToken:
    """A freshly created token; ``secret`` is shown once and never stored."""

    token: IngestToken
    secret: str


def _hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_token(session: Session, actor: Actor, workspace_id: int, name: str) -> NewToken:
    """Create an ingest token for ``workspace_id``; only its SHA-256 is stored.

    ``name`` (1-120 characters as typed) is redacted like any text a person types
    (``secret_scan.redact_typed``, SPEC 4): a secret pasted as a name is shown neither
    in the token list nor in the audit log. Admins of the workspace and the system only.
    Raises ``Forbidden``, ``ValidationFailed``.
    """
    require_role(session, actor, workspace_id, Role.ADMIN)
    name = (name or "").strip()
    if not name or len(name) > NAME_LIMIT:
        raise ValidationFailed("name", f"must be 1-{NAME_LIMIT} characters")
    name = redact_typed(name, NAME_LIMIT)
    secret = TOKEN_PREFIX + secrets.token_urlsafe(INGEST_TOKEN_BYTES)
    token = IngestToken(
        workspace_id=workspace_id,
        name=name,
        prefix=secret[:10],
        secret_hash=_hash_secret(secret),
        created_by=actor.user_id,
        revoked=False,
    )
    session.add(token)
    session.flush()
    record_event(session, actor, workspace_id=workspace_id, action="token.create",
                 target_type="token", target_id=token.id, target_label=name,
                 after={"name": name, "revoked": False})
    session.commit()
    return NewToken(token, secret)


def revoke_token(session: Session, actor: Actor, token_id: int,
                 workspace_id: int | None = None) -> IngestToken:
    """Revoke a token; it answers 401 from then on. Idempotent (revoking a revoked token
    changes and records nothing). Admins of its workspace only; with ``workspace_id``
    (the admin page's workspace) a token of another workspace reads as missing.
    Raises ``Forbidden`` (missing, foreign or not an admin: one answer, SPEC 2)."""
    token = session.get(IngestToken, token_id)
    if token is None or (workspace_id is not None and token.workspace_id != workspace_id):
        raise Forbidden()
    require_role(session, actor, token.workspace_id, Role.ADMIN)
    if not token.revoked:
        token.revoked = True
        record_event(session, actor, workspace_id=token.workspace_id, action="token.revoke",
                     target_type="token", target_id=token.id, target_label=token.name,
                     before={"revoked": False}, after={"revoked": True})
    session.commit()
    return token


_TOKEN_BY_HASH = select(
    IngestToken.__table__.c.id, IngestToken.__table__.c.workspace_id, IngestToken.__table__.c.name,
    IngestToken.__table__.c.revoked, IngestToken.__table__.c.last_used_at,
).where(IngestToken.__table__.c.secret_hash == bindparam("secret_hash"))


def authenticate_token(session: Session, secret: str) -> Actor:
    """The token actor for a bearer ``secret``. Raises ``Unauthenticated`` when the secret
    is unknown or revoked. Records ``last_used_at`` at most once a minute.

    Reads in a transaction of its own and ends it, so the caller's parsing and validation
    run outside any transaction and its write starts a fresh, short one (on SQLite the
    write lock is then held only while the caller really writes); the once-a-minute
    ``last_used_at`` write declares its write intent itself.
    """
    if not secret or not secret.startswith(TOKEN_PREFIX):
        raise Unauthenticated("missing or invalid ingest token")
    # Columns through a prepared statement, not the ORM object: this runs on every
    # ingest request (the hot path).
    token = session.connection().execute(
        _TOKEN_BY_HASH, {"secret_hash": _hash_secret(secret)}).one_or_none()
    session.commit()  # end the read
    if token is None or token.revoked:
        raise Unauthenticated("missing or invalid ingest token")
    now = utcnow()
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        with write_intent():
            session.execute(
                update(IngestToken).where(IngestToken.id == token.id).values(last_used_at=now)
                .execution_options(synchronize_session=False)
            )
            session.commit()
    return Actor.for_token(token.id, token.workspace_id, label=f"token:{token.name}")


def list_tokens(session: Session, actor: Actor, workspace_id: int) -> list[IngestToken]:
    """The workspace's tokens, newest first. Admins of the workspace only. Raises ``Forbidden``."""
    require_role(session, actor, workspace_id, Role.ADMIN)
    return list(
        session.scalars(
            select(IngestToken)
            .where(IngestToken.workspace_id == workspace_id)
            .order_by(IngestToken.created_at.desc(), IngestToken.id.desc())
        )
    )


@dataclass(frozen=True)
class TokenRow:
    """A token for the admin page: no secret, no hash; ``created_by`` is a username."""

    id: int
    name: str
    prefix: str
    revoked: bool
    created_at: datetime
    last_used_at: datetime | None
    created_by: str | None


def token_rows(session: Session, actor: Actor, workspace_id: int) -> list[TokenRow]:
    """The workspace's tokens with their creators' usernames, newest first (one query).
    Admins of the workspace only. Raises ``Forbidden``."""
    require_role(session, actor, workspace_id, Role.ADMIN)
    rows = session.execute(
        select(IngestToken.id, IngestToken.name, IngestToken.prefix, IngestToken.revoked,
               IngestToken.created_at, IngestToken.last_used_at, User.username)
        .outerjoin(User, User.id == IngestToken.created_by)
        .where(IngestToken.workspace_id == workspace_id)
        .order_by(IngestToken.created_at.desc(), IngestToken.id.desc())
    ).all()
    session.commit()
    return [TokenRow(*row) for row in rows]
