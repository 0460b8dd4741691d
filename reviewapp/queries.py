"""Tenant-scoped select builders and dialect-specific statements (STYLE 7.4).

Every lookup of a workspace-owned object goes through here, so the membership check
lives in the same query as the target: a missing object and a foreign one both come back
as ``None`` and the service raises one ``Forbidden`` for both (SPEC 2).
"""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import Select, String, and_, exists, func, select, type_coerce
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from .actors import Actor, Role
from .models import Case, Membership, Run, TriageItem, Workspace

T = TypeVar("T", bound=tuple[Any, ...])


def scope_to_actor(stmt: Select[T], actor: Actor, workspace_col: Any, min_role: Role) -> Select[T]:
    """Restrict ``stmt`` to rows whose ``workspace_col`` the actor may use with ``min_role``.

    Users: a correlated EXISTS on their membership with a sufficient role. Tokens: their
    own workspace only (tokens have ingest rights, no role). System: unrestricted.
    """
    if actor.system:
        return stmt
    if actor.is_token:
        return stmt.where(workspace_col == actor.token_workspace_id)
    if actor.is_user:
        return stmt.where(
            exists().where(
                and_(
                    Membership.workspace_id == workspace_col,
                    Membership.user_id == actor.user_id,
                    Membership.role.in_(min_role.at_least()),
                )
            )
        )
    return stmt.where(False)  # an empty actor sees nothing


def get_run_for(
    session: Session, actor: Actor, run_pk: int, min_role: Role = Role.REVIEWER
) -> Run | None:
    """The run with internal id ``run_pk`` if the actor may see it, else ``None``."""
    stmt = scope_to_actor(select(Run).where(Run.id == run_pk), actor, Run.workspace_id, min_role)
    return session.scalars(stmt).one_or_none()


def get_run_by_external_id_for(
    session: Session, actor: Actor, run_id: str, min_role: Role = Role.REVIEWER
) -> Run | None:
    """The newest visible run whose agent ``run_id`` matches, else ``None``.

    ``run_id`` is unique per workspace; when the actor sees several workspaces holding the
    same id, the most recently created run wins.
    """
    stmt = scope_to_actor(
        select(Run).where(Run.run_id == run_id), actor, Run.workspace_id, min_role
    ).order_by(Run.created_at.desc(), Run.id.desc()).limit(1)
    return session.scalars(stmt).first()


def runs_visible_to(actor: Actor, min_role: Role = Role.REVIEWER) -> Select[tuple[Run]]:
    """``select(Run)`` restricted to the actor's workspaces."""
    return scope_to_actor(select(Run), actor, Run.workspace_id, min_role)


def workspaces_visible_to(actor: Actor, min_role: Role = Role.REVIEWER) -> Select[tuple[Workspace]]:
    """``select(Workspace)`` restricted to the actor's memberships."""
    return scope_to_actor(select(Workspace), actor, Workspace.id, min_role).order_by(Workspace.name)


def insert_for(session: Session, table: Any) -> Any:
    """A dialect-specific ``INSERT`` that supports ``on_conflict_do_update/nothing``."""
    if session.get_bind().dialect.name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


def triage_items_visible_to(actor: Actor, min_role: Role = Role.LEAD) -> Select[tuple[TriageItem]]:
    """``select(TriageItem)`` restricted to workspaces where the actor is at least ``min_role``."""
    return scope_to_actor(select(TriageItem), actor, TriageItem.workspace_id, min_role)


def get_triage_item_for(
    session: Session, actor: Actor, item_id: int, min_role: Role = Role.LEAD
) -> TriageItem | None:
    """The triage item ``item_id`` if the actor is at least ``min_role`` in its workspace."""
    stmt = triage_items_visible_to(actor, min_role).where(TriageItem.id == item_id)
    return session.scalars(stmt).one_or_none()


def get_case_for(
    session: Session, actor: Actor, case_id: str, min_role: Role = Role.REVIEWER
) -> Case | None:
    """The case ``case_id`` if the actor is at least ``min_role`` in its workspace."""
    stmt = scope_to_actor(
        select(Case).where(Case.case_id == case_id), actor, Case.workspace_id, min_role
    )
    return session.scalars(stmt).one_or_none()


def utc_day(session: Session, column: Any) -> Any:
    """A SQL expression for the UTC calendar day (``YYYY-MM-DD``) of a timestamp column.

    SQLite keeps UTC text (``date()`` reads it as is); PostgreSQL keeps ``timestamptz``,
    converted to UTC first so the day does not depend on the server's time zone."""
    if session.get_bind().dialect.name == "postgresql":
        return func.to_char(func.timezone("UTC", column), "YYYY-MM-DD")
    return func.date(column)


def iso_utc(session: Session, column: Any) -> Any:
    """A SQL expression rendering a UTC timestamp column as ISO 8601 text with microseconds
    and offset, ``2026-11-30T13:51:08.979227+00:00``, the same on both databases, labelled
    with the column's name. Exports use it so millions of rows need no per-row conversion
    in Python. SQLite keeps exactly this text with a space for the ``T`` (UTC, always six
    fraction digits when the ORM wrote the value, see ``models.base.UTCDateTime``)."""
    if session.get_bind().dialect.name == "postgresql":
        text = func.to_char(func.timezone("UTC", column), 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"')
    else:
        text = type_coerce(func.replace(column, " ", "T"), String).concat("+00:00")
    return type_coerce(text, String).label(column.key)
