"""OpenTelemetry trace ingest (SPEC 9, 4): OTLP/HTTP bodies in, runs and tool calls out.

``ingest_traces`` decodes an ``ExportTraceServiceRequest`` (protobuf or OTLP JSON, with the
official ``opentelemetry-proto`` classes; ``services/otel_decode.py``), keeps the spans (``otel_span``, once per
(workspace, trace, span): non-tool spans redacted with ``secret_scan`` before they are
stored, tool spans as ids only), and stores each trace through the same services as the
JSON API, which redact again at their entry:

* the run: ``runs.upsert_run`` with the document ``domain/otel_mapping.run_document``
  rebuilds from *all* non-tool spans of the trace received so far, so spans may arrive in
  any order, in many requests, repeated: the same spans give the same document, a late
  root span replaces the stand-ins (status, times, query, answer);
* the tool calls: ``tool_calls.apply_events`` with the ``started`` / ``completed`` /
  ``failed`` events of each tool span (SPEC 4: replays change nothing, no duplicates).

Per trace, reading its spans and writing its run happen under one lock (PostgreSQL: an
advisory transaction lock on (workspace, trace); SQLite: the write transaction), so two
exporters sending parts of one trace at once end in one run that has both parts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, select, text, update
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..domain import otel_mapping as mapping
from ..domain.json_text import find_problem, short_path
from ..errors import ServiceError
from ..models import OtelSpan, Run
from ..models.base import utcnow
from ..queries import insert_for
from . import runs, tool_calls
from .access import require_role
from .otel_decode import CONTENT_TYPES as CONTENT_TYPES
from .otel_decode import JSON as JSON
from .otel_decode import PROTOBUF as PROTOBUF
from .otel_decode import decompress as decompress
from .otel_decode import parse_request, spans_of
from .secret_scan import redact, redact_key, redact_session_id

_MESSAGES_KEPT = 5


@dataclass
class ExportResult:
    """What one export did: spans received, rejected (with up to five distinct reasons,
    ``message``), and the run ids written."""

    received: int = 0
    rejected: int = 0
    reasons: list[str] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)

    def reject(self, count: int, reason: str) -> None:
        self.rejected += count
        if reason not in self.reasons and len(self.reasons) < _MESSAGES_KEPT:
            self.reasons.append(reason)

    @property
    def message(self) -> str:
        return "; ".join(self.reasons)


# ----------------------------------------------------------------------------- storing

def _lock_trace(session: Session, workspace_id: int, trace_id: str) -> None:
    """Serialise the rebuilds of one trace's run (module docstring). SQLite: the write
    transaction (``BEGIN IMMEDIATE``) already does."""
    if session.get_bind().dialect.name != "postgresql":
        return
    digest = hashlib.blake2b(f"otel:{workspace_id}:{trace_id}".encode(), digest_size=8).digest()
    session.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                    {"key": int.from_bytes(digest, "big", signed=True)})


def _redacted(span: Mapping[str, Any]) -> dict[str, Any]:
    """Every text of a span redacted (SPEC 4); ids and times are not texts an agent wrote.
    The session attributes (``mapping.SESSION_ATTRIBUTES``) group runs: redacted as the
    JSON API's ``session_id`` is (``secret_scan.redact_session_id``: a secret becomes
    ``[redacted]`` plus a digest of the original, so the same id still groups), not
    replaced whole as the value of a key named ``session.id`` would otherwise be."""
    out = dict(span)
    for key in ("name", "status_message", "attributes", "events", "resource"):
        out[key] = redact(span[key])
    for key in mapping.SESSION_ATTRIBUTES:
        value = span["attributes"].get(key)
        if isinstance(value, str) and key in out["attributes"]:
            out["attributes"][key] = redact_session_id(value)
    return out


def _write_trace(session: Session, actor: Actor, workspace_id: int, trace_id: str,
                 spans: Sequence[tuple[Mapping[str, Any], bool]]) -> set[str]:
    """Store one trace's spans ((span, is a tool span)) and rebuild its run, in one
    transaction under the trace's lock; commit. Returns the span ids of the run's steps
    (for the tool calls' step_id). The run is rebuilt when a non-tool span arrived (new,
    or the ended copy of a pending one) or the run does not exist yet."""
    _lock_trace(session, workspace_id, trace_id)
    of_trace = (OtelSpan.workspace_id == workspace_id, OtelSpan.trace_id == trace_id)
    changed = _insert_new(session, workspace_id, trace_id, spans)
    exists = session.scalar(select(Run.id).where(Run.workspace_id == workspace_id,
                                                 Run.run_id == trace_id)) is not None
    if exists and not changed:
        step_ids = set(session.scalars(select(OtelSpan.span_id).where(
            *of_trace, OtelSpan.is_tool.is_(False), OtelSpan.parent_span_id.is_not(None))))
        session.commit()
        return step_ids
    # One read: the non-tool spans' data, and every span's start (tool spans' data is {}).
    rows = session.execute(select(OtelSpan.is_tool, OtelSpan.start_ns, OtelSpan.data)
                           .where(*of_trace)).all()
    doc = mapping.run_document([data for tool, _, data in rows if not tool],
                               min((start for _, start, _ in rows), default=None))
    runs.upsert_run(session, actor, workspace_id, trace_id, doc)  # commits (or rolls back)
    return {step["id"] for step in doc["steps"]}


_REPLACE_SPAN = (
    update(OtelSpan.__table__)
    .where(OtelSpan.workspace_id == bindparam("key_workspace_id"),
           OtelSpan.trace_id == bindparam("key_trace_id"),
           OtelSpan.span_id == bindparam("key_span_id"))
    .values(data=bindparam("data"), start_ns=bindparam("start_ns"))
)


def _insert_new(session: Session, workspace_id: int, trace_id: str,
                spans: Sequence[tuple[Mapping[str, Any], bool]]) -> bool:
    """Insert the spans of one trace not stored yet; no commit. A repeated span keeps its
    first copy, except that the ended copy of a span first sent before it ended (end 0,
    as SDKs that export pending spans do) replaces it: late facts win over stand-ins
    (SPEC 4). Three statements at most, whatever the number of spans. Returns whether a
    non-tool span was inserted or replaced (the run document changes)."""
    of_trace = (OtelSpan.workspace_id == workspace_id, OtelSpan.trace_id == trace_id)
    known = set(session.scalars(select(OtelSpan.span_id).where(*of_trace)))
    new = [(s, tool) for s, tool in spans if s["span_id"] not in known]
    ended = {s["span_id"]: s for s, tool in spans
             if not tool and s["span_id"] in known and s.get("end_ns")}
    replaced = []
    if ended:
        for span_id, data in session.execute(select(OtelSpan.span_id, OtelSpan.data).where(
                *of_trace, OtelSpan.span_id.in_(sorted(ended)), OtelSpan.is_tool.is_(False))):
            if not (data or {}).get("end_ns"):
                replaced.append(ended[span_id])
    if replaced:
        session.connection().execute(_REPLACE_SPAN, [
            {"key_workspace_id": workspace_id, "key_trace_id": trace_id,
             "key_span_id": s["span_id"], "data": dict(s), "start_ns": s["start_ns"]}
            for s in replaced])
    if new:
        now = utcnow()
        session.execute(insert_for(session, OtelSpan.__table__).on_conflict_do_nothing(
            index_elements=["workspace_id", "trace_id", "span_id"]), [
            {"workspace_id": workspace_id, "trace_id": trace_id, "span_id": s["span_id"],
             "parent_span_id": s.get("parent_span_id"), "is_tool": tool,
             "start_ns": s["start_ns"], "data": {} if tool else dict(s),
             "created_at": now} for s, tool in new])
    return bool(replaced) or any(not tool for _, tool in new)


def ingest_traces(session: Session, actor: Actor, workspace_id: int, body: bytes,
                  content_type: str) -> ExportResult:
    """Store an OTLP/HTTP trace export into ``workspace_id`` (SPEC 9, 4); commits per trace.

    ``body``: an ``ExportTraceServiceRequest``, already decompressed, as protobuf
    (``content_type`` ``application/x-protobuf``) or OTLP JSON (``application/json``).
    One run per trace id (``run_id`` = the trace id in lower-case hex); the mapping is
    ``domain/otel_mapping.py``. A span that cannot be used (bad ids, a time outside the
    years 2000-2100, an end before its start, a NUL character, a lone surrogate or an
    infinite number in a text or value, in JSON an unknown status or kind name or a field
    of the wrong type, named by its path without its value) is *rejected*
    and counted, the others are stored; so is every span of a trace whose run document
    the run service refuses (e.g. the run was finished through the JSON API while the
    trace's root span has not arrived, or the trace id holds a secret: ``run_id: looks
    like a secret``), and a tool span whose event the lifecycle
    rejects (e.g. its call id belongs to another run). ``ExportResult.message`` says why.
    Raises ``Forbidden`` (actor may not write into the workspace), ``ValidationFailed``
    naming ``body`` (undecodable), ``UnsupportedMediaType``.
    """
    request, taken_out, paths = parse_request(body, content_type)
    require_role(session, actor, workspace_id, Role.REVIEWER if actor.is_token else Role.ADMIN)
    session.commit()
    spans = spans_of(request)
    result = ExportResult(received=len(spans) + sum(count for count, _ in taken_out))
    for count, reason in taken_out:
        result.reject(count, reason)
    by_trace: dict[str, dict[str, tuple[dict[str, Any], bool]]] = {}
    for span, path in zip(spans, paths, strict=True):
        # A JSON body's spans were checked as sent (parse_request); this check sees the
        # decoded values of both (a JSON "Infinity" double is only infinite once decoded).
        problem = mapping.span_problem(span) or _text_problem(span)
        if problem is not None:
            result.reject(1, f"{path}.{problem}")
            continue
        # Tool spans are stored as ids only: their texts reach storage only through the
        # lifecycle events, which redact them (tool_calls.apply_events).
        tool = mapping.is_tool(span)
        by_trace.setdefault(span["trace_id"], {})[span["span_id"]] = (
            span if tool else _redacted(span), tool)
    events: list[dict[str, Any]] = []
    owners: list[str] = []
    for trace_id in sorted(by_trace):
        trace = list(by_trace[trace_id].values())
        try:
            step_ids = _write_trace(session, actor, workspace_id, trace_id, trace)
        except ServiceError as exc:
            session.rollback()
            # A trace id refused as a secret (``run_id``) is not repeated in clear.
            result.reject(len(trace), f"trace {redact_key(trace_id)}: {exc.message}")
            continue
        result.run_ids.append(trace_id)
        for span, tool in trace:
            if tool:
                for event in mapping.tool_events(span, trace_id, step_ids):
                    events.append(event)
                    owners.append(span["span_id"])
    if events:
        outcomes = tool_calls.apply_events(session, actor, workspace_id, events, batch=True,
                                           max_events=len(events))
        failed: dict[str, str] = {}
        for outcome in outcomes:
            if outcome.result == "rejected":
                failed.setdefault(owners[outcome.index], outcome.message)
        for span_id, message in failed.items():
            result.reject(1, f"span {span_id}: {message}")
    return result


def _text_problem(span: Mapping[str, Any]) -> str | None:
    problem = find_problem(span)
    return None if problem is None else f"{short_path(problem[0])}: {problem[1]}"
