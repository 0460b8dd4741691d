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
from .workspace_settings import SETTINGS


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
    AuditAction("decision.own_rating", "Dispute decided by a lead who rated the run"),
    AuditAction("runs.redact", "Stored text redacted again (flask runs redact)"),
))

SETTINGS_CHANGE = "settings.change"  # its keys are settings: named by ``SETTINGS``


@dataclass(frozen=True)
class AuditField:
    """A key an action other than a settings change records in before / after
    (``code``), and how the log page names it (``label``). ``outcome``: the key records
    what the action did (how many items it released, rows it scanned), on one side only,
    not a value that changed: the page shows it as one value (``outcome_text``)."""

    code: str
    label: str
    outcome: bool = False


AUDIT_FIELDS: Registry[AuditField] = Registry("audit field", (
    AuditField("username", "Username"),
    AuditField("role", "Role"),
    AuditField("name", "Name"),
    AuditField("slug", "Short name"),
    AuditField("active", "Active"),
    AuditField("revoked", "Revoked"),
    AuditField("sessions_ended", "Sessions ended"),
    AuditField("must_change_password", "Must change password"),
    AuditField("verdict", "Decision"),
    AuditField("own_rating", "Their own rating"),
    AuditField("open_assignments", "Assigned queue items released", outcome=True),
    AuditField("held_items", "Held queue items released", outcome=True),
    AuditField("named_reviewer_of", "Queues that named them as a reviewer", outcome=True),
    AuditField("rows_scanned", "Rows scanned per table", outcome=True),
    AuditField("rows_changed", "Rows redacted per column", outcome=True),
    AuditField("identities_holding_a_secret_kept", "Ids holding a secret (kept: rows are named by them)", outcome=True),
    AuditField("rows_merged", "Rows merged into the row holding their redacted value, per column", outcome=True),
    AuditField("runs_moved", "Runs moved to the merged session", outcome=True),
    AuditField("collisions_kept", "Rows kept: their redacted value is another row's (not merged)", outcome=True),
    AuditField("stopped", "Stopped at (a batch failed and was rolled back)", outcome=True),
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


def field_label(action: str, key: str) -> str:
    """How the log page names a changed ``key`` of an event of ``action``: a setting's
    label (``SETTINGS``) for a settings change, else ``AUDIT_FIELDS``' label, else the
    key itself (one recorded by an older version)."""
    if action == SETTINGS_CHANGE and key in SETTINGS:
        return SETTINGS.label(key)
    return AUDIT_FIELDS.label_or_code(key)


def readable(value: Any) -> str:
    """A recorded value as plain text (the page escapes it): a string as it is, no JSON
    quotes; ``True`` / ``False`` as ``yes`` / ``no``; ``None`` as ``—``; a list as its
    entries comma-separated, a row (mapping) by its ``label``, else its ``code``; another
    mapping as ``key: value`` parts joined by ``; ``. Raises nothing."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return ", ".join(readable(v) for v in value)
    if isinstance(value, Mapping):
        for key in ("label", "code"):
            if isinstance(value.get(key), str) and value[key]:
                return value[key]
        return "; ".join(f"{k}: {readable(v)}" for k, v in value.items())
    return str(value)


def is_outcome(action: str, key: str) -> bool:
    """Whether ``key`` of an event of ``action`` records what the action did
    (``AuditField.outcome``), rather than a value before / after it."""
    return action != SETTINGS_CHANGE and key in AUDIT_FIELDS and AUDIT_FIELDS.get(key).outcome


def outcome_text(value: Any) -> str:
    """What an action did, as the log page reads it: "none" when it did nothing (0, an
    empty list or mapping, ``None``), else ``readable`` ("2"; "message: 3; step: 0").
    Raises nothing."""
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)
                         and value == 0) or (isinstance(value, (list, tuple, Mapping)) and not value):
        return "none"
    return readable(value)


def change_text(action: str, key: str, value: Any) -> str:
    """One side (before or after) of a changed ``key``: a setting through its registry
    row (``Setting.describe``: its vocabulary's labels, ``(default)`` when never set),
    any other value through ``readable``."""
    if action == SETTINGS_CHANGE and key in SETTINGS:
        return SETTINGS.get(key).describe(value)
    return readable(value)
