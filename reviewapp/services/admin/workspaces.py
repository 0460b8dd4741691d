"""Workspaces (SPEC 2, 8): create (the creating user becomes its admin), rename, the
ones an actor administers. Every change is audited."""

from __future__ import annotations

import re

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ...actors import Actor, Role
from ...errors import Conflict, Forbidden, ValidationFailed
from ...models import Membership, Workspace
from ..access import WorkspaceRole, require_role, roles_of
from ..audit import record_event

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
NAME_MAX = 200


def _name(name: str | None) -> str:
    name = (name or "").strip()
    if not name or len(name) > NAME_MAX:
        raise ValidationFailed("name", f"must be 1-{NAME_MAX} characters")
    return name


def administered(session: Session, actor: Actor) -> list[WorkspaceRole]:
    """The workspaces ``actor`` administers, by name (the system: every workspace)."""
    return [r for r in roles_of(session, actor) if r.role == Role.ADMIN]


def list_administered(session: Session, actor: Actor) -> list[WorkspaceRole]:
    """``administered``, for the admin home page: ``Forbidden`` when there is none."""
    found = administered(session, actor)
    if not found:
        raise Forbidden()
    return found


def create_workspace(session: Session, actor: Actor, slug: str, name: str) -> Workspace:
    """Create a workspace (SPEC 8). The system (CLI) may; a user may when they administer
    at least one workspace, and becomes the new workspace's admin in the same
    transaction. Audited in the new workspace. Raises ``ValidationFailed`` (slug: 1-63
    lowercase letters, digits or '-'; name: 1-200 characters), ``Conflict`` (slug taken),
    ``Forbidden``."""
    if not actor.system and not (actor.is_user and administered(session, actor)):
        raise Forbidden()
    slug = (slug or "").strip().lower()
    if not SLUG_RE.match(slug):
        raise ValidationFailed("slug", "use 1-63 lowercase letters, digits or '-'")
    name = _name(name)
    ws = Workspace(slug=slug, name=name, settings={})
    session.add(ws)
    try:
        session.flush()
    except IntegrityError:
        session.rollback()
        raise Conflict(f"workspace '{slug}' already exists") from None
    if actor.is_user:
        session.add(Membership(user_id=actor.user_id, workspace_id=ws.id, role=Role.ADMIN.value))
    record_event(session, actor, workspace_id=ws.id, action="workspace.create",
                 target_type="workspace", target_id=ws.id, target_label=slug,
                 after={"slug": slug, "name": name})
    session.commit()
    return ws


def rename_workspace(session: Session, actor: Actor, workspace_id: int, name: str) -> Workspace:
    """Give the workspace a new display name (the slug stays). Admins of it only.
    Audited. Raises ``Forbidden``, ``ValidationFailed``."""
    require_role(session, actor, workspace_id, Role.ADMIN)
    name = _name(name)
    ws = session.get(Workspace, workspace_id)
    if ws is None:
        raise Forbidden()
    if ws.name != name:
        record_event(session, actor, workspace_id=ws.id, action="workspace.rename",
                     target_type="workspace", target_id=ws.id, target_label=ws.slug,
                     before={"name": ws.name}, after={"name": name})
        ws.name = name
    session.commit()
    return ws


def get_workspace(session: Session, actor: Actor, workspace_id: int) -> Workspace:
    """The workspace, for its admins. Raises ``Forbidden`` (also when it does not exist)."""
    require_role(session, actor, workspace_id, Role.ADMIN)
    ws = session.get(Workspace, workspace_id)
    if ws is None:
        raise Forbidden()
    return ws


def get_workspace_by_slug(session: Session, slug: str) -> Workspace | None:
    """The workspace with ``slug``, or ``None``. For system callers (CLI)."""
    return session.scalars(select(Workspace).where(Workspace.slug == slug)).one_or_none()
