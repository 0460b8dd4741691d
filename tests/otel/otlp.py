"""Helpers for the OTLP tests: a tracer exporting to a live server with the real SDK, and
the OTLP JSON encoding of finished spans (hex ids, as the OTLP/HTTP JSON encoding says)."""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Sequence
from typing import Any

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

RESOURCE = {"service.name": "oncall-agent", "service.version": "2.4.1"}


def provider(live_server: str | None = None, token: str | None = None, *,
             gzip_body: bool = False) -> tuple[TracerProvider, InMemorySpanExporter]:
    """A tracer provider that exports each span as it ends to ``live_server``'s
    ``/v1/traces`` (protobuf) and also keeps it in memory."""
    tracer_provider = TracerProvider(resource=Resource.create(RESOURCE))
    memory = InMemorySpanExporter()
    tracer_provider.add_span_processor(SimpleSpanProcessor(memory))
    if live_server is not None:
        exporter = OTLPSpanExporter(
            endpoint=f"{live_server}/v1/traces", headers={"Authorization": f"Bearer {token}"},
            compression=Compression.Gzip if gzip_body else Compression.NoCompression, timeout=30)
        tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    return tracer_provider, memory


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                out[key] = base64.b64decode(value).hex()
            else:
                out[key] = _hex_ids(value)
        return out
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """The OTLP JSON ``ExportTraceServiceRequest`` of finished SDK spans."""
    return _hex_ids(json_format.MessageToDict(encode_spans(spans)))


def otlp_protobuf(spans: Sequence[ReadableSpan]) -> bytes:
    return encode_spans(spans).SerializeToString()


def gzip_json(document: dict[str, Any]) -> bytes:
    return gzip.compress(json.dumps(document).encode())
