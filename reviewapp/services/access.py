"""Access checks shared by every service (SPEC 2)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import Select, bindparam, select
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..errors import Forbidden
from ..models import Membership, Workspace
from ..queries import role_in


def require_role(session: Session, actor: Actor, workspace_id: int, role: Role) -> None:
    """Pass when ``actor`` holds ``role`` or higher in ``workspace_id``.

    System actors pass; tokens pass only for their own workspace and only for
    ``Role.REVIEWER``-level (ingest) operations. Raises ``Forbidden`` otherwise.
    """
    if actor.system:
        return
    if actor.is_token:
        if actor.token_workspace_id == workspace_id and role == Role.REVIEWER:
            return
        raise Forbidden()
    if actor.is_user:
        found = session.scalar(
            select(Membership.id).where(
                Membership.user_id == actor.user_id,
                Membership.workspace_id == workspace_id,
                role_in(Membership.role, role.at_least()),
            )
        )
        if found is not None:
            return
    raise Forbidden()


@dataclass(frozen=True)
class WorkspaceRole:
    """A workspace the user belongs to and their role in it."""

    workspace_id: int
    slug: str
    name: str
    role: Role


def roles_of(session: Session, actor: Actor) -> list[WorkspaceRole]:
    """The actor's workspaces with roles, by workspace name. System: admin everywhere."""
    if actor.system:
        rows = session.execute(select(Workspace.id, Workspace.slug, Workspace.name)).all()
        return [WorkspaceRole(w, s, n, Role.ADMIN) for w, s, n in rows]
    if not actor.is_user:
        return []
    rows = session.execute(_roles_statement(), {"user_id": actor.user_id}).all()
    return [WorkspaceRole(w, s, n, Role(r)) for w, s, n, r in rows]


@cache
def _roles_statement() -> Select[Any]:
    """The user's (``:user_id``) workspaces and roles, built once: every full page reads
    them for its navigation, and building the statement cost five times running it
    (issue 18)."""
    return (select(Workspace.id, Workspace.slug, Workspace.name, Membership.role)
            .join(Membership, Membership.workspace_id == Workspace.id)
            .where(Membership.user_id == bindparam("user_id"))
            .order_by(Workspace.name))


def highest_role(session: Session, actor: Actor) -> Role | None:
    """The actor's highest role in any workspace (for navigation), or ``None``."""
    roles = roles_of(session, actor)
    return max((r.role for r in roles), key=lambda r: r.rank, default=None)
