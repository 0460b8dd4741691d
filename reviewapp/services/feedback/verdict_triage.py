"""The triage item a verdict or a negative part rating opens, reopens or resolves
(SPEC 3, 6.2): the building blocks of ``verdict`` (split from it by concern). No access
check, no commit."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ...domain.triage_flow import (
    AUTO_RESOLVE_REASONS,
    EVENT_AUTO_REOPENED,
    EVENT_AUTO_RESOLVED,
    OPENED_NOT_USEFUL,
    REOPENED_NOT_USEFUL,
    RESOLVED_USEFUL,
)
from ...models import (
    Run,
    TriageItem,
    TriageState,
)
from ...models.base import utcnow
from ...queries import insert_for
from .. import rollups
from ..triage.history import record as record_triage_event


def open_item_for_run(session: Session, run: Run, opened_reason: str = OPENED_NOT_USEFUL) -> TriageItem:
    """The run's triage item, opened if there is none. Idempotent; no commit.

    ``opened_reason``: ``"not_useful"`` (the run's verdict) or ``"negative_target"`` (a
    negative rating of a citation / step / report, when the workspace setting
    ``triage_negative_targets`` is on).

    What happens to an existing item:
    - ``new`` / ``triaged``: kept as it is (a lead may be working on it); a ``not_useful``
      verdict upgrades the reason of an item opened for a negative target rating.
    - ``resolved``: reopened (state ``new``, ``resolved_at`` cleared), assignee, category
      and note kept. A run judged not useful again after its case was resolved, or after
      a useful verdict closed it automatically, belongs in front of a lead again.
    - ``wont_fix``: kept. A lead decided not to act on this run; more not-useful
      verdicts are not new information about that decision.

    Concurrent first openings end as one item without error (``INSERT … ON CONFLICT DO
    NOTHING`` on the unique ``run_pk``, then a locked read). The dashboard's triage
    roll-up counts the opening and a reopening (``rollups.move_triage_item``).
    """
    session.flush()
    now = utcnow()
    inserted = session.execute(
        insert_for(session, TriageItem.__table__)
        .values(
            workspace_id=run.workspace_id,
            run_pk=run.id,
            state=TriageState.NEW.value,
            opened_reason=opened_reason,
            version=1,
            created_at=now,
            updated_at=now,
        )
        .on_conflict_do_nothing(index_elements=["run_pk"])
        .returning(TriageItem.id)
    ).first() is not None
    item = session.scalars(_locked_item(run)).one()
    if inserted:
        rollups.move_triage_item(session, item.workspace_id, item.created_at, None, item.state)
    changed = False
    if item.state == TriageState.RESOLVED.value:
        rollups.move_triage_item(session, item.workspace_id, item.created_at, item.state,
                                 TriageState.NEW.value)
        item.state = TriageState.NEW.value
        item.resolved_at = None
        item.opened_reason = opened_reason
        record_triage_event(session, item, EVENT_AUTO_REOPENED, REOPENED_NOT_USEFUL
                            if opened_reason == OPENED_NOT_USEFUL else
                            "a part of the run was rated not helpful again")
        changed = True
    elif (
        item.state in (TriageState.NEW.value, TriageState.TRIAGED.value)
        and opened_reason == OPENED_NOT_USEFUL
        and item.opened_reason != OPENED_NOT_USEFUL
    ):
        item.opened_reason = OPENED_NOT_USEFUL
        changed = True
    if changed:
        item.version += 1
    return item


def _locked_item(run: Run) -> Any:
    """SELECT the run's triage item, locked (``FOR UPDATE``) and read again from the
    row, so its state is the one every later writer starts from."""
    return (select(TriageItem).where(TriageItem.run_pk == run.id).with_for_update()
            .execution_options(populate_existing=True))


def close_item_on_useful(session: Session, run: Run) -> TriageItem | None:
    """Resolve the run's triage item because its verdict became ``useful``
    (``close_item_automatically``); no commit."""
    return close_item_automatically(session, run, RESOLVED_USEFUL)


def close_item_automatically(session: Session, run: Run, why: str) -> TriageItem | None:
    """Resolve the run's triage item because nothing is left to triage (``why``: the
    verdict became useful, or the last negative rating was withdrawn); no commit.

    Only an item opened for a ``not_useful`` verdict and still open (``new`` /
    ``triaged``) is resolved, with ``resolved_at`` = now and an entry in the item's
    history saying why, with its time (``triage.history``); the lead's note is left
    alone. Items opened for a negative citation / step / report rating stay open: a
    useful answer does not fix a bad citation. Returns the item, or ``None`` when the run
    has none. Raises ``UnknownValue`` for a ``why`` that is no reason of
    ``triage_flow.AUTO_RESOLVE_REASONS`` (each has the label the item's state shows).
    """
    AUTO_RESOLVE_REASONS.get(why)
    item = session.scalars(_locked_item(run)).one_or_none()
    if item is None:
        return None
    if item.opened_reason == OPENED_NOT_USEFUL and item.state in (
        TriageState.NEW.value, TriageState.TRIAGED.value
    ):
        rollups.move_triage_item(session, item.workspace_id, item.created_at, item.state,
                                 TriageState.RESOLVED.value)
        item.state = TriageState.RESOLVED.value
        item.resolved_at = utcnow()
        item.version += 1
        record_triage_event(session, item, EVENT_AUTO_RESOLVED, why)
    return item
