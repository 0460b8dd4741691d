"""Who is acting: the value every service receives instead of reading Flask globals."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Role(str, enum.Enum):
    """Workspace roles, ordered: reviewer < lead < admin (SPEC 1)."""

    REVIEWER = "reviewer"
    LEAD = "lead"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        return _RANK[self]

    def at_least(self) -> tuple[str, ...]:
        """The role values that satisfy "this role or higher"."""
        return tuple(r.value for r in Role if r.rank >= self.rank)


_RANK = {Role.REVIEWER: 1, Role.LEAD: 2, Role.ADMIN: 3}


@dataclass(frozen=True)
class Actor:
    """The subject of a service call.

    Exactly one of: a logged-in user (``user_id``), an ingest token (``token_id`` plus the
    token's ``token_workspace_id``), or the system (CLI, importers, demo loader), which may
    act in every workspace. Membership and role are checked by the services against the
    database, in the same query as the target (SPEC 2), never from this value alone.
    """

    user_id: int | None = None
    token_id: int | None = None
    token_workspace_id: int | None = None
    system: bool = False
    label: str = ""

    @classmethod
    def for_user(cls, user_id: int, label: str = "") -> Actor:
        return cls(user_id=user_id, label=label)

    @classmethod
    def for_token(cls, token_id: int, workspace_id: int, label: str = "") -> Actor:
        return cls(token_id=token_id, token_workspace_id=workspace_id, label=label)

    @classmethod
    def system_actor(cls, label: str = "system") -> Actor:
        """The CLI / importer / demo actor: all workspaces, admin rights."""
        return cls(system=True, label=label)

    @property
    def is_user(self) -> bool:
        return self.user_id is not None

    @property
    def is_token(self) -> bool:
        return self.token_id is not None
