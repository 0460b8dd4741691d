"""A session id that ``flask runs redact`` rewrites to a value another session of its
workspace already holds (UNIQUE (workspace_id, session_id), SPEC 3, 4).

Why: the digest of ``secret_scan.redact_session_id`` makes the redacted form of one
original the same on every path, so such a pair is one session stored twice: runs sent
before the redaction fix (id in clear) and runs the agent sent again after it (id
redacted). Writing the redacted id would break the constraint (the pass stopped there
and never finished).

What: a session that holds nothing but its id (none of ``STATE``: a legacy session's
question, answer, status, evaluation or verdict) is merged into the one holding the
redacted id: its runs and their tool calls (the only rows that name a session,
``tests/services/test_stored_redaction.py`` pins it) move there, the earlier
``created_at`` is kept, the row is deleted; the caller re-indexes the moved runs (the
search index holds the session id). A pair where either has state of its own is left as
stored and counted; ``flask runs redact`` reports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from sqlalchemy import and_, delete, func, or_, select, update
from sqlalchemy.orm import Session

from ..models import DiagnosisSession, Run, ToolCall

STATE = ("query", "answer", "status", "self_evaluation", "feedback")  # a legacy session's own


@dataclass
class Collisions:
    """A batch's sessions whose redacted id is taken: ``merges`` (session pk, pk of the
    session it goes into), ``runs_moved`` (the runs those have), ``kept`` (left as
    stored: one of the pair has ``STATE``)."""

    COLUMN: ClassVar[str] = "diagnosis_session.session_id"
    merges: list[tuple[int, int]] = field(default_factory=list)
    runs_moved: int = 0
    kept: int = 0


def _own_state(row: Any) -> bool:
    return any(getattr(row, name) is not None for name in STATE)


def collisions(session: Session, rows: list[Any], index: dict[str, int],
               writes: dict[int, dict[str, Any]]) -> Collisions:
    """The sessions of a batch (``rows``: tuples holding ``id``, ``workspace_id`` and the
    ``STATE`` columns at ``index``) whose new ``session_id`` (``writes``: row position ->
    new values) another session of their workspace holds, in the database or by an
    earlier row of the batch. Their ``session_id`` write is dropped from ``writes`` (a
    row left with nothing to write is removed). One query for the holders, one counting
    the runs to move; nothing is written."""
    wanted: dict[tuple[int, str], list[int]] = {}
    for i, values in writes.items():
        if "session_id" in values:
            wanted.setdefault((rows[i][index["workspace_id"]], values["session_id"]), []).append(i)
    found = Collisions()
    if not wanted:
        return found
    t = DiagnosisSession.__table__
    holders = {(r.workspace_id, r.session_id): (r.id, _own_state(r)) for r in session.execute(
        select(t.c.id, t.c.workspace_id, t.c.session_id, *(t.c[n] for n in STATE))
        .where(or_(*(and_(t.c.workspace_id == ws, t.c.session_id == sid) for ws, sid in wanted)))).all()}
    state = [index[n] for n in STATE]
    for key, positions in wanted.items():
        if key in holders:
            into, into_state = holders[key]
        else:  # the first row takes the value; any other of the batch meets it
            first = rows[positions[0]]
            into, into_state = first[index["id"]], any(first[j] is not None for j in state)
            positions = positions[1:]
        for i in positions:
            del writes[i]["session_id"]
            if into_state or any(rows[i][j] is not None for j in state):
                found.kept += 1
            else:
                found.merges.append((rows[i][index["id"]], into))
            if not writes[i]:
                del writes[i]
    if found.merges:
        found.runs_moved = session.scalar(select(func.count()).select_from(Run).where(
            Run.diagnosis_session_id.in_([old for old, _ in found.merges]))) or 0
    return found


def merge(session: Session, old: int, into: int) -> set[int]:
    """Move the runs of session ``old`` and their tool calls to session ``into`` (their
    ``updated_at`` kept), keep the earlier ``created_at`` on ``into``, delete ``old``
    (in the caller's transaction); the pks of the runs moved. Both rows are locked first
    (PostgreSQL), so no run can be added to ``old`` between the move and the delete
    (which would cascade to it)."""
    s, r, c = DiagnosisSession.__table__, Run.__table__, ToolCall.__table__
    session.execute(select(s.c.id).where(s.c.id.in_([old, into])).order_by(s.c.id).with_for_update())
    moved = set(session.scalars(select(r.c.id).where(r.c.diagnosis_session_id == old)))
    session.execute(update(r).where(r.c.diagnosis_session_id == old)
                    .values(diagnosis_session_id=into, updated_at=r.c.updated_at))
    for parent in (c.c.chat_session_id, c.c.diagnostic_task_id):
        session.execute(update(c).where(parent == old).values({parent: into, c.c.updated_at: c.c.updated_at}))
    started = select(s.c.created_at).where(s.c.id == old).scalar_subquery()
    session.execute(update(s).where(s.c.id == into, s.c.created_at > started)
                    .values(created_at=started, updated_at=s.c.updated_at))
    session.execute(delete(s).where(s.c.id == old))
    return moved
