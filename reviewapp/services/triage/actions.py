"""Changes to triage items: assign, categorise, note, state moves, and the same in bulk
with a result per item (SPEC 3, 8, 10). Each one carries the version its page showed."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ...actors import Actor
from ...domain import triage_flow
from ...errors import Conflict, Forbidden, ValidationFailed
from ...models import (
    Membership,
    TriageItem,
    User,
)
from ...models.base import MAX_ID, utcnow
from ...queries import get_triage_item_for
from .. import rollups
from ..admin.settings import categories_of, check_category
from ..params import id_value, int_param
from ..secret_scan import redact_typed
from ._rows import ASSIGNEE_ROLES, TriageRow, rows_by_id, triage_workspaces
from .history import latest_change, record

NOTE_MAX = 4000
BULK_MAX = 500


def _current_state(session: Session, item_id: int) -> dict[str, Any]:
    session.expire_all()
    return rows_by_id(session, [item_id])[item_id].to_dict()


BY_YOU = "by you, in another tab or window"


def changed_by(session: Session, actor: Actor, item_id: int) -> str:
    """Who changed triage item ``item_id`` last, as a stale write says it after "changed ":
    ``BY_YOU`` (the ``actor``'s own change, another tab), "by <username>" (another
    person), "automatically (<why>)" (the app), "by someone else" (no history)."""
    latest = latest_change(session, item_id)
    if latest is None:
        return "by someone else"
    actor_id, username, detail = latest
    if actor_id is None:
        return f"automatically ({detail})" if detail else "automatically"
    if actor_id == actor.user_id:
        return BY_YOU
    return f"by {username}"


def stale_phrase(session: Session, actor: Actor, item_id: int) -> str:
    """What a stale write says happened to item ``item_id``: "changed <who> since your
    page was loaded" (``changed_by``), lower case, no full stop."""
    who = changed_by(session, actor, item_id)
    return f"changed {who}{',' if who == BY_YOU else ''} since your page was loaded"


def _stale(session: Session, actor: Actor, item_id: int) -> Conflict:
    details = _current_state(session, item_id)
    return Conflict(
        f"This item was {stale_phrase(session, actor, item_id)}; "
        "nothing was saved. Here is its current state.",
        details=details,
    )


def _check_version(version: Any) -> int:
    try:
        value = int(version)
    except (TypeError, ValueError):
        raise ValidationFailed("version", "required whole number") from None
    if value < 1:
        raise ValidationFailed("version", "must be 1 or more")
    return value


def _versioned_update(session: Session, item: TriageItem, version: int,
                      changes: dict[str, Any]) -> bool:
    """UPDATE ... SET changes, version + 1 WHERE id = item AND version = ``version``
    (optimistic lock, SPEC 8). False when the version is stale, read or written by a
    concurrent writer that got there first: nothing changed then. A state move goes to
    the dashboard's roll-up: the update matched ``version``, so the state it left is
    ``item.state``, read at that version."""
    if item.version != version:
        return False
    result = session.execute(
        update(TriageItem)
        .where(TriageItem.id == item.id, TriageItem.version == version)
        .values(**changes, version=version + 1, updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    if result.rowcount != 1:
        return False
    rollups.move_triage_item(session, item.workspace_id, item.created_at, item.state,
                             changes.get("state", item.state))
    return True


def _apply(session: Session, actor: Actor, item: TriageItem, version: int,
           changes: dict[str, Any]) -> None:
    """``_versioned_update`` or ``Conflict`` with the item's current state."""
    if not _versioned_update(session, item, version, changes):
        raise _stale(session, actor, item.id)
    session.expire(item)


def _assignee_check(session: Session, workspace_id: int, assignee_id: int | None) -> str | None:
    """``None`` when ``assignee_id`` may be assigned in the workspace, else the reason."""
    if assignee_id is None:
        return None
    found = session.scalar(
        select(Membership.id).join(User, User.id == Membership.user_id).where(
            Membership.workspace_id == workspace_id, Membership.user_id == assignee_id,
            Membership.role.in_(ASSIGNEE_ROLES), User.active.is_(True),
        )
    )
    if found is None:
        return "must be an active lead or admin of the item's workspace"
    return None


def _assignee_id(value: Any) -> int | None:
    if value is None or (isinstance(value, str) and value.strip() in ("", "none")):
        return None
    return id_value(value, "assignee_id", "must be a user id or empty")


def _note(value: str | None) -> str | None:
    if value is None or not value.strip():
        return None
    if len(value) > NOTE_MAX:
        raise ValidationFailed("note", f"at most {NOTE_MAX} characters")
    return redact_typed(value, NOTE_MAX)  # typed text is redacted before storage (SPEC 4)


def _state_changes(item: TriageItem, state: str) -> dict[str, Any]:
    if state not in triage_flow.STATES:
        raise ValidationFailed("state", f"must be one of {', '.join(triage_flow.STATES)}")
    if not triage_flow.can_move(item.state, state):
        raise ValidationFailed(
            "state", f"an item that is {item.state} cannot move to {state}"
        )
    closed = state in triage_flow.CLOSED_STATES
    return {"state": state, "resolved_at": utcnow() if closed else None}


_TRACKED = ("state", "assignee_id", "fault_category", "note")


def _snapshot(item: TriageItem) -> dict[str, Any]:
    return {name: getattr(item, name) for name in ("id", "workspace_id", *_TRACKED)}


def _record_changes(session: Session, actor: Actor, old: dict[str, Any],
                    changes: dict[str, Any]) -> None:
    """Append the history entries of a lead's applied change; ``old``: the item's
    ``_snapshot`` before it."""
    item = (old["id"], old["workspace_id"])
    if "state" in changes and changes["state"] != old["state"]:
        record(session, item, triage_flow.EVENT_MOVED,
               f"{triage_flow.STATE_LABELS[old['state']]} → {triage_flow.STATE_LABELS[changes['state']]}",
               actor.user_id)
    if "assignee_id" in changes and changes["assignee_id"] != old["assignee_id"]:
        name = session.scalar(select(User.username).where(User.id == changes["assignee_id"])) \
            if changes["assignee_id"] is not None else None
        record(session, item, triage_flow.EVENT_ASSIGNED,
               f"assigned to {name}" if name else "unassigned", actor.user_id)
    if "fault_category" in changes and changes["fault_category"] != old["fault_category"]:
        record(session, item, triage_flow.EVENT_CATEGORISED,
               changes["fault_category"] or "cleared", actor.user_id)
    if "note" in changes and changes["note"] != old["note"]:
        record(session, item, triage_flow.EVENT_NOTE, None, actor.user_id)


def _load(session: Session, actor: Actor, item_id: Any) -> TriageItem:
    try:
        item_pk = int(item_id)
    except (TypeError, ValueError):
        raise Forbidden() from None
    item = get_triage_item_for(session, actor, item_pk)
    if item is None:
        raise Forbidden()
    return item


def _single(session: Session, actor: Actor, item_id: int, version: Any,
            changes_of: Any) -> TriageRow:
    expected = _check_version(version)
    item = _load(session, actor, item_id)
    if item.version != expected:
        raise _stale(session, actor, item.id)
    changes = changes_of(item)
    old = _snapshot(item)
    _apply(session, actor, item, expected, changes)
    _record_changes(session, actor, old, changes)
    session.commit()
    return rows_by_id(session, [item.id])[item.id]


def assign(session: Session, actor: Actor, item_id: int, version: int,
           assignee_id: int | str | None) -> TriageRow:
    """Assign the item to a lead or admin of its workspace (``None`` unassigns).

    Raises ``Forbidden`` (not a lead of the item's workspace, or no such item),
    ``ValidationFailed`` (``assignee_id`` not an active lead / admin there, bad version),
    ``Conflict`` (stale ``version``; ``details`` = the current row)."""
    target = _assignee_id(assignee_id)

    def changes(item: TriageItem) -> dict[str, Any]:
        problem = _assignee_check(session, item.workspace_id, target)
        if problem:
            raise ValidationFailed("assignee_id", problem)
        return {"assignee_id": target}

    return _single(session, actor, item_id, version, changes)


def set_fault_category(session: Session, actor: Actor, item_id: int, version: int,
                       fault_category: str | None) -> TriageRow:
    """Set (or clear, with ``None`` / blank) the item's fault category: a code of its
    workspace's one fault-category vocabulary (shared with cases, SPEC 7), as typed; any
    other value is refused with the list. Raises ``Forbidden``, ``ValidationFailed``
    (``fault_category``), ``Conflict`` (its ``details``, the current row, also hold
    ``submitted_labels``: ``{"fault_category": the sent code as the workspace labels it}``,
    so a 409 page shows both versions alike)."""
    try:
        return _single(session, actor, item_id, version, lambda item: {
            "fault_category": check_category(session, item.workspace_id, fault_category)})
    except Conflict as stale:
        code = (fault_category or "").strip()
        labels = categories_of(session, stale.details["workspace_id"])
        stale.details["submitted_labels"] = {"fault_category": labels.label_or_code(code) or None}
        raise


def set_note(session: Session, actor: Actor, item_id: int, version: int,
             note: str | None) -> TriageRow:
    """Replace the item's note (at most 4,000 characters; blank clears it).
    Raises ``Forbidden``, ``ValidationFailed``, ``Conflict``."""
    text = _note(note)
    return _single(session, actor, item_id, version, lambda item: {"note": text})


def move(session: Session, actor: Actor, item_id: int, version: int, state: str) -> TriageRow:
    """Move the item to ``state`` along ``domain.triage_flow.TRANSITIONS`` (reopen is
    ``resolved | wont_fix -> triaged``); ``resolved_at`` is set on closing and cleared on
    reopening. The run's ``status`` is never touched.
    Raises ``Forbidden``, ``ValidationFailed`` (unknown state, move not allowed), ``Conflict``."""
    return _single(session, actor, item_id, version, lambda item: _state_changes(item, state))


class _Skip(Exception):
    """The item already is what the bulk action would make it: left as it is."""


@dataclass(frozen=True)
class BulkOutcome:
    """The result for one item of a bulk action: ``status`` is ``applied``, ``skipped``
    (the item already is what the action would make it: nothing to do, not an error),
    ``conflict`` (stale version: nothing changed, ``row`` is the current state),
    ``invalid`` (the action does not apply to this item, ``message`` says why) or
    ``forbidden`` (no such item or not yours: ``row`` is ``None``)."""

    item_id: int
    status: str
    message: str
    row: TriageRow | None


def _parse_bulk_items(items: Iterable[tuple[Any, Any]]) -> list[tuple[int, int]]:
    parsed: list[tuple[int, int]] = []
    seen: dict[int, int] = {}
    for raw_id, raw_version in items:
        item_id = id_value(raw_id, "items", "each item must be an id and a version")
        version = int_param({"items": raw_version}, "items", 0, MAX_ID,
                            "each item must be an id and a version")
        if item_id is None or version is None:
            raise ValidationFailed("items", "each item must be an id and a version")
        if item_id in seen:
            if seen[item_id] != version:  # which one did the user mean? Say so, apply nothing.
                raise ValidationFailed(
                    "items", f"item {item_id} is listed twice with different versions")
            continue
        seen[item_id] = version
        parsed.append((item_id, version))
    if not parsed:
        raise ValidationFailed("items", "tick the box of at least one item first")
    if len(parsed) > BULK_MAX:
        raise ValidationFailed("items", f"at most {BULK_MAX} items at once")
    return parsed


def parse_item_tokens(tokens: Iterable[str]) -> list[tuple[int, int]]:
    """Parse ``"<item id>:<version>"`` tokens (the bulk form's checkbox values).
    Raises ``ValidationFailed("items", ...)`` for a malformed token."""
    pairs = []
    for token in tokens:
        item_id, sep, version = str(token).partition(":")
        if not sep or not item_id.isdigit() or not version.isdigit():
            raise ValidationFailed("items", "each item must look like 12:3 (id:version)")
        pairs.append((int(item_id), int(version)))
    return pairs


def _bulk(session: Session, actor: Actor, items: Iterable[tuple[Any, Any]],
          changes_of: Any) -> list[BulkOutcome]:
    parsed = _parse_bulk_items(items)
    if not triage_workspaces(session, actor):
        raise Forbidden()
    results: list[tuple[int, str, str]] = []
    for item_id, version in parsed:
        item = get_triage_item_for(session, actor, item_id)
        if item is None:
            results.append((item_id, "forbidden", Forbidden().message))
            continue
        if item.version != version:
            results.append((item_id, "conflict", f"{stale_phrase(session, actor, item_id)}; not changed"))
            continue
        try:
            changes = changes_of(item)
        except _Skip as exc:
            results.append((item_id, "skipped", str(exc)))
            continue
        except ValidationFailed as exc:
            results.append((item_id, "invalid", exc.message))
            continue
        old = _snapshot(item)
        if _versioned_update(session, item, version, changes):
            _record_changes(session, actor, old, changes)
            results.append((item_id, "applied", "done"))
        else:
            results.append((item_id, "conflict", f"{stale_phrase(session, actor, item_id)}; not changed"))
    session.commit()
    rows = rows_by_id(session, [i for i, status, _ in results if status != "forbidden"])
    return [BulkOutcome(i, status, message, rows.get(i)) for i, status, message in results]


def bulk_assign(session: Session, actor: Actor, items: Iterable[tuple[Any, Any]],
                assignee_id: int | str | None) -> list[BulkOutcome]:
    """Assign every (item id, version) of ``items`` to ``assignee_id``, in one transaction,
    each with its own version check; returns one ``BulkOutcome`` per distinct item, in
    input order: a stale item is reported (``conflict``) and the others are applied.
    Raises ``ValidationFailed`` (no items, more than 500, malformed), ``Forbidden`` (the
    actor is lead nowhere)."""
    target = _assignee_id(assignee_id)

    def changes(item: TriageItem) -> dict[str, Any]:
        problem = _assignee_check(session, item.workspace_id, target)
        if problem:
            raise ValidationFailed("assignee_id", problem)
        return {"assignee_id": target}

    return _bulk(session, actor, items, changes)


def bulk_move(session: Session, actor: Actor, items: Iterable[tuple[Any, Any]],
              state: str) -> list[BulkOutcome]:
    """Move every (item id, version) of ``items`` to ``state``, like ``bulk_assign``:
    per-item outcome, one transaction; an item already in ``state`` is ``skipped`` (left
    as it is, not an error), one for which the move is not allowed is ``invalid``. Raises ``ValidationFailed`` (unknown state, bad items),
    ``Forbidden``."""
    if state not in triage_flow.STATES:
        raise ValidationFailed("state", f"must be one of {', '.join(triage_flow.STATES)}")

    def changes(item: TriageItem) -> dict[str, Any]:
        if item.state == state:  # e.g. "Triaged" on an item already triaged: nothing to do
            raise _Skip(f"already {triage_flow.STATE_LABELS[state].lower()}; left as it is")
        return _state_changes(item, state)

    return _bulk(session, actor, items, changes)
