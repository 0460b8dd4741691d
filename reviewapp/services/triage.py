"""The not-useful queue (SPEC 3 "BadCase / triage item"): one triage item per run.

``open_item_for_run`` and ``close_item_on_useful`` are building blocks of the verdict use
case in ``services/feedback.py``: no access check (the caller resolved the run through the
actor's scope) and no commit (the caller's transaction does). Neither ever touches the
run's ``status`` (S000, S001 10.3).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..models import Run, TriageItem, TriageState
from ..models.base import utcnow
from ..queries import insert_for

OPENED_NOT_USEFUL = "not_useful"
OPENED_NEGATIVE_TARGET = "negative_target"
AUTO_RESOLVED_NOTE = "Resolved automatically: the run's verdict became useful."


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
    NOTHING`` on the unique ``run_pk``, then a locked read).
    """
    session.flush()
    now = utcnow()
    session.execute(
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
    )
    item = session.scalars(
        select(TriageItem).where(TriageItem.run_pk == run.id).with_for_update()
    ).one()
    changed = False
    if item.state == TriageState.RESOLVED.value:
        item.state = TriageState.NEW.value
        item.resolved_at = None
        item.opened_reason = opened_reason
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


def close_item_on_useful(session: Session, run: Run) -> TriageItem | None:
    """Resolve the run's triage item because its verdict became ``useful``; no commit.

    Only an item opened for a ``not_useful`` verdict and still open (``new`` /
    ``triaged``) is resolved, with ``resolved_at`` = now and a note saying why (appended
    to an existing note). Items opened for a negative citation / step / report rating
    stay open: a useful answer does not fix a bad citation. Returns the item, or ``None``
    when the run has none.
    """
    item = session.scalars(
        select(TriageItem).where(TriageItem.run_pk == run.id).with_for_update()
    ).one_or_none()
    if item is None:
        return None
    if item.opened_reason == OPENED_NOT_USEFUL and item.state in (
        TriageState.NEW.value, TriageState.TRIAGED.value
    ):
        item.state = TriageState.RESOLVED.value
        item.resolved_at = utcnow()
        item.note = f"{item.note}\n{AUTO_RESOLVED_NOTE}" if item.note else AUTO_RESOLVED_NOTE
        item.version += 1
    return item
