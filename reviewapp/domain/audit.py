"""The admin audit log's vocabulary (SPEC 8): one row per action an admin (or the CLI)
can take, and the rule that keeps secrets out of what an event records. Pure: stdlib only.

An event records who, when, what (``action`` + target) and the values before and after.
``scrub`` is applied to both before storage: whatever a caller passes, no password,
password hash, token secret or secret hash is ever written into the log.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .vocabulary import Registry


@dataclass(frozen=True)
class AuditAction:
    """``code`` as stored in ``audit_event.action``; ``label`` as shown on the log page."""

    code: str
    label: str


AUDIT_ACTIONS: Registry[AuditAction] = Registry("action", (
    AuditAction("workspace.create", "Workspace created"),
    AuditAction("workspace.rename", "Workspace renamed"),
    AuditAction("member.add", "Member added"),
    AuditAction("member.role", "Role changed"),
    AuditAction("member.remove", "Member removed"),
    AuditAction("user.create", "Account created"),
    AuditAction("user.deactivate", "Account deactivated"),
    AuditAction("user.activate", "Account reactivated"),
    AuditAction("user.password_reset", "One-time password set"),
    AuditAction("user.password_set", "Password set (CLI)"),
    AuditAction("token.create", "Ingest token created"),
    AuditAction("token.revoke", "Ingest token revoked"),
    AuditAction("settings.change", "Settings changed"),
))

# Keys whose values are never recorded, at any depth (compared case-insensitively).
SECRET_KEYS: frozenset[str] = frozenset({
    "password", "password_hash", "new_password", "current_password", "secret",
    "secret_hash", "token", "session_token",
})
REDACTED = "[not recorded]"


def scrub(values: Any) -> Any:
    """``values`` with every value under a ``SECRET_KEYS`` key replaced by ``REDACTED``,
    recursively through mappings and lists; other values unchanged. ``None`` stays ``None``."""
    if isinstance(values, Mapping):
        return {str(k): REDACTED if str(k).lower() in SECRET_KEYS else scrub(v)
                for k, v in values.items()}
    if isinstance(values, (list, tuple)):
        return [scrub(v) for v in values]
    return values


def changed_keys(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> list[str]:
    """The keys whose values differ between ``before`` and ``after`` (sorted)."""
    before, after = before or {}, after or {}
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
