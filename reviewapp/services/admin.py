"""Users, workspaces, memberships and ingest tokens (SPEC 1, 2, 3)."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import bindparam, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..db_setup import write_intent
from ..errors import Conflict, Forbidden, Unauthenticated, ValidationFailed
from ..models import IngestToken, Membership, User, Workspace
from ..models.base import utcnow
from .access import require_role

_hasher = PasswordHasher()


@cache
def _dummy_hash() -> str:
    """Verified against when the username is unknown, so a miss costs as much as a hit.
    Hashed on the first login attempt of the process (hit or miss alike), not at import:
    an argon2 hash costs about half a second of CPU that every process start (CLI
    commands, server workers) paid before."""
    return _hasher.hash("not-a-real-password")

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
USERNAME_RE = re.compile(r"^[A-Za-z0-9_.@-]{1,80}$")
MIN_PASSWORD_LENGTH = 8
TOKEN_PREFIX = "rvw_"


def hash_password(password: str) -> str:
    """Argon2id hash of ``password``."""
    return _hasher.hash(password)


def generate_password() -> str:
    """A random, URL-safe password of 16 characters."""
    return secrets.token_urlsafe(12)


def _require_admin_somewhere(session: Session, actor: Actor, workspace_id: int | None) -> None:
    if actor.system:
        return
    if workspace_id is None:
        raise Forbidden()
    require_role(session, actor, workspace_id, Role.ADMIN)


def create_workspace(session: Session, actor: Actor, slug: str, name: str) -> Workspace:
    """Create a workspace. System actors only (CLI, or an admin through ``admin`` pages
    which pass ``Actor.system_actor`` after checking the admin is an admin somewhere).

    Raises ``ValidationFailed`` (bad slug / name), ``Conflict`` (slug taken), ``Forbidden``.
    """
    if not actor.system:
        raise Forbidden()
    slug = (slug or "").strip().lower()
    name = (name or "").strip()
    if not SLUG_RE.match(slug):
        raise ValidationFailed("slug", "use 1-63 lowercase letters, digits or '-'")
    if not name or len(name) > 200:
        raise ValidationFailed("name", "must be 1-200 characters")
    ws = Workspace(slug=slug, name=name, settings={})
    session.add(ws)
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise Conflict(f"workspace '{slug}' already exists") from None
    return ws


def get_workspace_by_slug(session: Session, slug: str) -> Workspace | None:
    """The workspace with ``slug``, or ``None``. For system callers (CLI)."""
    return session.scalars(select(Workspace).where(Workspace.slug == slug)).one_or_none()


def create_user(
    session: Session,
    actor: Actor,
    username: str,
    password: str,
    workspace_id: int | None = None,
    role: Role | str | None = None,
) -> User:
    """Create an active user, optionally with a membership.

    Admins of ``workspace_id`` and the system may do it. Raises ``ValidationFailed``
    (username shape, password shorter than 8, unknown role), ``Conflict`` (username
    taken), ``Forbidden``.
    """
    _require_admin_somewhere(session, actor, workspace_id)
    username = (username or "").strip()
    if not USERNAME_RE.match(username):
        raise ValidationFailed("username", "use 1-80 letters, digits or _ . @ -")
    if len(password or "") < MIN_PASSWORD_LENGTH:
        raise ValidationFailed("password", f"must be at least {MIN_PASSWORD_LENGTH} characters")
    role_value = _parse_role(role) if role is not None else None
    user = User(
        username=username,
        password_hash=hash_password(password),
        active=True,
        session_token=secrets.token_hex(16),
    )
    session.add(user)
    try:
        session.flush()
        if workspace_id is not None and role_value is not None:
            session.add(Membership(user_id=user.id, workspace_id=workspace_id, role=role_value.value))
        session.commit()
    except IntegrityError:
        session.rollback()
        raise Conflict(f"user '{username}' already exists") from None
    return user


def _parse_role(role: Role | str) -> Role:
    try:
        return Role(role)
    except ValueError:
        raise ValidationFailed("role", "must be one of reviewer, lead, admin") from None


def set_membership(
    session: Session, actor: Actor, user_id: int, workspace_id: int, role: Role | str | None
) -> Membership | None:
    """Give ``user_id`` ``role`` in ``workspace_id``; ``None`` removes the membership.

    Admins of the workspace and the system only. Raises ``Forbidden``, ``ValidationFailed``.
    """
    require_role(session, actor, workspace_id, Role.ADMIN)
    if session.get(User, user_id) is None:
        raise ValidationFailed("user_id", "no such user")
    membership = session.scalars(
        select(Membership).where(
            Membership.user_id == user_id, Membership.workspace_id == workspace_id
        )
    ).one_or_none()
    if role is None:
        if membership is not None:
            session.delete(membership)
            session.commit()
        return None
    role_value = _parse_role(role)
    if membership is None:
        membership = Membership(user_id=user_id, workspace_id=workspace_id, role=role_value.value)
        session.add(membership)
    else:
        membership.role = role_value.value
    session.commit()
    return membership


def get_user_by_username(session: Session, username: str) -> User | None:
    """The user called ``username`` (exact match), or ``None``. No access check: the CLI
    (system actor) resolves names with it; pages never show other users by name."""
    return session.scalars(select(User).where(User.username == username)).one_or_none()


@dataclass(frozen=True)
class MemberRow:
    """One membership for listings: workspace slug, username, role, active flag."""

    workspace: str
    username: str
    role: str
    active: bool


def list_members(session: Session, actor: Actor, workspace_id: int | None = None) -> list[MemberRow]:
    """Memberships ordered by workspace slug then username. With ``workspace_id``: that
    workspace's (admins of it and the system); without: every workspace (system only).
    Raises ``Forbidden``."""
    if workspace_id is None:
        if not actor.system:
            raise Forbidden()
    else:
        require_role(session, actor, workspace_id, Role.ADMIN)
    stmt = (
        select(Workspace.slug, User.username, Membership.role, User.active)
        .join(Membership, Membership.workspace_id == Workspace.id)
        .join(User, User.id == Membership.user_id)
        .order_by(Workspace.slug, User.username)
    )
    if workspace_id is not None:
        stmt = stmt.where(Workspace.id == workspace_id)
    return [MemberRow(*row) for row in session.execute(stmt)]


def set_password(session: Session, actor: Actor, user_id: int, password: str) -> None:
    """Change a password and rotate the session token (logs out every copy of the cookie).

    The user themself or the system only. Raises ``Forbidden``, ``ValidationFailed``.
    """
    if not (actor.system or actor.user_id == user_id):
        raise Forbidden()
    if len(password or "") < MIN_PASSWORD_LENGTH:
        raise ValidationFailed("password", f"must be at least {MIN_PASSWORD_LENGTH} characters")
    user = session.get(User, user_id)
    if user is None:
        raise Forbidden()
    user.password_hash = hash_password(password)
    user.session_token = secrets.token_hex(16)
    session.commit()


def authenticate(session: Session, username: str, password: str) -> User | None:
    """The active user with these credentials, or ``None``. Constant work on a miss."""
    dummy = _dummy_hash()  # first call of the process: same cost on a hit and on a miss
    user = session.scalars(select(User).where(User.username == (username or "").strip())).one_or_none()
    if user is None or not user.active:
        try:
            _hasher.verify(dummy, password or "")
        except VerificationError:
            pass
        return None
    try:
        _hasher.verify(user.password_hash, password or "")
    except (VerificationError, InvalidHashError):
        return None
    if _hasher.check_needs_rehash(user.password_hash):
        user.password_hash = hash_password(password)
        session.commit()
    return user


class SessionUser:
    """The logged-in user of one request, as Flask-Login's ``current_user``: ``id``,
    ``username``, ``active``, ``session_token``; ``get_id()`` is the login cookie id
    ``"<id>:<session_token>"``. A plain value (no ORM identity, no session), read by
    ``load_user`` with one prebuilt statement on every authenticated request."""

    __slots__ = ("id", "username", "active", "session_token")
    is_authenticated = True
    is_anonymous = False

    def __init__(self, id: int, username: str, active: bool, session_token: str) -> None:
        self.id = id
        self.username = username
        self.active = active
        self.session_token = session_token

    @property
    def is_active(self) -> bool:
        return bool(self.active)

    def get_id(self) -> str:
        return f"{self.id}:{self.session_token}"

    def __repr__(self) -> str:
        return f"<SessionUser {self.id} {self.username!r}>"


_USERS = User.__table__
_USER_BY_ID = select(
    _USERS.c.id, _USERS.c.username, _USERS.c.active, _USERS.c.session_token
).where(_USERS.c.id == bindparam("user_id"))


def load_user(session: Session, cookie_id: str) -> SessionUser | None:
    """The user for a login cookie id ``"<id>:<session_token>"``; ``None`` when the token
    was rotated (logout elsewhere, password change) or the user is inactive. One
    primary-key query (a Core statement built once: no ORM identity load per request)."""
    user_id, _, token = (cookie_id or "").partition(":")
    if not user_id.isdigit() or not token:
        return None
    row = session.connection().execute(_USER_BY_ID, {"user_id": int(user_id)}).first()
    if row is None or not row.active or not secrets.compare_digest(row.session_token, token):
        return None
    return SessionUser(row.id, row.username, row.active, row.session_token)


def end_all_sessions(session: Session, actor: Actor, user_id: int) -> None:
    """Rotate the user's session token so every login cookie of theirs stops working."""
    if not (actor.system or actor.user_id == user_id):
        raise Forbidden()
    session.execute(
        update(User).where(User.id == user_id).values(session_token=secrets.token_hex(16))
    )
    session.commit()


@dataclass(frozen=True)
class NewToken:
    """A freshly created token; ``secret`` is shown once and never stored."""

    token: IngestToken
    secret: str


def _hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_token(session: Session, actor: Actor, workspace_id: int, name: str) -> NewToken:
    """Create an ingest token for ``workspace_id``; only its SHA-256 is stored.

    Admins of the workspace and the system only. Raises ``Forbidden``, ``ValidationFailed``.
    """
    require_role(session, actor, workspace_id, Role.ADMIN)
    name = (name or "").strip()
    if not name or len(name) > 120:
        raise ValidationFailed("name", "must be 1-120 characters")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = IngestToken(
        workspace_id=workspace_id,
        name=name,
        prefix=secret[:10],
        secret_hash=_hash_secret(secret),
        created_by=actor.user_id,
        revoked=False,
    )
    session.add(token)
    session.commit()
    return NewToken(token, secret)


def revoke_token(session: Session, actor: Actor, token_id: int) -> IngestToken:
    """Revoke a token; it answers 401 from then on. Admins of its workspace only."""
    token = session.get(IngestToken, token_id)
    if token is None:
        raise Forbidden()
    require_role(session, actor, token.workspace_id, Role.ADMIN)
    token.revoked = True
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
    """The workspace's tokens, newest first. Admins of the workspace only."""
    require_role(session, actor, workspace_id, Role.ADMIN)
    return list(
        session.scalars(
            select(IngestToken)
            .where(IngestToken.workspace_id == workspace_id)
            .order_by(IngestToken.created_at.desc())
        )
    )
