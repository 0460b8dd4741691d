"""OTLP/HTTP trace ingest (SPEC 9): ``POST /v1/traces`` and ``POST /api/otel/v1/traces``.

Token-authenticated like the rest of ingest (``Authorization: Bearer <ingest token>``),
CSRF-exempt. Bodies: ``application/x-protobuf`` or ``application/json``, optionally
``Content-Encoding: gzip`` (or ``deflate``). The answer is an ``ExportTraceServiceResponse``
in the request's content type, with ``partial_success`` (rejected spans and why) when some
spans could not be used. Errors (400 undecodable, 401, 403, 413 too large, also once
decompressed, 415 another content type or encoding) answer a ``google.rpc.Status`` to a
protobuf request, as OTLP asks, and the API's JSON error body otherwise.
"""

from __future__ import annotations

from flask import Blueprint, Response, current_app, make_response, request
from google.protobuf import json_format
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from werkzeug.exceptions import RequestEntityTooLarge

from ..errors import PayloadTooLarge, ServiceError, UnsupportedMediaType
from ..extensions import db
from ..services import otel
from .auth import token_actor

otlp_bp = Blueprint("otel", __name__)
# The same under /api (documented in openapi.yaml), a blueprint of its own so that the
# protobuf error answers below apply to it too.
otlp_api_bp = Blueprint("otel_api", __name__, url_prefix="/api/otel")

# google.rpc.Code for the statuses this route answers (OTLP/HTTP: the Status message).
_GRPC_CODES = {400: 3, 401: 16, 403: 7, 409: 10, 413: 8, 415: 3, 503: 14}


@otlp_bp.post("/v1/traces")
def traces() -> Response:
    """OTLP/HTTP trace export (the collector's standard path)."""
    return _export()


@otlp_api_bp.post("/v1/traces")
def traces_under_api() -> Response:
    """OTLP/HTTP trace export under /api."""
    return _export()


def _export() -> Response:
    actor = token_actor()
    if request.mimetype not in otel.CONTENT_TYPES:
        raise UnsupportedMediaType(f"send Content-Type {otel.PROTOBUF} or {otel.JSON}")
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    body = otel.decompress(request.get_data(cache=False), request.headers.get("Content-Encoding"),
                           limit)
    result = otel.ingest_traces(db.session, actor, actor.token_workspace_id, body, request.mimetype)
    protobuf = request.mimetype == otel.PROTOBUF
    answer = ExportTraceServiceResponse()
    if result.rejected:
        answer.partial_success.rejected_spans = result.rejected
        answer.partial_success.error_message = result.message
    return _encode(answer, 200, protobuf)


def _error(error: Exception) -> Response:
    """An error as OTLP/HTTP answers it: a ``google.rpc.Status`` in protobuf to a protobuf
    request, the API's JSON error body (``errors.py``) otherwise."""
    db.session.rollback()
    if isinstance(error, RequestEntityTooLarge):
        error = PayloadTooLarge(
            f"the body is larger than MAX_CONTENT_LENGTH ({current_app.config['MAX_CONTENT_LENGTH']} bytes)")
    assert isinstance(error, ServiceError)
    if request.mimetype != otel.PROTOBUF:
        return make_response(error.to_dict(), error.status)
    return _status(error)


for _blueprint in (otlp_bp, otlp_api_bp):
    _blueprint.register_error_handler(ServiceError, _error)
    _blueprint.register_error_handler(RequestEntityTooLarge, _error)


def _status(error: ServiceError) -> Response:
    status = Status(code=_GRPC_CODES.get(error.status, 2), message=error.message)
    return _encode(status, error.status, True)


def _encode(message: object, status: int, protobuf: bool) -> Response:
    if protobuf:
        return Response(message.SerializeToString(), status, mimetype=otel.PROTOBUF)
    return Response(json_format.MessageToJson(message, indent=None), status, mimetype=otel.JSON)
