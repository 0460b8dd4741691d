"""Decoding OTLP/HTTP trace exports (SPEC 9) for ``services/otel.py``: decompression,
protobuf or OTLP JSON into an ``ExportTraceServiceRequest``, and its spans as the plain
dicts ``domain/otel_mapping.py`` documents. No database."""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from ..domain.json_text import find_problem, join_path, short_path
from ..errors import PayloadTooLarge, UnsupportedMediaType, ValidationFailed

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
CONTENT_TYPES = (PROTOBUF, JSON)
_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}
_ID_FIELDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


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


def _id_bytes(value: str, size: int) -> bytes | None:
    """An id's bytes from hex of ``2 * size`` characters or base64 (either alphabet) of
    ``size`` bytes; ``None`` when it is neither."""
    try:
        return bytes.fromhex(value) if len(value) == 2 * size else \
            base64.b64decode(value.replace("-", "+").replace("_", "/"), validate=True)
    except (ValueError, binascii.Error):
        return None


def _hex_ids(node: dict[str, Any], path: str) -> None:
    """OTLP JSON ids are hex (the protobuf JSON mapping would read base64): hex ids of the
    right length become base64 for ``json_format``; base64 ids, which some exporters send,
    are left as they are; empty or ``null`` ones are absent. Raises ``ValidationFailed``
    naming ``path.<key>`` for any other value (a number, a text of another length)."""
    for key, size in _ID_FIELDS.items():
        value = node.get(key)
        if value is None or value == "":
            continue
        raw = _id_bytes(value, size) if isinstance(value, str) else None
        if raw is None or len(raw) != size:
            raise ValidationFailed(f"{path}.{key}", f"must be a hex string of {2 * size} characters")
        if len(value) == 2 * size:
            node[key] = base64.b64encode(raw).decode()


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


def _spans_in(node: Any, key: str) -> int:
    """How many spans ``node`` holds (``key``: ``scopeSpans`` of a resource, ``spans`` of a
    scope), counted without checking their shape."""
    items = node.get(key) if isinstance(node, dict) else None
    if not isinstance(items, list):
        return 0
    if key == "spans":
        return len(items)
    return sum(_spans_in(item, "spans") for item in items)


def _own_problem(node: dict[str, Any], children: str, path: str) -> str | None:
    """The first text / number problem (``json_text.find_problem``) of ``node``'s own
    fields, ``children`` left out, as ``"path: problem"``; ``None`` when there is none."""
    problem = find_problem({key: value for key, value in node.items() if key != children})
    return None if problem is None else f"{join_path(path, short_path(problem[0]))}: {problem[1]}"


def _normalise_span(span: dict[str, Any], path: str) -> None:
    """Check one span and bring it to what ``json_format`` reads (ids from hex, status
    codes and span kinds from their names). Raises ``ValidationFailed`` naming the path
    (cut in its middle when deep: ``json_text.short_path``): a text or number no column
    can store, an id that is no hex or base64 text of its size, an unknown status or kind
    name."""
    problem = find_problem(span)
    if problem is not None:
        raise ValidationFailed(join_path(path, short_path(problem[0])), problem[1])
    _hex_ids(span, path)
    for link_path, link in _objects(span, "links", path + "."):
        _hex_ids(link, link_path)
    if "kind" in span:
        span["kind"] = _enum_name(span["kind"], "SPAN_KIND_", _KIND_NAMES, f"{path}.kind")
    status = span.get("status")
    if isinstance(status, dict) and "code" in status:
        status["code"] = _enum_name(status["code"], "STATUS_CODE_", _STATUS_NAMES,
                                    f"{path}.status.code")


# The envelope's three levels: (the key of a node's children, the message a node decodes as).
_LEVELS = (("resourceSpans", ResourceSpans), ("scopeSpans", ScopeSpans), ("spans", Span))
# A node's own problem as "path: reason" (or None): (node, its children's key, its path, depth).
Check = Callable[[dict[str, Any], str, str, int], "str | None"]
# Where each kept node was in the request as sent: (path, its kept children's places).
Place = tuple[str, list[Any]]


def _prune(node: dict[str, Any], check: Check, rejected: list[tuple[int, str]],
           known: list[Place] | None = None, depth: int = 0, prefix: str = "") -> list[Place]:
    """Take out of ``node``'s children at ``depth`` (resources, then scopes, then spans)
    each one ``check`` finds a problem in, with the spans under it, adding ``(spans
    taken, "path: reason")`` to ``rejected`` (SPEC 9: one bad span does not refuse the
    others); returns the places, as sent, of the nodes kept. ``known``: the places a
    first pass kept (their paths as sent), else the children are read with ``_objects``
    (which raises ``ValidationFailed`` for an envelope that is not arrays of objects)."""
    key = _LEVELS[depth][0]
    if known is None:
        children = [(path, child, None) for path, child in _objects(node, key, prefix)]
    else:
        children = [(path, child, below) for (path, below), child in zip(known, node.get(key) or [])]
    kept, places = [], []
    for path, child, below in children:
        problem = check(child, _LEVELS[depth + 1][0] if depth < 2 else "", path, depth)
        if problem is not None:
            rejected.append((1 if depth == 2 else _spans_in(child, _LEVELS[depth + 1][0]), problem))
            continue
        places.append((path, [] if depth == 2 else
                       _prune(child, check, rejected, below, depth + 1, path + ".")))
        kept.append(child)
    if depth or node.get(key) is not None:
        node[key] = kept
    return places


def _shape_problem(node: dict[str, Any], children: str, path: str, depth: int) -> str | None:
    """The first pass's check (``_prune``): a resource's or scope's own fields holding a
    text or number no column can store (``_own_problem``: it takes its spans with it,
    as they carry its attributes, as in protobuf); a span failing ``_normalise_span``."""
    if depth < 2:
        return _own_problem(node, children, path)
    try:
        _normalise_span(node, path)
    except ValidationFailed as exc:
        return exc.message
    return None


def _decode_check(node: dict[str, Any], children: str, path: str, depth: int) -> str | None:
    """The second pass's check (``_prune``, only after the whole request failed to
    decode): the node without its children does not decode as its protobuf message."""
    return _decode_problem(node, _LEVELS[depth][1](), children, path)


def span_paths(places: list[Place]) -> list[str]:
    """The paths of the spans under ``places`` (resources), in ``spans_of`` order."""
    return [path for _, scopes in places for _, spans in scopes for path, _ in spans]


def parse_request(body: bytes, content_type: str
                  ) -> tuple[ExportTraceServiceRequest, list[tuple[int, str]], list[str]]:
    """An ``ExportTraceServiceRequest`` from an OTLP/HTTP body, the spans of a JSON body
    taken out before decoding (``_prune``: ``[(count, "path: reason")]``; none for
    protobuf, whose spans are checked once decoded), and the path as sent of each span
    left, in ``spans_of`` order (``resourceSpans[0].scopeSpans[1].spans[2]``). JSON: ids in hex (or base64),
    int64 values as numbers or texts, status / kind codes as numbers or names (``ERROR``
    or ``STATUS_CODE_ERROR``), unknown fields ignored (as OTLP asks).
    Raises ``UnsupportedMediaType`` (another content type), ``ValidationFailed`` naming
    ``body`` (undecodable) or the path of an envelope that is not arrays of objects."""
    request = ExportTraceServiceRequest()
    if content_type == PROTOBUF:
        try:
            request.ParseFromString(body)
        except (DecodeError, RecursionError) as exc:
            raise ValidationFailed("body", f"not an OTLP protobuf ExportTraceServiceRequest: {exc}") from None
        return request, [], [
            f"resourceSpans[{i}].scopeSpans[{j}].spans[{k}]"
            for i, resource_spans in enumerate(request.resource_spans)
            for j, scope_spans in enumerate(resource_spans.scope_spans)
            for k in range(len(scope_spans.spans))]
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
    # No nesting check of the whole body: _prune walks only the envelope, and each
    # resource, scope and span is checked on its own (iteratively) before it is read.
    # First pass (``_prune`` with ``_shape_problem``): the 64-level nesting limit counts
    # within each span; ids from hex, status codes and span kinds from their names.
    rejected: list[tuple[int, str]] = []
    places = _prune(data, _shape_problem, rejected)
    # What lies outside the resources (e.g. an unknown field); they were checked above.
    problem = find_problem({key: value for key, value in data.items() if key != "resourceSpans"})
    if problem is not None:
        raise ValidationFailed(*problem)
    try:
        json_format.ParseDict(data, request, ignore_unknown_fields=True)
    except _PARSE_ERRORS:
        # Only on this error path: find the resources, scopes and spans that do not decode
        # (a field of the wrong type), take them out, and decode the rest.
        places = _prune(data, _decode_check, rejected, places)
        request = ExportTraceServiceRequest()
        try:
            json_format.ParseDict(data, request, ignore_unknown_fields=True)
        except _PARSE_ERRORS as exc:
            raise ValidationFailed("body", f"not an OTLP JSON ExportTraceServiceRequest: "
                                           f"{_parse_problem(exc)}") from None
    return request, rejected, span_paths(places)


_PARSE_ERRORS = (json_format.ParseError, RecursionError, ValueError, TypeError)
_WRONG_VALUE = "not a valid value for this OTLP field"
_FAILED, _FIELD = "Failed to parse ", " field"


def _parse_problem(exc: Exception, path: str = "") -> str:
    """``"path.field.subfield: not a valid value ..."`` from a ``json_format`` error: the
    fields its message names (``Failed to parse X field: Failed to parse Y field: ...``),
    never the value it may quote (the value was sent by the agent and may hold a secret).
    Linear in the message's length (``str.find``, no regex)."""
    message, fields, at = str(exc), [], 0
    while (start := message.find(_FAILED, at)) != -1:
        end = message.find(_FIELD, start + len(_FAILED))
        if end == -1:
            break
        fields.append(message[start + len(_FAILED):end][:80])
        at = end + len(_FIELD)
    return f"{join_path(path, short_path('.'.join(fields)))}: {_WRONG_VALUE}" if fields else \
        f"{path or 'body'}: {_WRONG_VALUE}"


def _decode_problem(node: dict[str, Any], message: Any, leave_out: str, path: str) -> str | None:
    """Why ``node`` (its ``leave_out`` children left out) does not decode as ``message``
    (``_parse_problem``), or ``None`` when it does."""
    try:
        json_format.ParseDict({key: value for key, value in node.items() if key != leave_out},
                              message, ignore_unknown_fields=True)
    except _PARSE_ERRORS as exc:
        return _parse_problem(exc, path)
    return None


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
