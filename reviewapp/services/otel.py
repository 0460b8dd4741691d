"""OpenTelemetry trace ingest (SPEC 9, 4): OTLP/HTTP bodies in, runs and tool calls out.

``ingest_traces`` decodes an ``ExportTraceServiceRequest`` (protobuf or OTLP JSON, with the
official ``opentelemetry-proto`` classes), keeps the spans (``otel_span``, once per
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

import base64
import binascii
import hashlib
import json
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from sqlalchemy import bindparam, select, text, update
from sqlalchemy.orm import Session

from ..actors import Actor, Role
from ..domain import otel_mapping as mapping
from ..domain.json_text import find_problem
from ..errors import PayloadTooLarge, ServiceError, UnsupportedMediaType, ValidationFailed
from ..models import OtelSpan, Run
from ..models.base import utcnow
from ..queries import insert_for
from . import runs, tool_calls
from .access import require_role
from .secret_scan import redact, redact_key, redact_session_id

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
CONTENT_TYPES = (PROTOBUF, JSON)
_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}
_ID_FIELDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}
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


# ----------------------------------------------------------------------------- decoding

def decompress(body: bytes, encoding: str | None, limit: int) -> bytes:
    """``body`` decoded per ``Content-Encoding`` (``gzip``, ``deflate`` or none), at most
    ``limit`` bytes. Raises ``ValidationFailed`` (corrupt data), ``PayloadTooLarge`` (more
    than ``limit`` bytes once decompressed), ``UnsupportedMediaType`` (another encoding)."""
    encoding = (encoding or "").strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "deflate"):
        raise UnsupportedMediaType(f"Content-Encoding {encoding[:40]!r} is not supported (gzip, deflate)")
    inflater = zlib.decompressobj(wbits=31 if encoding == "gzip" else 15)
    try:
        out = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise ValidationFailed("body", f"corrupt {encoding} data: {exc}") from None
    if len(out) > limit:
        raise PayloadTooLarge(f"the body is larger than {limit} bytes once decompressed")
    return out


_STATUS_NAMES = frozenset({"UNSET", "OK", "ERROR"})
_KIND_NAMES = frozenset({"UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"})


def _objects(node: Mapping[str, Any], key: str, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, object) of each item of the list ``node[key]`` (``null`` reads as absent).
    Raises ``ValidationFailed`` naming the path when it is not a list of objects: the
    protobuf JSON reader lets some wrong shapes through silently."""
    items = node.get(key)
    if items is None:
        return
    if not isinstance(items, list):
        raise ValidationFailed(f"{path}{key}", "expected an array")
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise ValidationFailed(f"{path}{key}[{index}]", "expected an object")
        yield f"{path}{key}[{index}]", item


def _hex_ids(node: dict[str, Any]) -> None:
    """OTLP JSON ids are hex (the protobuf JSON mapping would read base64): hex ids of the
    right length become base64 for ``json_format``; base64 ids, which some exporters send,
    are left as they are."""
    for key, size in _ID_FIELDS.items():
        value = node.get(key)
        if isinstance(value, str) and len(value) == 2 * size:
            try:
                node[key] = base64.b64encode(bytes.fromhex(value)).decode()
            except ValueError:
                pass


def _enum_name(value: Any, prefix: str, names: frozenset[str], path: str) -> Any:
    """An enum given by name, short (``ERROR``, any case) or long (``STATUS_CODE_ERROR``),
    as its long name; numbers as they are. Raises ``ValidationFailed`` naming ``path`` for
    an unknown name (``json_format`` would read it as the default, silently)."""
    if not isinstance(value, str):
        return value
    short = value.upper().removeprefix(prefix)
    if short not in names:
        raise ValidationFailed(path, f"unknown value {value[:40]!r} ({', '.join(sorted(names))})")
    return prefix + short


def _normalise(data: dict[str, Any]) -> None:
    """Check the shape of an OTLP JSON request and bring it to what ``json_format`` reads:
    ids from hex, status codes and span kinds from their names (module docstring)."""
    for rs_path, resource_spans in _objects(data, "resourceSpans", ""):
        for ss_path, scope_spans in _objects(resource_spans, "scopeSpans", rs_path + "."):
            for path, span in _objects(scope_spans, "spans", ss_path + "."):
                _hex_ids(span)
                for _, link in _objects(span, "links", path + "."):
                    _hex_ids(link)
                if "kind" in span:
                    span["kind"] = _enum_name(span["kind"], "SPAN_KIND_", _KIND_NAMES, f"{path}.kind")
                status = span.get("status")
                if isinstance(status, dict) and "code" in status:
                    status["code"] = _enum_name(status["code"], "STATUS_CODE_", _STATUS_NAMES,
                                                f"{path}.status.code")


def parse_request(body: bytes, content_type: str) -> ExportTraceServiceRequest:
    """An ``ExportTraceServiceRequest`` from an OTLP/HTTP body. JSON: ids in hex (or
    base64), int64 values as numbers or texts, status / kind codes as numbers or names
    (``ERROR`` or ``STATUS_CODE_ERROR``), unknown fields ignored (as OTLP asks).
    Raises ``UnsupportedMediaType`` (another content type), ``ValidationFailed`` naming
    ``body`` (undecodable)."""
    request = ExportTraceServiceRequest()
    if content_type == PROTOBUF:
        try:
            request.ParseFromString(body)
        except (DecodeError, RecursionError) as exc:
            raise ValidationFailed("body", f"not an OTLP protobuf ExportTraceServiceRequest: {exc}") from None
        return request
    if content_type != JSON:
        raise UnsupportedMediaType(f"send Content-Type {PROTOBUF} or {JSON}")
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValidationFailed("body", f"not valid UTF-8 at byte {exc.start}") from None
    except (ValueError, RecursionError) as exc:
        raise ValidationFailed("body", f"malformed JSON: {str(exc)[:160]}") from None
    if not isinstance(data, dict):
        raise ValidationFailed("body", "expected a JSON object (ExportTraceServiceRequest)")
    problem = find_problem(data)
    if problem is not None:
        raise ValidationFailed(*problem)
    _normalise(data)
    try:
        json_format.ParseDict(data, request, ignore_unknown_fields=True)
    except (json_format.ParseError, RecursionError, ValueError, TypeError) as exc:
        raise ValidationFailed("body", f"not an OTLP JSON ExportTraceServiceRequest: {str(exc)[:200]}") from None
    return request


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in any_value.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(any_value.bytes_value).decode()
    return getattr(any_value, kind)


def _attributes(key_values: Sequence[Any]) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in key_values}


def spans_of(request: ExportTraceServiceRequest) -> list[dict[str, Any]]:
    """The request's spans as plain dicts (the shape ``domain/otel_mapping`` documents),
    each with its resource's attributes."""
    out = []
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                out.append({
                    "trace_id": binascii.hexlify(span.trace_id).decode(),
                    "span_id": binascii.hexlify(span.span_id).decode(),
                    "parent_span_id": binascii.hexlify(span.parent_span_id).decode() or None,
                    "name": span.name, "start_ns": span.start_time_unix_nano,
                    "end_ns": span.end_time_unix_nano,
                    "status": _STATUS.get(span.status.code, "UNSET"),
                    "status_message": span.status.message,
                    "attributes": _attributes(span.attributes),
                    "events": [{"name": e.name, "time_ns": e.time_unix_nano,
                                "attributes": _attributes(e.attributes)} for e in span.events],
                    "resource": resource,
                })
    return out


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
    years 2000-2100, an end before its start, a NUL character in a text) is *rejected*
    and counted, the others are stored; so is every span of a trace whose run document
    the run service refuses (e.g. the run was finished through the JSON API while the
    trace's root span has not arrived, or the trace id holds a secret: ``run_id: looks
    like a secret``), and a tool span whose event the lifecycle
    rejects (e.g. its call id belongs to another run). ``ExportResult.message`` says why.
    Raises ``Forbidden`` (actor may not write into the workspace), ``ValidationFailed``
    naming ``body`` (undecodable), ``UnsupportedMediaType``.
    """
    request = parse_request(body, content_type)
    require_role(session, actor, workspace_id, Role.REVIEWER if actor.is_token else Role.ADMIN)
    session.commit()
    spans = spans_of(request)
    result = ExportResult(received=len(spans))
    by_trace: dict[str, dict[str, tuple[dict[str, Any], bool]]] = {}
    for span in spans:
        # A JSON body had its texts checked whole (parse_request); protobuf's are here.
        problem = mapping.span_problem(span) or (
            _text_problem(span) if content_type == PROTOBUF else None)
        if problem is not None:
            result.reject(1, problem)
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
    return None if problem is None else f"{problem[0]}: {problem[1]}"
