"""Access checks shared by every service (SPEC 2)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import cache

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..errors import Forbidden
from ..models import Membership, Workspace
from ..prepared import Prepared
from ..queries import role_in
from .params import no_workspace


def require_admin_scope(session: Session, actor: Actor, workspace_id: int | None) -> None:
    """Pass for an administrative action over one workspace (``workspace_id``: its admins
    and the system actor; never an ingest token) or over every workspace (``None``: the
    system actor only, e.g. the CLI). Raises ``Forbidden`` otherwise. SPEC 2."""
    if workspace_id is None:
        if not actor.system:
            raise Forbidden()
        return
    require_role(session, actor, workspace_id, Role.ADMIN)  # a token never holds ADMIN


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
    if session.new or session.dirty or session.deleted:  # what the ORM's autoflush would write
        session.flush()
    rows = _roles_statement().rows(session.connection(), {"user_id": actor.user_id})
    return [WorkspaceRole(w, s, n, Role(r)) for w, s, n, r in rows]


@cache
def _roles_statement() -> Prepared:
    """The user's (``:user_id``) workspaces and roles, built once and run on the DBAPI
    cursor (``prepared.Prepared``): every full page reads them for its navigation, and
    building the statement cost five times running it, the ORM's execution twice
    (issue 18)."""
    w, m = Workspace.__table__.c, Membership.__table__.c
    return Prepared(select(w.id, w.slug, w.name, m.role)
                    .join_from(Workspace.__table__, Membership.__table__, m.workspace_id == w.id)
                    .where(m.user_id == bindparam("user_id"))
                    .order_by(w.name))


def highest_role(session: Session, actor: Actor) -> Role | None:
    """The actor's highest role in any workspace (for navigation), or ``None``."""
    roles = roles_of(session, actor)
    return max((r.role for r in roles), key=lambda r: r.rank, default=None)


def workspace_id_of(session: Session, ref: int | str | None) -> int | None:
    """The id a list's workspace filter names (``params.workspace_ref``): ``ref`` itself
    for an id, the id of the workspace whose short name ``ref`` is (0 when none has it:
    in nobody's workspaces, so the list refuses it as any workspace not the actor's,
    ``params.no_workspace``, SPEC 2), ``None`` for no filter. One query for a name."""
    if ref is None or isinstance(ref, int):
        return ref
    return session.scalar(select(Workspace.id).where(Workspace.slug == ref)) or 0


def workspace_choice(session: Session, ref: int | str | None,
                     workspace_ids: Collection[int]) -> tuple[int | None, str | None]:
    """A list's workspace filter (``params.workspace_ref``: an id or a short name) against
    the workspaces the list may show (``workspace_ids``): (its id, ``workspace_id_of``;
    why it is refused, else ``None``). One not in ``workspace_ids`` is refused in the same
    words whether it exists or not (``params.no_workspace``, SPEC 2); the runs, triage and
    case lists."""
    ws_id = workspace_id_of(session, ref)
    if ws_id is None or ws_id in workspace_ids:
        return ws_id, None
    return ws_id, no_workspace(ref if ref is not None else ws_id)


def role_workspace_choice(session: Session, actor: Actor, ref: int | str | None,
                          workspace_ids: Collection[int], only: str) -> tuple[int | None, str | None]:
    """``workspace_choice`` for a page that needs a role (``workspace_ids``: the workspaces
    where the actor holds it): a workspace they belong to in a lesser role is refused
    naming that role ("you are a reviewer in Beta; only its " + ``only``: "you have no
    workspace" would be wrong), any other in ``no_workspace``'s words (SPEC 2). The
    triage list, the dashboard, the exports."""
    ws_id, reason = workspace_choice(session, ref, workspace_ids)
    member = next((w for w in roles_of(session, actor) if w.workspace_id == ws_id), None) if reason else None
    if member is not None:
        return ws_id, f"you are a {member.role.value} in {member.name}; only its {only}"
    return ws_id, reason
