"""The admin audit log (SPEC 8): record an event inside the caller's transaction, list a
workspace's events for its admins, export them (CSV / JSONL rows).

Every admin use case in ``services/admin`` calls ``record_event`` before its commit, so
an action and its audit row are written together or not at all. Values pass through
``domain.audit.scrub``: no password, hash or token secret is ever stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..domain.audit import (
    AUDIT_ACTIONS,
    change_text,
    changed_keys,
    field_label,
    is_outcome,
    outcome_text,
    scrub,
)
from ..errors import ValidationFailed
from ..models import AuditEvent
from ..models.base import utcnow
from . import keyset
from .access import require_role
from .keyset import SortKey, SortOrder
from .params import Refusals

EXPORT_COLUMNS: tuple[str, ...] = (
    "id", "created_at", "workspace_id", "actor", "action", "target_type", "target_id",
    "target", "changed", "before", "after",
)
PAGE_SIZE = 100
# The log's one order: newest event first. The id is unique and grows with time, so it is
# the whole key: events written in the same instant are neither skipped nor repeated.
AUDIT_ORDER = SortOrder("newest", "Newest first", (SortKey(AuditEvent.id, True, attrgetter("id")),))


@dataclass(frozen=True)
class AuditFilters:
    """What the audit log page and its exports show: ``action``, one code of
    ``domain.audit.AUDIT_ACTIONS`` (``None``: every action)."""

    action: str | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> AuditFilters:
        """Parse query-string values (text). Raises ``ValidationFailed`` naming the field,
        in words the page shows after the field's label (not the list of codes)."""
        action = str(params.get("action") or "").strip() or None
        if action is not None and action not in AUDIT_ACTIONS:
            raise ValidationFailed("action", "choose one of the actions in the list")
        return cls(action=action)

    def as_params(self, **overrides: Any) -> dict[str, str]:
        """The set filters as query-string values, for links; ``from_params`` reads them back."""
        values: dict[str, Any] = {"action": self.action, **overrides}
        return {k: str(v) for k, v in values.items() if v not in (None, "")}


# Why the log's page link (``cursor``) is refused, as the runs list says it of its own.
BAD_PAGE_LINK = ("it is not a link to a page of this log (it may be cut off or old); "
                 "start again from the first page")


def read_filters(params: Mapping[str, Any]) -> AuditFilters:
    """The log page's ``AuditFilters`` with its page link (``cursor``) checked too: one
    ``ValidationFailed`` naming each refused one at once (``problems``: ``action``,
    ``cursor`` with ``BAD_PAGE_LINK``), where the action alone was named before."""
    refused = Refusals()
    filters = refused.read(AuditFilters.from_params, params) or AuditFilters()
    cursor = str(params.get("cursor") or "")
    try:
        if cursor:
            AUDIT_ORDER.position(cursor)
    except ValidationFailed:
        refused.add("cursor", BAD_PAGE_LINK)
    refused.check()
    return filters


def actor_label(actor: Actor) -> str:
    """How the log names ``actor``: the username, ``token:<name>``, or ``system`` (CLI)."""
    if actor.system:
        return actor.label or "system"
    return actor.label or (f"user #{actor.user_id}" if actor.is_user else f"token #{actor.token_id}")


def record_event(
    session: Session, actor: Actor, *, workspace_id: int | None, action: str,
    target_type: str, target_id: object, target_label: str = "",
    before: Mapping[str, Any] | None = None, after: Mapping[str, Any] | None = None,
) -> AuditEvent:
    """Add one audit row to the caller's transaction (flushes, never commits: the caller's
    use case commits the action and its record together). ``action`` is a code of
    ``AUDIT_ACTIONS``; ``before`` / ``after`` are JSON-able and scrubbed of secrets.
    Raises ``UnknownValue`` (a programming error) for another action."""
    AUDIT_ACTIONS.get(action)
    event = AuditEvent(
        workspace_id=workspace_id, actor_id=actor.user_id, actor_label=actor_label(actor)[:120],
        action=action, target_type=target_type[:32], target_id=str(target_id)[:64],
        target_label=(target_label or "")[:200],
        before=scrub(dict(before)) if before is not None else None,
        after=scrub(dict(after)) if after is not None else None,
        created_at=utcnow(),
    )
    session.add(event)
    session.flush()
    return event


@dataclass(frozen=True)
class AuditChange:
    """One changed key of an event as the log page reads it: ``label`` (the setting's or
    the field's, ``domain.audit.field_label``), ``before`` / ``after`` as plain text
    (``domain.audit.change_text``; ``—`` for a side without the key). Jinja escapes them.
    ``outcome``: for a key that records what the action did (``domain.audit.is_outcome``:
    items released, rows scanned), that one value as plain text
    (``domain.audit.outcome_text``: "none" for 0), shown instead of before → after;
    ``None`` for a change."""

    key: str
    label: str
    before: str
    after: str
    outcome: str | None = None


@dataclass(frozen=True)
class AuditRow:
    """One event for the log page and the exports; ``changed`` lists the keys that differ."""

    id: int
    created_at: datetime
    workspace_id: int | None
    actor: str
    action: str
    action_label: str
    target_type: str
    target_id: str
    target: str
    changed: list[str]
    before: dict[str, Any] | None
    after: dict[str, Any] | None

    @property
    def changes(self) -> list[AuditChange]:
        """The changed keys (``changed``'s order) labelled and readable, for the page."""
        return [AuditChange(key, field_label(self.action, key),
                            self._side(self.before, key), self._side(self.after, key),
                            self._outcome(key) if is_outcome(self.action, key) else None)
                for key in self.changed]

    def _outcome(self, key: str) -> str:
        """The one recorded value of an outcome ``key`` (after, else before), as text."""
        side = self.after if self.after and key in self.after else self.before or {}
        return outcome_text(side.get(key))

    def _side(self, values: dict[str, Any] | None, key: str) -> str:
        return change_text(self.action, key, values[key]) if values and key in values else "—"

    def as_export(self, json_values: bool = False) -> dict[str, Any]:
        """The export row (``EXPORT_COLUMNS``): times in UTC ISO 8601; ``before`` /
        ``after`` as JSON text (CSV) or as objects (``json_values``, for JSONL)."""
        if json_values:
            return {**self.as_export(), "before": self.before, "after": self.after}
        return {
            "id": self.id, "created_at": self.created_at.isoformat(),
            "workspace_id": self.workspace_id, "actor": self.actor, "action": self.action,
            "target_type": self.target_type, "target_id": self.target_id, "target": self.target,
            "changed": " ".join(self.changed),
            "before": json.dumps(self.before, ensure_ascii=False, sort_keys=True)
            if self.before is not None else "",
            "after": json.dumps(self.after, ensure_ascii=False, sort_keys=True)
            if self.after is not None else "",
        }


def _row(event: AuditEvent) -> AuditRow:
    label = AUDIT_ACTIONS.label(event.action) if event.action in AUDIT_ACTIONS else event.action
    return AuditRow(event.id, event.created_at, event.workspace_id, event.actor_label,
                    event.action, label, event.target_type, event.target_id, event.target_label,
                    changed_keys(event.before, event.after), event.before, event.after)


def _statement(workspace_id: int, action: str | None) -> Any:
    stmt = select(AuditEvent).where(AuditEvent.workspace_id == workspace_id)
    if action:
        if action not in AUDIT_ACTIONS:
            raise ValidationFailed("action", f"must be one of {', '.join(AUDIT_ACTIONS.codes())}")
        stmt = stmt.where(AuditEvent.action == action)
    return stmt


def list_events(session: Session, actor: Actor, workspace_id: int,
                filters: AuditFilters | None = None, *, cursor: str | None = None,
                limit: int = PAGE_SIZE) -> tuple[list[AuditRow], str | None]:
    """A page of at most ``limit`` of the workspace's events in ``AUDIT_ORDER`` after
    ``cursor`` (``None``: the first page), through ``keyset.page``: (rows, the next
    page's cursor or ``None`` on the last page). Admins of the workspace only (SPEC 8).
    Raises ``Forbidden`` (also for a missing workspace), ``ValidationFailed`` (an
    unknown action; ``cursor`` for a malformed cursor)."""
    require_role(session, actor, workspace_id, Role.ADMIN)
    stmt = _statement(workspace_id, (filters or AuditFilters()).action)
    events, next_cursor = keyset.page(session, stmt, AUDIT_ORDER, cursor, limit, scalars=True)
    session.commit()
    return [_row(e) for e in events], next_cursor


@dataclass(frozen=True)
class AuditPosition:
    """Where a page of the log sits: ``offset`` (events before it), ``total`` (events of
    the workspace matching the filters), ``has_previous`` and ``previous_cursor`` (the
    newer page's cursor; ``None`` with ``has_previous``: the first page), as
    ``queue_pages.ItemsPage`` has them."""

    offset: int
    total: int
    has_previous: bool
    previous_cursor: str | None


def page_position(session: Session, actor: Actor, workspace_id: int,
                  filters: AuditFilters | None, first: AuditRow | None,
                  limit: int = PAGE_SIZE) -> AuditPosition:
    """The position of the page of ``list_events`` (same ``filters`` and ``limit``) that
    starts with the event ``first`` (``None``: an empty page, or the first one):
    one count, plus two queries (``keyset.previous`` and the events before it) past the
    first page. Admins of the workspace only. Raises ``Forbidden``, ``ValidationFailed``
    (an unknown action)."""
    require_role(session, actor, workspace_id, Role.ADMIN)
    stmt = _statement(workspace_id, (filters or AuditFilters()).action)
    total = session.scalar(select(func.count()).select_from(stmt.subquery())) or 0
    if first is None:
        return AuditPosition(0, total, False, None)
    has_previous, previous_cursor = keyset.previous(session, stmt, AUDIT_ORDER, first, limit,
                                                    scalars=True)
    offset = 0
    if has_previous:
        offset = session.scalar(select(func.count()).select_from(
            stmt.where(AUDIT_ORDER.after(first, reverse=True)).subquery())) or 0
    session.commit()
    return AuditPosition(offset, total, has_previous, previous_cursor)


def export_events(session: Session, actor: Actor, workspace_id: int,
                  filters: AuditFilters | None = None, *,
                  json_values: bool = False) -> Iterator[dict[str, Any]]:
    """Every event of the workspace, oldest first, as ``EXPORT_COLUMNS`` dicts, read in
    batches of 1,000; ``json_values`` keeps ``before`` / ``after`` as objects (JSONL).
    Access is checked here, eagerly, before the rows are read. Admins of the
    workspace only. Raises ``Forbidden``, ``ValidationFailed``."""
    require_role(session, actor, workspace_id, Role.ADMIN)
    stmt = _statement(workspace_id, (filters or AuditFilters()).action)

    def rows() -> Iterator[dict[str, Any]]:
        after = 0
        while True:
            batch = list(session.scalars(stmt.where(AuditEvent.id > after)
                                         .order_by(AuditEvent.id).limit(1000)))
            if not batch:
                return
            for event in batch:
                yield _row(event).as_export(json_values)
            after = batch[-1].id

    return rows()
