"""A triage item's history (``triage_event``): every state move, assignment, category and
note change, and what the app did on its own (automatic resolve / reopen) — with its
time and who did it. Automatic notes live here, never in the lead's note (issue 17)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from ...domain.triage_flow import EVENT_AUTO_REOPENED, EVENT_AUTO_RESOLVED, EVENT_LABELS
from ...models import TriageEvent, TriageItem, User


def record(session: Session, item: TriageItem | tuple[int, int], action: str,
           detail: str | None = None, actor_id: int | None = None) -> None:
    """Append one history entry for ``item`` (or its (id, workspace id)); ``action`` one of
    ``domain.triage_flow.EVENT_LABELS``; ``actor_id`` ``None`` when the app acted on its
    own. No access check (the caller resolved the item in the actor's scope), no commit."""
    item_id, workspace_id = item if isinstance(item, tuple) else (item.id, item.workspace_id)
    session.add(TriageEvent(item_id=item_id, workspace_id=workspace_id,
                            actor_id=actor_id, action=action, detail=detail))


_AUTOMATIC = (EVENT_AUTO_RESOLVED, EVENT_AUTO_REOPENED)


@dataclass(frozen=True)
class ItemEvent:
    """One history entry as shown: ``at`` (UTC), ``actor`` (username, or ``None`` for the
    app itself), ``label`` (what happened, in a lead's words), ``detail`` (the sentence)."""

    at: datetime
    actor: str | None
    automatic: bool
    action: str
    label: str
    detail: str | None


def latest_change(session: Session, item_id: int) -> tuple[int | None, str | None, str | None] | None:
    """Who made triage item ``item_id``'s latest recorded change: ``(actor_id, username,
    detail)`` — ``actor_id`` and ``username`` ``None`` when the app acted on its own (then
    ``detail`` says why) — or ``None`` for an item with no history. No access check."""
    found = session.execute(
        select(TriageEvent.actor_id, User.username, TriageEvent.detail)
        .outerjoin(User, User.id == TriageEvent.actor_id).where(TriageEvent.item_id == item_id)
        .order_by(TriageEvent.id.desc()).limit(1)
    ).first()
    return None if found is None else (found[0], found[1], found[2])


def item_history(session: Session, item_id: int) -> list[ItemEvent]:
    """The history of triage item ``item_id``, oldest first. No access check: only for a
    read model that has just checked the item (``detail.get_item``)."""
    rows = session.execute(
        select(TriageEvent, User.username).outerjoin(User, User.id == TriageEvent.actor_id)
        .where(TriageEvent.item_id == item_id).order_by(TriageEvent.created_at, TriageEvent.id)
    ).all()
    return [ItemEvent(e.created_at, username, e.action in _AUTOMATIC, e.action,
                      EVENT_LABELS.get(e.action, e.action), e.detail) for e, username in rows]
