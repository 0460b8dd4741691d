"""Re-apply today's redaction to text already stored (``flask runs redact``, SPEC 4).

Why: a redaction fix protects what arrives after it; a run stored before keeps its
secret in clear, in its columns and in the search index. This pass walks every column of
``stored_text.REDACTED`` with the function ingestion uses for it (``secret_scan``) and
writes back what changed.

How: per table, keyset batches over the primary key (``batch_size`` rows: memory stays
bounded at a million runs), each batch redacted in one pass per rule (``redact_texts``,
``redact`` over the batch's values) and committed on its own, so a stopped pass resumes by
running again. Only changed rows are written, ``updated_at`` kept (a rating given before
is not "given on an earlier version" because a secret was hidden). Idempotent: redacted
text redacts to itself, so a second pass changes nothing. What is derived from the text
follows: the search index rows of the runs and tool calls whose indexed text changed
(``run_text``), the dashboard's tool roll-ups when a tool name changed. An identity
(``stored_text.KEPT``: a run id, a tool-call id, a citation id) is checked and counted,
never rewritten. One audit event (``runs.redact``) records the counts per column.

A redacted value another row already holds (``diagnosis_session.session_id``, the one
column rewritten under a UNIQUE constraint): the session is merged into that row or left
and counted (``stored_sessions``). Tool names have no such constraint; the dashboard's
roll-up rows keyed by name are rebuilt by grouping, so names that became one are summed.
A batch that fails is rolled back; the audit event is still recorded, with the batches
committed before it and where the pass stopped (``RedactionStopped``).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Table, and_, or_, select, tuple_, update
from sqlalchemy.orm import Session

from ..actors import Actor
from ..errors import ServiceError, ValidationFailed
from ..extensions import db
from ..models import Run, ToolCall
from . import rollups_rebuild, run_text, stored_sessions
from .access import require_admin_scope
from .audit import record_event
from .secret_scan import (
    redact,
    redact_key,
    redact_run_document,
    redact_session_id,
    redact_text,
    redact_texts,
)
from .stored_text import Column, How, columns_of, tables

AUDIT_ACTION = "runs.redact"
log = logging.getLogger(__name__)


class RedactionStopped(ServiceError):
    """A batch failed (rolled back): the pass stopped at ``table``; the batches before
    it are written and the audit event records them (``details``: its counts)."""


@dataclass
class RedactSummary:
    """What a pass found: ``scanned`` rows per table, ``changed`` rows per column
    (``table.column``; with ``dry_run``, rows that would change), ``identities`` rows
    whose identity holds a secret (counted, not rewritten), ``reindexed_runs`` /
    ``reindexed_calls`` search index rows rewritten; ``merged`` rows per column merged
    into the row that holds their redacted value (``runs_moved``: the runs they had),
    ``collisions`` rows per column left as stored because that row and theirs cannot be
    merged; ``stopped`` ``{table, error}`` when a batch failed. Counts of writes are of
    committed batches only."""

    dry_run: bool = False
    scanned: Counter[str] = field(default_factory=Counter)
    changed: Counter[str] = field(default_factory=Counter)
    identities: Counter[str] = field(default_factory=Counter)
    reindexed_runs: int = 0
    reindexed_calls: int = 0
    merged: Counter[str] = field(default_factory=Counter)
    collisions: Counter[str] = field(default_factory=Counter)
    runs_moved: int = 0
    stopped: dict[str, str] | None = None

    def add(self, batch: _Batch) -> None:
        """Count a batch that was committed (or, in a dry run, checked)."""
        self.changed.update(batch.changed)
        self.merged.update(batch.merged)
        self.collisions.update(batch.collisions)
        self.runs_moved += batch.runs_moved
        self.reindexed_runs += batch.reindexed_runs
        self.reindexed_calls += batch.reindexed_calls

    @property
    def rows_scanned(self) -> int:
        return sum(self.scanned.values())

    def audit_values(self) -> dict[str, Any]:
        """The counts the audit event records."""
        return {"rows_scanned": dict(sorted(self.scanned.items())),
                "rows_changed": dict(sorted(self.changed.items())),
                "identities_holding_a_secret_kept": dict(sorted(self.identities.items())),
                "rows_merged": dict(sorted(self.merged.items())), "runs_moved": self.runs_moved,
                "collisions_kept": dict(sorted(self.collisions.items())),
                **({"stopped": self.stopped} if self.stopped else {})}


@dataclass
class _Batch:
    """What one batch writes (``RedactSummary``'s counts, added once it is committed)."""

    changed: Counter[str] = field(default_factory=Counter)
    merged: Counter[str] = field(default_factory=Counter)
    collisions: Counter[str] = field(default_factory=Counter)
    runs_moved: int = 0
    reindexed_runs: int = 0
    reindexed_calls: int = 0


def _table(name: str) -> Table:
    return db.metadata.tables[name]


def _scope(table: Table, workspace_id: int | None) -> list[Any]:
    if workspace_id is None:
        return []
    if "workspace_id" in table.c:
        return [table.c.workspace_id == workspace_id]
    return [table.c.run_pk.in_(select(Run.id).where(Run.workspace_id == workspace_id))]


def _batches(session: Session, table: Table, columns: list[str], workspace_id: int | None,
             batch_size: int) -> Iterator[list[Any]]:
    """Rows (primary key columns, then ``columns``) of ``table`` in keyset batches."""
    pk = list(table.primary_key.columns)
    key = tuple_(*pk) if len(pk) > 1 else pk[0]
    wanted = [*pk, *(table.c[name] for name in columns if name not in {c.name for c in pk})]
    last: tuple[Any, ...] | None = None
    while True:
        stmt = select(*wanted).where(*_scope(table, workspace_id)).order_by(*pk).limit(batch_size)
        if last is not None:
            stmt = stmt.where(key > (tuple_(*last) if len(pk) > 1 else last[0]))
        rows = session.execute(stmt).all()
        if not rows:
            return
        last = tuple(rows[-1][: len(pk)])
        yield rows


def _cut(value: Any, limit: int | None) -> Any:
    return value[:limit] if limit is not None and isinstance(value, str) else value


def _redact_column(column: Column, values: list[Any], identities: Counter[str]) -> list[Any]:
    """``values`` of ``column`` redacted as ingestion redacts them (None stays None)."""
    present = [i for i, v in enumerate(values) if v is not None]
    out = list(values)
    if column.how is How.TEXT:
        texts = redact_texts([values[i] for i in present])
        for i, text in zip(present, texts, strict=True):
            out[i] = _cut(text, column.limit)
    elif column.how is How.JSON:
        for i, value in zip(present, redact([values[i] for i in present]), strict=True):
            out[i] = value
    elif column.how is How.STRINGS:
        for i in present:
            out[i] = _strings(values[i])
    elif column.how in (How.KEY, How.SESSION_ID):
        # Scanned as one batch; only an id the rules change is redacted again as a key.
        for i in _holding_secrets([values[i] for i in present], present):
            out[i] = redact_key(values[i], column.limit) if column.how is How.KEY \
                else redact_session_id(values[i])
    else:
        for i, meta in zip(present, _message_metas([values[i] for i in present], identities), strict=True):
            out[i] = meta
    return out


def _holding_secrets(texts: list[Any], positions: list[int]) -> list[int]:
    """The ``positions`` of the ``texts`` (strings; others are skipped) the rules would
    change, found in one pass per rule over all of them."""
    strings = [(p, t) for p, t in zip(positions, texts, strict=True) if isinstance(t, str)]
    redacted = redact_texts([t for _, t in strings])
    return [p for (p, t), new in zip(strings, redacted, strict=True) if new != t]


def _strings(value: Any) -> Any:
    """``value`` (JSON) with every string value redacted as text; keys and other values
    as they are (an audit record's keys are the app's own field names)."""
    found: list[str] = []

    def walk(item: Any, emit: Callable[[str], str]) -> Any:
        if isinstance(item, str):
            return emit(item)
        if isinstance(item, dict):
            return {k: walk(v, emit) for k, v in item.items()}
        if isinstance(item, list):
            return [walk(v, emit) for v in item]
        return item

    walk(value, lambda text: found.append(text) or text)
    results = iter(redact_texts(found))
    return walk(value, lambda text: next(results))


def _message_metas(metas: list[Any], identities: Counter[str]) -> list[Any]:
    """Messages' metadata redacted as a run document's (``redaction._message``), their
    identities (citation ids, tool-call ids) put back as stored and counted when they
    hold a secret. An empty object or no object (most messages' metadata) comes out of
    ``redaction._message`` as it went in, so only the others are redacted."""
    full = [i for i, m in enumerate(metas) if isinstance(m, dict) and m]
    doc = redact_run_document({"messages": [{"metadata": metas[i]} for i in full]})
    out = list(metas)
    kept: dict[str, list[Any]] = {"tool_call_ids": [], "citations.id": []}
    for i, new in zip(full, (m.get("metadata") for m in doc["messages"]), strict=True):
        old = metas[i]
        out[i] = new
        if not isinstance(new, dict):
            continue
        ids = old.get("tool_call_ids")
        if isinstance(ids, list):
            new["tool_call_ids"] = ids
            kept["tool_call_ids"] += ids
        citations, redacted = old.get("citations"), new.get("citations")
        if isinstance(citations, list) and isinstance(redacted, list):
            for before, after in zip(citations, redacted, strict=True):
                if isinstance(before, dict) and isinstance(after, dict) and "id" in before:
                    after["id"] = before["id"]
                    kept["citations.id"].append(before["id"])
    for name, ids in kept.items():
        identities[f"message.metadata.{name}"] += len(_holding_secrets(ids, list(range(len(ids)))))
    return out


@dataclass
class _Changes:
    runs: set[int] = field(default_factory=set)  # run pks whose indexed text changed
    sessions: set[int] = field(default_factory=set)  # session pks whose session_id changed
    calls: list[tuple[int, str]] = field(default_factory=list)  # (workspace, call id)
    tool_names: set[int] = field(default_factory=set)  # workspaces whose tool names changed


_RUN_INDEXED = {"query", "answer"}
_IDENTITY_COLUMNS = {"diagnosis_run": "run_id", "tool_call_audit": "id"}


def _pass_table(session: Session, name: str, workspace_id: int | None, batch_size: int,
                summary: RedactSummary, dry_run: bool) -> None:
    table = _table(name)
    cols = columns_of(name)
    identity = _IDENTITY_COLUMNS.get(name)
    extra = [identity] if identity else []
    if name == "tool_call_audit":
        extra.append("run_pk")
    if name == "diagnosis_session":
        extra += ["workspace_id", "status", "feedback"]
    read = [c.column for c in cols] + extra
    pk_names = [c.name for c in table.primary_key.columns]
    keep_updated = "updated_at" in table.c
    for rows in _batches(session, table, read, workspace_id, batch_size):
        summary.scanned[name] += len(rows)
        index = {n: i for i, n in enumerate(pk_names + [n for n in read if n not in pk_names])}
        if identity:
            ids = [row[index[identity]] for row in rows]
            summary.identities[f"{name}.{identity}"] += len(_holding_secrets(ids, list(range(len(ids)))))
        writes: dict[int, dict[str, Any]] = {}
        for column in cols:
            values = [row[index[column.column]] for row in rows]
            for i, (old, new) in enumerate(zip(values, _redact_column(column, values, summary.identities),
                                                strict=True)):
                if new != old:
                    writes.setdefault(i, {})[column.column] = new
        batch = _Batch()
        merges: list[tuple[int, int]] = []
        if name == "diagnosis_session":
            found = stored_sessions.collisions(session, rows, index, writes)
            merges, batch.runs_moved = found.merges, found.runs_moved
            batch.merged.update({found.COLUMN: len(found.merges)} if found.merges else {})
            batch.collisions.update({found.COLUMN: found.kept} if found.kept else {})
        for values in writes.values():
            batch.changed.update(f"{name}.{column}" for column in values)
        if dry_run or not (writes or merges):
            session.rollback()
            summary.add(batch)
            continue
        changes = _write_batch(session, table, rows, index, pk_names, writes, merges, keep_updated)
        _reindex(session, changes, batch)
        session.commit()
        summary.add(batch)
        for ws in sorted(changes.tool_names):
            rollups_rebuild.rebuild(session, ws)


def _write_batch(session: Session, table: Table, rows: list[Any], index: dict[str, int],
                 pk_names: list[str], writes: dict[int, dict[str, Any]], merges: list[tuple[int, int]],
                 keep_updated: bool) -> _Changes:
    """Write a batch's changed values (``updated_at`` kept) and merge its sessions
    (``merges``: (session pk, pk of the session it goes into)); what changed, to re-index."""
    changes = _Changes()
    for i, values in writes.items():
        row = rows[i]
        key = {n: row[index[n]] for n in pk_names}
        stmt = update(table).where(*(table.c[n] == v for n, v in key.items())).values(**values)
        if keep_updated:
            stmt = stmt.values(updated_at=table.c.updated_at)
        session.execute(stmt)
        _note(changes, table.name, row, index, values)
    for old, into in merges:
        changes.runs |= stored_sessions.merge(session, old, into)
    return changes


def _note(changes: _Changes, name: str, row: Any, index: dict[str, int], values: dict[str, Any]) -> None:
    if name == "diagnosis_run" and _RUN_INDEXED & set(values):
        changes.runs.add(row[index["id"]])
    elif name == "diagnosis_session" and "session_id" in values:
        changes.sessions.add(row[index["id"]])
    elif name == "tool_call_audit" and set(values) & set(run_text.CALL_TEXT_COLUMNS):
        changes.calls.append((row[index["workspace_id"]], row[index["id"]]))
        if "tool_name" in values:
            changes.tool_names.add(row[index["workspace_id"]])


def _reindex(session: Session, changes: _Changes, summary: _Batch) -> None:
    """Rewrite the search index rows of what changed (``run_text``)."""
    runs = set(changes.runs)
    if changes.sessions:
        runs |= set(session.scalars(select(Run.id).where(Run.diagnosis_session_id.in_(changes.sessions))))
    if runs:
        run_text.store_run_text(session, runs)
        summary.reindexed_runs += len(runs)
    if changes.calls:
        pairs = [and_(ToolCall.workspace_id == ws, ToolCall.id == call_id) for ws, call_id in changes.calls]
        run_text.store_call_text(session, session.execute(
            select(ToolCall.workspace_id, ToolCall.id, ToolCall.run_pk,
                   *(getattr(ToolCall, n) for n in run_text.CALL_TEXT_COLUMNS)).where(or_(*pairs))).mappings())
        summary.reindexed_calls += len(changes.calls)


def redact_stored(session: Session, actor: Actor, *, workspace_id: int | None = None,
                  dry_run: bool = False, batch_size: int = 500,
                  progress: Callable[[str, int], None] | None = None) -> RedactSummary:
    """Re-apply today's redaction to every stored text of ``stored_text.REDACTED`` (of one
    workspace, or of all: ``None``), batch by batch (``batch_size`` rows, one transaction
    each), and rewrite the search index rows whose text changed; record one audit event
    ``runs.redact`` with the counts (not for ``dry_run``, which writes nothing and reports
    what would change). A session whose redacted id another session holds is merged into
    it or, when either has state of its own, left and counted (module doc). A batch that
    fails is rolled back and the event still recorded, with what was committed and where
    it stopped; then ``RedactionStopped``. ``progress(table, rows scanned so far)`` after
    each table.
    Access: the system actor; an admin (not a token) for their own workspace. Raises
    ``Forbidden``, ``ValidationFailed`` (``batch_size`` < 1), ``RedactionStopped``. SPEC 4."""
    if batch_size < 1:
        raise ValidationFailed("batch_size", "must be at least 1")
    require_admin_scope(session, actor, workspace_id)
    session.commit()
    summary = RedactSummary(dry_run=dry_run)
    name = ""
    try:
        for name in tables():
            _pass_table(session, name, workspace_id, batch_size, summary, dry_run)
            if progress is not None:
                progress(name, summary.scanned[name])
    except Exception as exc:  # noqa: BLE001 - recorded, logged, raised as RedactionStopped
        session.rollback()
        log.exception("runs.redact stopped at %s", name)
        message = str(getattr(exc, "orig", None) or exc)
        reason = redact_text(message.splitlines()[0])[:200] if message else ""
        summary.stopped = {"table": name, "error": type(exc).__name__}
        if not dry_run:
            _record(session, actor, workspace_id, summary)
        raise RedactionStopped(
            f"redaction stopped at {name} ({type(exc).__name__}: {reason}); the batch was rolled back"
            + ("" if dry_run else "; the batches before it are written and recorded in the audit "
               "event (runs.redact); run again to resume"), details=summary.audit_values()) from exc
    if not dry_run:
        _record(session, actor, workspace_id, summary)
    return summary


def _record(session: Session, actor: Actor, workspace_id: int | None, summary: RedactSummary) -> None:
    record_event(session, actor, workspace_id=workspace_id, action=AUDIT_ACTION,
                 target_type="workspace" if workspace_id is not None else "system",
                 target_id=workspace_id if workspace_id is not None else "all",
                 after=summary.audit_values())
    session.commit()

