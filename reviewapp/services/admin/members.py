"""Accounts and memberships as a workspace's admins manage them (SPEC 1, 2, 8): list the
members, create an account, add an existing user, change a role, remove a membership,
deactivate / reactivate an account, set a one-time password.

Rules (the CLI, as the system actor, obeys the same ones):

* Everything happens in one workspace the actor administers; a user who is not a member
  of it reads as missing (``Forbidden``, the same answer as a missing id: SPEC 2).
* A workspace always keeps one admin: demoting or removing its last admin is ``Conflict``
  (the system actor is exempt: the operator's CLI is how an orphaned workspace recovers).
* An account's active flag and password belong to every workspace it is in: an admin may
  change them only when they administer *every* workspace of that account
  (``manageable``), and never their own active flag.
* A password an admin chooses (typed or generated, shown once) must be changed at the
  user's next login (``must_change_password``).
* Every change is recorded in the audit log, never with a password.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ...actors import Actor, Role
from ...errors import Conflict, Forbidden, ValidationFailed
from ...models import Membership, User, Workspace
from ..access import require_admin_scope, require_role
from ..audit import record_event
from ..queue_assignment import drop_named, release_assignments_of, top_up_workspace
from ..queue_work import release_held_by
from .accounts import check_new_password, generate_password, hash_password, workspaces_of

USERNAME_RE = re.compile(r"^[A-Za-z0-9_.@-]{1,80}$")
ROLE_CHOICES = tuple((r.value, r.value.capitalize()) for r in Role)


def parse_role(role: Role | str | None) -> Role:
    """``role`` as a ``Role``. Raises ``ValidationFailed`` (field ``role``) for another value."""
    try:
        return Role(role)
    except ValueError:
        raise ValidationFailed("role", "must be one of reviewer, lead, admin") from None


def _username(username: str | None) -> str:
    username = (username or "").strip()
    if not USERNAME_RE.match(username):
        raise ValidationFailed("username", "use 1-80 letters, digits or _ . @ -")
    return username


def create_user(
    session: Session, actor: Actor, username: str, password: str,
    workspace_id: int | None = None, role: Role | str | None = None, *,
    must_change_password: bool = False,
) -> User:
    """Create an active account, with a membership when ``workspace_id`` and ``role`` are
    given. The system may create an account without one; an admin only inside a
    workspace they administer. Audited (without the password). Raises
    ``ValidationFailed`` (username shape, password shorter than 8, unknown role),
    ``Conflict`` (username taken, also by one that differs only in case), ``Forbidden``."""
    if not actor.system:
        if workspace_id is None or role is None:
            raise Forbidden()
        require_role(session, actor, workspace_id, Role.ADMIN)
    username = _username(username)
    check_new_password(password)
    role_value = parse_role(role) if role is not None else None
    # Usernames are ASCII (USERNAME_RE): lower() folds them alike on both databases.
    clash = session.scalar(select(User.username).where(func.lower(User.username) == username.lower()))
    if clash is not None:
        raise Conflict(f"user '{clash}' already exists"
                       + ("" if clash == username else ": usernames must differ by more than case"))
    user = User(username=username, password_hash=hash_password(password), active=True,
                session_token=secrets.token_hex(16), must_change_password=must_change_password)
    session.add(user)
    try:
        session.flush()
    except IntegrityError:
        session.rollback()
        raise Conflict(f"user '{username}' already exists") from None
    if workspace_id is not None and role_value is not None:
        session.add(Membership(user_id=user.id, workspace_id=workspace_id, role=role_value.value))
        record_event(session, actor, workspace_id=workspace_id, action="user.create",
                     target_type="user", target_id=user.id, target_label=username,
                     after={"username": username, "role": role_value.value,
                            "must_change_password": must_change_password})
    session.commit()
    return user


@dataclass(frozen=True)
class NewAccount:
    """A created account and its password, shown once (``generated``: the app chose it)."""

    user: User
    password: str
    generated: bool


def create_member_account(session: Session, actor: Actor, workspace_id: int, username: str,
                          role: Role | str, password: str | None = None) -> NewAccount:
    """Create an account with ``role`` in the workspace; ``password`` empty or ``None``
    generates one. Either way it is a one-time password: the user must change it at
    the first login. Admins of the workspace only. Raises as ``create_user``."""
    password = (password or "").strip() and password
    generated = not password
    chosen = generate_password() if generated else str(password)
    user = create_user(session, actor, username, chosen, workspace_id, role,
                       must_change_password=True)
    return NewAccount(user, chosen, generated)


def _membership(session: Session, workspace_id: int, user_id: int) -> Membership | None:
    return session.scalars(select(Membership).where(
        Membership.user_id == user_id, Membership.workspace_id == workspace_id)).one_or_none()


def _member(session: Session, actor: Actor, workspace_id: int, user_id: int) -> tuple[Membership, User]:
    """The admin check and the target: a user who is not a member reads as missing."""
    require_role(session, actor, workspace_id, Role.ADMIN)
    membership = _membership(session, workspace_id, user_id)
    if membership is None:
        raise Forbidden()
    return membership, session.get(User, user_id)  # type: ignore[return-value]


def _keep_an_admin(session: Session, actor: Actor, membership: Membership) -> None:
    # The system (the operator's CLI) is exempt: it is how a workspace without an admin
    # gets one again, so it cannot lock anyone out.
    if membership.role != Role.ADMIN.value or actor.system:
        return
    admins = session.scalar(select(func.count()).select_from(Membership).where(
        Membership.workspace_id == membership.workspace_id,
        Membership.role == Role.ADMIN.value))
    if (admins or 0) <= 1:
        raise Conflict("This is the workspace's last admin: make someone else admin first.")


def add_member(session: Session, actor: Actor, workspace_id: int, username: str,
               role: Role | str) -> Membership:
    """Give an existing account ``role`` in the workspace. Admins of it only. Audited.
    A reviewer (or above) is in the pool of the workspace's round-robin queues at once:
    their items short of reviewers are topped up (``queue_assignment.top_up_workspace``;
    a removed member is not named again, so a named queue deals them nothing).
    Raises ``ValidationFailed`` (no such username, bad role), ``Conflict`` (already a
    member: change the role instead), ``Forbidden``."""
    require_role(session, actor, workspace_id, Role.ADMIN)
    role_value = parse_role(role)
    user = session.scalars(select(User).where(User.username == (username or "").strip())).one_or_none()
    if user is None:
        raise ValidationFailed("username", "no account with this username")
    if _membership(session, workspace_id, user.id) is not None:
        raise Conflict(f"'{user.username}' is already a member; change the role instead")
    membership = Membership(user_id=user.id, workspace_id=workspace_id, role=role_value.value)
    session.add(membership)
    session.flush()  # the queues' pool reads the membership
    top_up_workspace(session, workspace_id)  # every role reviews
    record_event(session, actor, workspace_id=workspace_id, action="member.add",
                 target_type="user", target_id=user.id, target_label=user.username,
                 after={"role": role_value.value})
    session.commit()
    return membership


def change_role(session: Session, actor: Actor, workspace_id: int, user_id: int,
                role: Role | str) -> Membership:
    """Change a member's role. Admins of the workspace only; the last admin stays admin.
    Audited. Raises ``Forbidden`` (not a member: as missing), ``ValidationFailed``, ``Conflict``."""
    role_value = parse_role(role)
    membership, user = _member(session, actor, workspace_id, user_id)
    if membership.role != role_value.value:
        if role_value != Role.ADMIN:
            _keep_an_admin(session, actor, membership)
        record_event(session, actor, workspace_id=workspace_id, action="member.role",
                     target_type="user", target_id=user_id, target_label=user.username,
                     before={"role": membership.role}, after={"role": role_value.value})
        membership.role = role_value.value
    session.commit()
    return membership


def remove_member(session: Session, actor: Actor, workspace_id: int, user_id: int) -> None:
    """Remove a membership (the account stays). Admins of the workspace only; not the
    last admin. In the same transaction the review-queue items the user holds in the
    workspace are released, and so are their open assignments (items they have not rated;
    a round-robin queue deals each again to its other reviewers,
    ``queue_assignment.release_assignments_of``); their ratings, and the assignments of
    items they rated, stay. They stop being a named reviewer of the workspace's queues
    (``queue_assignment.drop_named``: a queue's page lists them no more; adding them back
    does not name them again). Audited with the counts (``open_assignments``,
    ``held_items``, ``named_reviewer_of``: queues that named them). Raises ``Forbidden``
    (not a member: as missing), ``Conflict``."""
    membership, user = _member(session, actor, workspace_id, user_id)
    _keep_an_admin(session, actor, membership)
    held = release_held_by(session, user_id, workspace_id)
    named_in = drop_named(session, user_id, workspace_id)
    assigned = release_assignments_of(session, user_id, workspace_id)
    record_event(session, actor, workspace_id=workspace_id, action="member.remove",
                 target_type="user", target_id=user_id, target_label=user.username,
                 before={"role": membership.role, "open_assignments": assigned,
                         "held_items": held, "named_reviewer_of": named_in}, after=None)
    session.delete(membership)
    session.commit()


def set_membership(session: Session, actor: Actor, user_id: int, workspace_id: int,
                   role: Role | str | None) -> Membership | None:
    """``flask users grant``: add, change or (``role`` ``None``) remove the user's
    membership, through ``add_member`` / ``change_role`` / ``remove_member`` and their
    rules. Raises ``ValidationFailed`` (no such user, bad role), ``Forbidden``, ``Conflict``."""
    require_role(session, actor, workspace_id, Role.ADMIN)
    user = session.get(User, user_id)
    if user is None:
        raise ValidationFailed("user_id", "no such user")
    existing = _membership(session, workspace_id, user_id)
    if role is None:
        if existing is not None:
            remove_member(session, actor, workspace_id, user_id)
        return None
    if existing is None:
        return add_member(session, actor, workspace_id, user.username, role)
    return change_role(session, actor, workspace_id, user_id, role)


def _administered_ids(actor: Actor) -> Select[tuple[int]]:
    """The ids of the workspaces the (user) actor administers, as a subquery."""
    return select(Membership.workspace_id).where(
        Membership.user_id == actor.user_id, Membership.role == Role.ADMIN.value)


def _foreign_workspaces(session: Session, actor: Actor, user_id: int) -> int:
    """How many of the user's workspaces the actor does not administer (system: 0)."""
    if actor.system:
        return 0
    return session.scalar(select(func.count()).select_from(Membership).where(
        Membership.user_id == user_id, Membership.workspace_id.not_in(_administered_ids(actor)))) or 0


def _account(session: Session, actor: Actor, workspace_id: int, user_id: int) -> User:
    """A member whose account the actor may change: they administer every workspace of it."""
    _, user = _member(session, actor, workspace_id, user_id)
    if _foreign_workspaces(session, actor, user_id):
        raise Forbidden()
    return user


def set_active(session: Session, actor: Actor, workspace_id: int, user_id: int,
               active: bool) -> User:
    """Deactivate (logs the user out everywhere; they cannot log in) or reactivate an
    account. Only an admin of every workspace of the account, never on their own
    account. Deactivating does to the review queues what ``remove_member`` does, in each
    of the account's workspaces and in the same transaction: the items the user holds are
    released, and so are their open assignments (items they have not rated: a round-robin
    queue deals each again to its other reviewers, ``queue_assignment.release_assignments_of``;
    a by-hand item waits for a lead); their ratings and the assignments of items they
    rated stay. Reactivating gives nothing back that went on to others: the user is in
    the queues' pool again, and each round-robin queue of their workspaces tops up its
    open items short of reviewers (``queue_assignment.top_up_workspace``: a queue whose
    whole pool was gone is dealt again). Audited in each of the
    account's workspaces (a deactivation with the counts ``open_assignments`` and
    ``held_items`` of that workspace). Raises ``Forbidden`` (not a
    member, or the account is also in a workspace the actor does not administer),
    ``ValidationFailed`` (own account)."""
    user = _account(session, actor, workspace_id, user_id)
    if actor.user_id == user_id:
        raise ValidationFailed("active", "you cannot deactivate your own account")
    if bool(user.active) != bool(active):
        was = bool(user.active)
        user.active = bool(active)
        user.session_token = secrets.token_hex(16)
        session.flush()  # the queues' pool reads the flag: the deactivated are dealt nothing
        for ws_id in workspaces_of(session, user_id):
            before: dict[str, object] = {"active": was}
            if not active:
                before["open_assignments"] = release_assignments_of(session, user_id, ws_id)
                before["held_items"] = release_held_by(session, user_id, ws_id)
            else:
                top_up_workspace(session, ws_id)
            record_event(session, actor, workspace_id=ws_id,
                         action="user.activate" if active else "user.deactivate",
                         target_type="user", target_id=user_id, target_label=user.username,
                         before=before, after={"active": bool(active)})
        if not active:
            release_held_by(session, user_id)  # and any left in a workspace they have left
    session.commit()
    return user


def reset_password(session: Session, actor: Actor, workspace_id: int, user_id: int,
                   password: str | None = None) -> str:
    """Set a one-time password (typed, or generated when empty) and log the user out
    everywhere; they must change it at the next login. Returns the password, to be shown
    once. Same access rule as ``set_active``. Audited (without the password). Raises
    ``Forbidden``, ``ValidationFailed`` (shorter than 8)."""
    user = _account(session, actor, workspace_id, user_id)
    chosen = password if (password or "").strip() else generate_password()
    check_new_password(chosen)
    user.password_hash = hash_password(chosen)
    user.session_token = secrets.token_hex(16)
    user.must_change_password = True
    for ws_id in workspaces_of(session, user_id):
        record_event(session, actor, workspace_id=ws_id, action="user.password_reset",
                     target_type="user", target_id=user_id, target_label=user.username,
                     after={"must_change_password": True})
    session.commit()
    return chosen


@dataclass(frozen=True)
class MemberRow:
    """One membership for listings. ``manageable``: the lister administers every
    workspace of the account (may change its password and active flag)."""

    workspace: str
    username: str
    role: str
    active: bool
    user_id: int = 0
    last_login_at: datetime | None = None
    must_change_password: bool = False
    manageable: bool = False


def list_members(session: Session, actor: Actor, workspace_id: int | None = None) -> list[MemberRow]:
    """Memberships ordered by workspace slug then username. With ``workspace_id``: that
    workspace's (admins of it and the system); without: every workspace (system only).
    Raises ``Forbidden``."""
    require_admin_scope(session, actor, workspace_id)
    stmt = (
        select(Workspace.slug, User.username, Membership.role, User.active, User.id,
               User.last_login_at, User.must_change_password)
        .join(Membership, Membership.workspace_id == Workspace.id)
        .join(User, User.id == Membership.user_id)
        .order_by(Workspace.slug, User.username)
    )
    if workspace_id is not None:
        stmt = stmt.where(Workspace.id == workspace_id)
    rows = session.execute(stmt).all()
    foreign: set[int] = set()
    if not actor.system and rows:
        foreign = set(session.scalars(select(Membership.user_id).where(
            Membership.user_id.in_([r.id for r in rows]),
            Membership.workspace_id.not_in(_administered_ids(actor)))))
    session.commit()
    return [MemberRow(r.slug, r.username, r.role, bool(r.active), r.id, r.last_login_at,
                      bool(r.must_change_password), r.id not in foreign) for r in rows]
