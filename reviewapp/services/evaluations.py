"""A run's ``self_evaluation``: the app's own evaluations, imported ones, bulk re-scoring
(SPEC 5).

Who writes which key (``domain/self_evaluation.py`` holds the pure rules):

* ``rule_evaluation`` — the app (``domain/evidence.py``) once the run is SUCCESS / FAILED;
  a RUNNING run is not scored and its key (absent, or imported) is left as it is.
* ``aiops_rule_evaluation`` — the app (``domain/aiops.py``) once an AIOps run is finished.
  The spec describes it as a deterministic rule set, so the app computes it itself: an
  evaluation the agent sent under this key is kept only while the app has not computed
  one (a RUNNING run, or a chat run); from the finish on the app's value replaces it, and
  a later import of the key is ignored (``app_owned_keys``).
* ``citation_gatekeeper`` — the app (``domain/gatekeeper.py``) whenever the run has a
  citation; absent when it has none.
* ``verifier_evaluation`` — the agent's verifier, imported as sent.

Every write changes ONE key with one atomic UPDATE in the database
(``queries.self_evaluation_key_update``), never read-modify-write in Python, so
concurrent writers of different keys never overwrite each other. The run-list columns
``evidence_score`` and ``verifier_verdict`` change in the same statement as their key.

A failure while computing a key leaves that key absent (it is removed if it was there),
logs the error with the run id, and never fails the caller: ingestion goes on.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Text, bindparam, cast, func, select, update
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..config import Config
from ..domain.aiops import DEFAULT_EVIDENCE_TOOLS, evaluate_aiops, evidence_tool_groups
from ..domain.evidence import score_evidence
from ..domain.gatekeeper import CitedMessage, check_citations
from ..domain.self_evaluation import (
    AIOPS_KEY,
    COLUMN_OF_KEY,
    GATEKEEPER_KEY,
    IMPORTABLE_KEYS,
    RULE_KEY,
    SOURCE_KEYS,
    VERIFIER_KEY,
    app_owned_keys,
    read_self_evaluation,
    verifier_verdict_of,
)
from ..errors import Forbidden, ValidationFailed
from ..models import DiagnosticReport, Message, Run, ToolCall, Workspace
from ..queries import get_run_for, scope_to_actor, self_evaluation_key_update
from . import rollups
from .access import require_role

log = logging.getLogger("reviewapp.evaluations")

_settings: dict[str, Any] = {"evidence_tools": Config.AIOPS_EVIDENCE_TOOLS}


def configure(config: Mapping[str, Any]) -> None:
    """Take the app-wide default evidence tools (``AIOPS_EVIDENCE_TOOLS``, SPEC 5.3) from
    the app's config; called by ``create_app``. A workspace's
    ``settings["aiops_evidence_tools"]`` overrides them for its runs."""
    tools = config.get("AIOPS_EVIDENCE_TOOLS")
    if isinstance(tools, Mapping) and tools:
        _settings["evidence_tools"] = tools


# --------------------------------------------------------------------------- inputs

_RUN_COLUMNS = (Run.id, Run.run_id, Run.workspace_id, Run.status, Run.kind, Run.alert,
                Run.self_evaluation, Run.evidence_score, Run.verifier_verdict)


@dataclass
class _RunInputs:
    """Everything the evaluations of one run read, loaded in bulk (no lazy loads).

    ``calls`` holds the tool-call rows ``(run pk, call id, tool name, status, match level,
    hit count, evidence refs as JSON text or None, result summary)`` in call order; the
    refs are decoded only where they are read (most calls are not retrievals)."""

    run_pk: int
    run_id: str
    workspace_id: int
    status: str
    kind: str
    alert: Any
    stored: dict[str, Any]
    evidence_score: int | None
    verifier_verdict: str | None
    calls: list[Any] = field(default_factory=list)
    messages: list[CitedMessage] = field(default_factory=list)
    report: str | None = None


def _has_json(text: str | None) -> bool:
    """The column holds a JSON value other than null (SQL NULL and JSON null both mean
    "absent": SQLAlchemy stores Python None as JSON null)."""
    return text is not None and text != "null"


# Statements built once: on the ingest and import paths building them cost more than running them.
_PKS = bindparam("pks", expanding=True)
_CALLS_OF_RUNS = (
    select(ToolCall.run_pk, ToolCall.id, ToolCall.tool_name, ToolCall.status,
           ToolCall.match_level, ToolCall.hit_count, cast(ToolCall.evidence_refs, Text),
           ToolCall.result_summary)
    .where(ToolCall.run_pk.in_(_PKS)).order_by(ToolCall.run_pk, ToolCall.ordinal, ToolCall.id))
_ANSWERS_OF_RUNS = select(Message.run_pk, Message.id, Message.meta).where(
    Message.run_pk.in_(_PKS), Message.role == "assistant").order_by(Message.run_pk, Message.ordinal)
_REPORTS_OF_RUNS = select(DiagnosticReport.run_pk, DiagnosticReport.content).where(
    DiagnosticReport.run_pk.in_(_PKS))
_RUN_LOCKED = select(*_RUN_COLUMNS).where(Run.id == bindparam("run_pk")).with_for_update(key_share=True)
_SETTINGS_OF = select(Workspace.settings).where(Workspace.id == bindparam("workspace_id"))


def _load_inputs(session: Session, run_rows: Sequence[Any]) -> list[_RunInputs]:
    """Inputs for ``run_rows`` (rows of ``_RUN_COLUMNS``): one query each for tool calls,
    assistant messages and reports of the whole batch, as plain Core rows."""
    runs = [
        _RunInputs(pk, run_id, ws, status, kind, alert, read_self_evaluation(stored), score,
                   verdict)
        for pk, run_id, ws, status, kind, alert, stored, score, verdict in run_rows
    ]
    by_pk = {r.run_pk: r for r in runs}
    if not by_pk:
        return runs
    pks = list(by_pk)
    conn = session.connection()
    current_pk, current = None, None
    for row in conn.execute(_CALLS_OF_RUNS, {"pks": pks}).all():
        if row[0] != current_pk:
            current_pk, current = row[0], by_pk[row[0]].calls
        current.append(row)
    for run_pk, message_pk, meta in conn.execute(_ANSWERS_OF_RUNS, {"pks": pks}).all():
        citations = meta.get("citations") if isinstance(meta, dict) else None
        if isinstance(citations, list) and citations:
            by_pk[run_pk].messages.append(CitedMessage(message_pk, citations))
    aiops = [r.run_pk for r in runs if r.kind == "aiops"]
    if aiops:
        for run_pk, content in conn.execute(_REPORTS_OF_RUNS, {"pks": aiops}):
            by_pk[run_pk].report = content
    return runs


class _ToolsBySpace:
    """Evidence tool names per workspace (SPEC 5.3), read once per workspace."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.cache: dict[int, Any] = {}

    def __call__(self, workspace_id: int) -> Any:
        if workspace_id not in self.cache:
            settings = self.session.scalar(_SETTINGS_OF, {"workspace_id": workspace_id})
            custom = settings.get("aiops_evidence_tools") if isinstance(settings, dict) else None
            # A malformed override falls back to the app-wide tools, not to nothing.
            self.cache[workspace_id] = evidence_tool_groups(
                custom, evidence_tool_groups(_settings["evidence_tools"], DEFAULT_EVIDENCE_TOOLS))
        return self.cache[workspace_id]


# --------------------------------------------------------------------------- compute

def _rule(inp: _RunInputs, tools: Any) -> dict[str, Any] | None:
    # Plain 4-tuples in ToolCallFact's field order (cheaper than building the NamedTuple).
    facts = [(status, level, hits, refs is not None and refs != "null")
             for _, _, _, status, level, hits, refs, _ in inp.calls]
    return score_evidence(inp.status, facts)


def _aiops(inp: _RunInputs, tools: Any) -> dict[str, Any] | None:
    alert = inp.alert if isinstance(inp.alert, Mapping) else None
    return evaluate_aiops(inp.report, alert, ((c[2], c[3]) for c in inp.calls), tools)


def _gatekeeper(inp: _RunInputs, tools: Any) -> dict[str, Any] | None:
    if not inp.messages:
        return None
    evidence = [(call_id, tool_name, json.loads(refs) if _has_json(refs) else None, summary)
                for _, call_id, tool_name, _, _, _, refs, summary in inp.calls]
    return check_citations(inp.messages, evidence)


_COMPUTE: dict[str, Callable[[_RunInputs, Any], dict[str, Any] | None]] = {
    RULE_KEY: _rule, AIOPS_KEY: _aiops, GATEKEEPER_KEY: _gatekeeper,
}


@cache
def _owned_in_order(status: str, kind: str) -> tuple[str, ...]:
    return tuple(sorted(app_owned_keys(status, kind)))


def _derive(inp: _RunInputs, tools: Any) -> tuple[dict[str, dict[str, Any] | None], bool]:
    """The app's value of each key it owns for this run (None: the key must be absent),
    and whether a computation failed. Keys the app does not own are not in the result."""
    out: dict[str, dict[str, Any] | None] = {}
    failed = False
    for key in _owned_in_order(inp.status, inp.kind):
        try:
            out[key] = _COMPUTE[key](inp, tools)
        except Exception:  # noqa: BLE001 - a scoring bug must never fail ingestion
            log.exception("self_evaluation %s failed for run %s (id %s); key left absent",
                          key, inp.run_id, inp.run_pk)
            out[key] = None
            failed = True
    return out, failed


def _pending_writes(
    inp: _RunInputs, wanted: Mapping[str, dict[str, Any] | None]
) -> list[tuple[str, dict[str, Any] | None, dict[str, Any]]]:
    """(key, value or None to remove, {column: value}) for each key whose stored value or
    column copy differs from ``wanted``."""
    writes = []
    for key, value in wanted.items():
        columns: dict[str, Any] = {}
        if key in COLUMN_OF_KEY:
            column, derive = COLUMN_OF_KEY[key]
            if getattr(inp, column) != derive(value):
                columns[column] = derive(value)
        if inp.stored.get(key) != value or columns:
            if value is None and key not in inp.stored and not columns:
                continue
            writes.append((key, value, columns))
    return writes


def _write_key(session: Session, run_pk: int, key: str, value: Mapping[str, Any] | None,
               columns: Mapping[str, Any] | None = None) -> None:
    """One atomic single-key UPDATE (plus column copies). No commit. The column copies
    (evidence score, verifier verdict) are counted by the dashboard's roll-ups: the run
    is tracked (``rollups.track``) before the first write of the transaction."""
    columns = dict(columns or {})
    if key in COLUMN_OF_KEY:
        column, derive = COLUMN_OF_KEY[key]
        columns.setdefault(column, derive(value))
    if columns:
        rollups.track(session, [run_pk], rollups.Part.RUN, lock=True)
    stmt = self_evaluation_key_update(session, key, remove=value is None,
                                      columns=tuple(sorted(columns)))
    params: dict[str, Any] = {"run_pk": run_pk}
    if value is not None:
        params["value"] = dict(value)
    params.update({f"col_{c}": v for c, v in columns.items()})
    session.execute(stmt, params)


_EXPIRE = ["self_evaluation", "evidence_score", "verifier_verdict"]


def refresh_run(session: Session, run: Run) -> None:
    """Recompute everything derived from ``run``'s tool calls, messages, report and status:
    the tool-call counts and the app's ``self_evaluation`` keys (module docstring). No
    commit; called by ingestion whenever a run or its tool calls change.

    Never raises for a scoring failure: the failing key is left absent and the error is
    logged with the run id. Database errors inside the evaluation writes are rolled back
    to a savepoint and logged, so the caller's own writes still commit.
    """
    session.flush()
    # Locked (PostgreSQL FOR NO KEY UPDATE) before the calls are read: two writers adding
    # calls to one finished run each count the other's committed calls, never a stale set.
    row = session.connection().execute(_RUN_LOCKED, {"run_pk": run.id}).one()
    inp = _load_inputs(session, [row])[0]
    run.tool_call_count = len(inp.calls)
    run.failed_tool_call_count = sum(1 for c in inp.calls if c[3] == "failed")
    try:
        with session.begin_nested():
            wanted, _ = _derive(inp, _ToolsBySpace(session)(inp.workspace_id))
            for key, value, columns in _pending_writes(inp, wanted):
                _write_key(session, inp.run_pk, key, value, columns)
    except Exception:  # noqa: BLE001 - never fail the ingest request (SPEC 5)
        log.exception("self_evaluation writes failed for run %s (id %s)", inp.run_id, inp.run_pk)
    session.expire(run, _EXPIRE)


def apply_imported(
    session: Session, run: Run, evaluations: Mapping[str, Mapping[str, Any]]
) -> bool:
    """Store the evaluations a run document brings (``domain.self_evaluation.
    imported_evaluations(doc)``: the agent's ``verifier_evaluation``, and
    ``rule_evaluation`` / ``aiops_rule_evaluation`` unless the app owns them for this run,
    legacy roots already wrapped), one atomic key write each. No commit. Returns whether a
    stored value changed."""
    owned = app_owned_keys(run.status, run.kind)
    stored = read_self_evaluation(run.self_evaluation)
    changed = False
    for key, value in evaluations.items():
        if key in owned:
            continue
        if stored.get(key) != value:
            _write_key(session, run.id, key, value)
            changed = True
    if changed:
        session.expire(run, _EXPIRE)
    return changed


# --------------------------------------------------------------------------- use cases

def _json_object(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValidationFailed("value", "must be a JSON object or null")
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        raise ValidationFailed("value", "must be JSON-serialisable (no NaN, no binary)") from None


def write_evaluation_key(
    session: Session, actor: Actor, run_pk: int, key: str, value: Mapping[str, Any] | None
) -> Run:
    """Write ONE source's key of run ``run_pk``'s ``self_evaluation`` and leave every
    other key untouched, also under concurrent writers (SPEC 5); ``value`` None removes
    the key. Commits. Returns the run (its evaluation columns reloaded).

    Access: an ingest token of the run's workspace, an admin of it, or the system actor.
    Tokens and users may write only ``verifier_evaluation`` and, while the app does not
    compute it for the run, ``rule_evaluation`` / ``aiops_rule_evaluation``; the system
    actor may write any source key. Raises ``ValidationFailed`` (unknown key, value not a
    JSON object, a key the app owns), ``Forbidden`` (missing or foreign run: identical).
    """
    if key not in SOURCE_KEYS:
        raise ValidationFailed("key", f"must be one of {', '.join(SOURCE_KEYS)}")
    clean = _json_object(value)
    run = get_run_for(session, actor, run_pk, Role.REVIEWER if actor.is_token else Role.ADMIN)
    if run is None:
        raise Forbidden()
    if not actor.system and (key not in IMPORTABLE_KEYS
                             or key in app_owned_keys(run.status, run.kind)):
        raise ValidationFailed("key", f"{key} is computed by the app for this run")
    _write_key(session, run.id, key, clean)
    session.commit()
    session.expire(run, _EXPIRE)
    return run


def score_run(session: Session, actor: Actor, run_pk: int) -> Run:
    """Recompute run ``run_pk``'s tool-call counts and the app's evaluation keys now
    (``refresh_run``); commits. Access: admin of the run's workspace or the system actor.
    Raises ``Forbidden`` (missing or foreign run: identical)."""
    run = get_run_for(session, actor, run_pk, Role.ADMIN)
    if run is None or actor.is_token:
        raise Forbidden()
    refresh_run(session, run)
    session.commit()
    return run


@dataclass(frozen=True)
class RescoreSummary:
    """What a bulk re-score did: runs looked at, runs whose evaluation changed, runs where
    a computation failed (its key left absent, error logged)."""

    scanned: int
    changed: int
    failed: int


def _rescore_scope(session: Session, actor: Actor, workspace_id: int | None,
                   since: datetime | None) -> Any:
    if actor.is_token:
        raise Forbidden()
    if workspace_id is not None:
        require_role(session, actor, workspace_id, Role.ADMIN)
    stmt = scope_to_actor(select(*_RUN_COLUMNS), actor, Run.workspace_id, Role.ADMIN)
    if workspace_id is not None:
        stmt = stmt.where(Run.workspace_id == workspace_id)
    if since is not None:
        stmt = stmt.where(Run.created_at >= since)
    return stmt


def rescore_runs(
    session: Session,
    actor: Actor,
    *,
    workspace_id: int | None = None,
    since: datetime | None = None,
    batch_size: int = 500,
    progress: Callable[[int, int], None] | None = None,
) -> RescoreSummary:
    """Recompute the app's evaluation keys of many runs (SPEC 5.1 "re-scorable in bulk").

    Runs in the actor's admin workspaces (system: all), optionally one workspace and/or
    created at or after ``since`` (aware UTC). Keyset batches over ``diagnosis_run.id``
    of ``batch_size`` runs; per batch one query each for runs, tool calls, messages and
    reports, then single-key UPDATEs (executemany) only where a value differs, so a second
    re-score changes nothing. Each batch is its own transaction (committed), which keeps
    memory bounded and lets a re-run resume; ``progress(done, total)`` is called after
    each batch. Raises ``Forbidden`` (token, or not an admin of ``workspace_id``),
    ``ValidationFailed`` (``batch_size`` < 1).
    """
    if batch_size < 1:
        raise ValidationFailed("batch_size", "must be at least 1")
    scope = _rescore_scope(session, actor, workspace_id, since)
    total = session.scalar(select(func.count()).select_from(scope.subquery())) or 0
    tools_of = _ToolsBySpace(session)
    scanned = changed = failed = 0
    last_pk = 0
    while True:
        rows = session.connection().execute(
            scope.where(Run.id > last_pk).order_by(Run.id).limit(batch_size)).all()
        if not rows:
            break
        last_pk = rows[-1].id
        # Locked and remembered before the writes: the roll-ups get the net change.
        rollups.track(session, [row.id for row in rows], rollups.Part.RUN, lock=True)
        writes: dict[tuple[str, bool, tuple[str, ...]], list[dict[str, Any]]] = defaultdict(list)
        verdicts: list[dict[str, Any]] = []
        for inp in _load_inputs(session, rows):
            wanted, had_error = _derive(inp, tools_of(inp.workspace_id))
            failed += had_error
            pending = _pending_writes(inp, wanted)
            # The verifier's column copy is repaired too; its key is not the app's to write.
            verdict = verifier_verdict_of(inp.stored.get(VERIFIER_KEY))
            if verdict != inp.verifier_verdict:
                verdicts.append({"run_pk": inp.run_pk, "verdict": verdict})
            changed += bool(pending) or verdict != inp.verifier_verdict
            for key, value, columns in pending:
                params: dict[str, Any] = {"run_pk": inp.run_pk}
                if value is not None:
                    params["value"] = value
                params.update({f"col_{c}": v for c, v in columns.items()})
                writes[(key, value is None, tuple(sorted(columns)))].append(params)
        for (key, remove, columns), params_list in writes.items():
            session.execute(self_evaluation_key_update(session, key, remove=remove,
                                                       columns=columns), params_list)
        if verdicts:
            table = Run.__table__
            session.execute(update(table).where(table.c.id == bindparam("run_pk"))
                            .values(verifier_verdict=bindparam("verdict")), verdicts)
        session.commit()
        scanned += len(rows)
        if progress is not None:
            progress(scanned, total)
    return RescoreSummary(scanned=scanned, changed=changed, failed=failed)
