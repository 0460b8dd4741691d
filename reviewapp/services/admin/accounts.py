"""Accounts (SPEC 1, 2, 8): password hashing (argon2), login, the login cookie's user,
a user's own password and memberships."""

from __future__ import annotations

import secrets
import string
from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import bindparam, case, func, select, update
from sqlalchemy.orm import Session
from zxcvbn import zxcvbn

from ...actors import Actor, Role
from ...db_setup import engine_apart, write_intent
from ...errors import Forbidden, PasswordChangeRequired, ValidationFailed
from ...models import Membership, User
from ...models.base import utcnow
from ...prepared import Prepared
from ..access import WorkspaceRole, roles_of
from ..audit import record_event

_hasher = PasswordHasher()


@cache
def _dummy_hash() -> str:
    """Verified against when the username is unknown, so a miss costs as much as a hit.
    Hashed on the first login attempt of the process (hit or miss alike), not at import:
    an argon2 hash costs about half a second of CPU that every process start (CLI
    commands, server workers) paid before."""
    return _hasher.hash("not-a-real-password")



# Only ASCII letters fold: usernames are ASCII (members.USERNAME_RE), and SQLite's lower()
# folds only those; Python's would also fold e.g. KELVIN SIGN into an ASCII "k".
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def fold_username(username: str | None) -> str:
    """The form of a typed username that login matches on: trimmed, ASCII letters in
    lower case, anything else as typed ("  Ann.Lee " -> "ann.lee"). Accounts differ by
    more than case (``create_user``), so the folded name names at most one account of
    today's; the login rate limit is keyed on it too (web/auth.py)."""
    return (username or "").strip().translate(_ASCII_LOWER)


MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 200


def hash_password(password: str) -> str:
    """Argon2id hash of ``password``."""
    return _hasher.hash(password)


def generate_password() -> str:
    """A random, URL-safe password of 16 characters."""
    return secrets.token_urlsafe(12)


def check_new_password(password: str | None, field: str = "password") -> str:
    """``password`` when it may be set: 8-200 characters, not only whitespace. Raises
    ``ValidationFailed`` naming ``field``."""
    if len(password or "") < MIN_PASSWORD_LENGTH or not (password or "").strip():
        raise ValidationFailed(field, f"must be at least {MIN_PASSWORD_LENGTH} characters")
    if len(password or "") > MAX_PASSWORD_LENGTH:
        raise ValidationFailed(field, f"must be at most {MAX_PASSWORD_LENGTH} characters")
    return str(password)


GUESS_SCORE_MIN = 2  # zxcvbn's score: 2 = at least 10^6 guesses (0: < 10^3, 1: < 10^6)
GUESS_CHARS = 64  # the characters estimated: zxcvbn's time grows faster than the length


def check_hard_to_guess(password: str, username: str, field: str = "new_password") -> None:
    """Refuse a password a person chooses for themself when zxcvbn (Dropbox's estimator:
    common-password and word lists, keyboard runs, repeats, dates) puts its first
    ``GUESS_CHARS`` characters under 10^6 guesses, the username counting as a known word
    (SPEC 8; NIST SP 800-63B asks for a check against commonly used passwords). Only the
    first 64 characters: 200 would cost zxcvbn about half a second, 64 at most ~0.1 s, in
    the range of the argon2 hash that follows. Raises ``ValidationFailed`` naming ``field``
    with zxcvbn's warning ("This is a top-10 common password.")."""
    estimate = zxcvbn(password[:GUESS_CHARS], user_inputs=[username])
    if estimate["score"] < GUESS_SCORE_MIN:
        warning = estimate["feedback"].get("warning") or "it is made of common words or patterns"
        raise ValidationFailed(field, f"is too easy to guess: {warning.rstrip('.')}. "
                               "Use a few uncommon words, or a generated password")


def get_user_by_username(session: Session, username: str) -> User | None:
    """The user ``username`` names as the login form reads it (trimmed, ignoring the case
    of ASCII letters: ``_user_named``; an exact spelling wins where two old accounts
    differ only in case), or ``None``. No access check: the CLI (system actor) resolves
    names with it; pages never show other users by name."""
    return _user_named(session, username)


def workspaces_of(session: Session, user_id: int) -> list[int]:
    """The ids of the workspaces the user is a member of (no access check)."""
    return list(session.scalars(select(Membership.workspace_id).where(Membership.user_id == user_id)
                                .order_by(Membership.workspace_id)))


def set_password(session: Session, actor: Actor, user_id: int, password: str) -> None:
    """Change a password and rotate the session token (logs out every copy of the cookie)
    (``flask users set-password``). Audited as ``user.password_set`` in every workspace of
    the account, without the password.

    The user themself or the system only. Raises ``Forbidden``, ``ValidationFailed``.
    """
    if not (actor.system or actor.user_id == user_id):
        raise Forbidden()
    check_new_password(password)
    user = session.get(User, user_id)
    if user is None:
        raise Forbidden()
    user.password_hash = hash_password(password)
    user.session_token = secrets.token_hex(16)
    for workspace_id in workspaces_of(session, user_id):
        record_event(session, actor, workspace_id=workspace_id, action="user.password_set",
                     target_type="user", target_id=user_id, target_label=user.username,
                     after={"sessions_ended": True})
    session.commit()


def _user_named(session: Session, username: str | None) -> User | None:
    """The account a typed username names, ignoring case (``fold_username``; one
    ``lower(username)`` index search). Two accounts that differ only in case (made before
    ``create_user`` refused that) are named only by their exact spellings."""
    typed = (username or "").strip()
    found = session.scalars(select(User).where(func.lower(User.username) == fold_username(typed))).all()
    exact = [user for user in found if user.username == typed]
    return exact[0] if exact else found[0] if len(found) == 1 else None


def authenticate(session: Session, username: str, password: str) -> SessionUser | None:
    """The active user with these credentials (as the login cookie's ``SessionUser``), or
    ``None``. The username matches ignoring the case of its letters (``_user_named``;
    SPEC 8, new-user finding: 'Alice' logs in as 'alice'). Constant work on a miss. Records ``last_login_at`` (UTC) in a short write
    transaction of its own (and rehashes an outdated hash), after ending the read."""
    dummy = _dummy_hash()  # first call of the process: same cost on a hit and on a miss
    user = _user_named(session, username)
    if user is None or not user.active:
        try:
            _hasher.verify(dummy, password or "")
        except VerificationError:
            pass
        session.commit()  # end the read
        return None
    try:
        _hasher.verify(user.password_hash, password or "")
    except (VerificationError, InvalidHashError):
        session.commit()
        return None
    found = SessionUser(user.id, user.username, user.active, user.session_token,
                        user.must_change_password)
    values: dict[str, object] = {"last_login_at": utcnow()}
    if _hasher.check_needs_rehash(user.password_hash):
        values["password_hash"] = hash_password(password)
    session.commit()  # end the read: the write below starts a short transaction of its own
    with write_intent():
        session.execute(update(User).where(User.id == found.id).values(**values)
                        .execution_options(synchronize_session=False))
        session.commit()
    return found


class SessionUser:
    """The logged-in user of one request, as Flask-Login's ``current_user``: ``id``,
    ``username``, ``active``, ``session_token``; ``get_id()`` is the login cookie id
    ``"<id>:<session_token>"``. A plain value (no ORM identity, no session), read by
    ``load_user`` with one prebuilt statement on every authenticated request."""

    __slots__ = ("id", "username", "active", "session_token", "must_change_password",
                 "highest_role", "role_read")
    is_authenticated = True
    is_anonymous = False

    def __init__(self, id: int, username: str, active: bool, session_token: str,
                 must_change_password: bool = False) -> None:
        self.id = id
        self.username = username
        self.active = active
        self.session_token = session_token
        self.must_change_password = bool(must_change_password)
        # The highest role over the user's workspaces (navigation), when ``load_user``
        # read it with the user (``with_role``); else ``role_read`` is False.
        self.highest_role: Role | None = None
        self.role_read = False

    @property
    def is_active(self) -> bool:
        return bool(self.active)

    def get_id(self) -> str:
        return f"{self.id}:{self.session_token}"

    def __repr__(self) -> str:
        return f"<SessionUser {self.id} {self.username!r}>"


_USERS = User.__table__
_USER_COLUMNS = (_USERS.c.id, _USERS.c.username, _USERS.c.active, _USERS.c.session_token,
                 _USERS.c.must_change_password)
_USER_BY_ID = Prepared(select(*_USER_COLUMNS).where(_USERS.c.id == bindparam("user_id")))
_MEMBERS = Membership.__table__
# The user's highest role in any workspace (``access.highest_role``): the membership with
# the highest rank, on the (user_id, workspace_id) unique index.
_HIGHEST_ROLE = (
    select(_MEMBERS.c.role).where(_MEMBERS.c.user_id == _USERS.c.id)
    .order_by(case(*((_MEMBERS.c.role == role.value, role.rank) for role in Role), else_=0)
              .desc())
    .limit(1).correlate(_USERS).scalar_subquery()
)
_USER_AND_ROLE_BY_ID = Prepared(select(*_USER_COLUMNS, _HIGHEST_ROLE.label("highest_role"))
                                .where(_USERS.c.id == bindparam("user_id")))


def load_user(session: Session, cookie_id: str, *, with_role: bool = False) -> SessionUser | None:
    """The user for a login cookie id ``"<id>:<session_token>"``; ``None`` when the token
    was rotated (logout elsewhere, password change) or the user is inactive. One
    primary-key query (a ``Prepared`` statement on the DBAPI cursor: no ORM identity
    load, no per-statement SQLAlchemy work on every authenticated request).

    ``with_role``: the same query also reads the user's highest role in any workspace
    (``access.highest_role``, for the navigation of a page: ``SessionUser.highest_role``,
    ``role_read`` True), instead of a statement of its own when the page is rendered
    (issue 18, request stack)."""
    user_id, _, token = (cookie_id or "").partition(":")
    if not user_id.isdigit() or not token:
        return None
    # In a state-changing request on SQLite, a read apart from the session: the request's
    # write lock is taken by its write, after parsing and validation (db_setup.engine_apart).
    params = {"user_id": int(user_id)}
    statement = _USER_AND_ROLE_BY_ID if with_role else _USER_BY_ID
    engine = engine_apart(session)
    if engine is not None:
        row = statement.one_or_none_apart(engine, params)
    else:
        row = statement.one_or_none(session.connection(), params)
    if row is None or not row.active or not secrets.compare_digest(row.session_token, token):
        return None
    user = SessionUser(row.id, row.username, row.active, row.session_token,
                       row.must_change_password)
    if with_role:
        user.highest_role = Role(row.highest_role) if row.highest_role is not None else None
        user.role_read = True
    return user


def actor_for(user: SessionUser, *, password_change: bool = False) -> Actor:
    """The ``Actor`` a logged-in user (``load_user``'s value, read from the database on
    this request) acts as, for every caller: pages, htmx fragments, the session JSON API.

    A user whose password an admin chose (``must_change_password``: a new account, a
    reset) may act only to change it, read their own account page or log out (SPEC 8):
    those callers pass ``password_change=True``; every other call raises
    ``PasswordChangeRequired`` (403 ``AUTH_PASSWORD_CHANGE_REQUIRED``)."""
    if user.must_change_password and not password_change:
        raise PasswordChangeRequired()
    return Actor.for_user(user.id, label=user.username)


def end_all_sessions(session: Session, actor: Actor, user_id: int) -> None:
    """Rotate the user's session token so every login cookie of theirs stops working."""
    if not (actor.system or actor.user_id == user_id):
        raise Forbidden()
    session.execute(
        update(User).where(User.id == user_id).values(session_token=secrets.token_hex(16))
    )
    session.commit()


def change_own_password(session: Session, actor: Actor, current: str, new: str) -> SessionUser:
    """The logged-in user changes their own password (SPEC 8): ``current`` must verify
    (argon2), ``new`` must be 8-200 characters and differ from it. Clears
    ``must_change_password`` and rotates the session token, so every other copy of the
    login cookie stops working; returns the user with the new token, to log the current
    browser in again. Raises ``Forbidden`` (not a user), ``ValidationFailed``
    (``current_password`` wrong, ``new_password`` too short, unchanged or easy to guess:
    ``check_hard_to_guess``)."""
    if not actor.is_user:
        raise Forbidden()
    user = session.get(User, actor.user_id)
    if user is None or not user.active:
        raise Forbidden()
    try:
        _hasher.verify(user.password_hash, current or "")
    except (VerificationError, InvalidHashError):
        raise ValidationFailed("current_password", "is not your current password") from None
    check_new_password(new, "new_password")
    if new == current:
        raise ValidationFailed("new_password", "must differ from the current password")
    check_hard_to_guess(new, user.username)
    user.password_hash = hash_password(new)
    user.session_token = secrets.token_hex(16)
    user.must_change_password = False
    session.commit()
    return SessionUser(user.id, user.username, user.active, user.session_token, False)


def my_memberships(session: Session, actor: Actor) -> list[WorkspaceRole]:
    """The logged-in user's workspaces and roles, by workspace name (the account page)."""
    if not actor.is_user:
        raise Forbidden()
    return roles_of(session, actor)
