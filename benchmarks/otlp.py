"""OTLP trace ingest throughput (issue 13): spans per second stored and queryable.

5,000 spans (100 agent traces of 50 spans: the root, 10 LLM steps, 34 tool calls and 5
retrievals with documents) are exported to ``POST /v1/traces`` in batches of 512, one
request after the other as one exporter sends them (children before their root, as a
BatchSpanProcessor exports ended spans), as protobuf and as OTLP JSON. "Stored and
queryable" is the time until the last export call has returned: the service commits
before it answers, and afterwards every trace is read back through the trace API and
checked (the check is not timed). Beside it, in the same run and under the same server
settings (gunicorn, 2 workers, SQLite WAL, fresh temporary folder), the bare insert
reference of ``benchmarks/ingest.py`` (one JSON parse and one INSERT per item) receives
the same number of items in the same batches; the ratios are printed.

Targets on SQLite: >= 10,000 spans/s stored; >= 40 % of the reference's rows/s.

    .venv/bin/python benchmarks/otlp.py [--rounds 3] [--spans 5000] [--batch 512]
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from benchmarks._servers import stop_servers
from benchmarks.ingest import BIN, free_port, start_server

SPANS_PER_TRACE = 50


def _kv(key: str, value: object) -> KeyValue:
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=str(value)))


def trace_spans(rng: random.Random, t0: int) -> list[Span]:
    """One agent trace: 50 spans, children first (end order), the root last."""
    trace_id = rng.randbytes(16)
    root_id = rng.randbytes(8)
    spans: list[Span] = []
    clock = t0
    for i in range(SPANS_PER_TRACE - 1):
        span_id = rng.randbytes(8)
        start, end = clock + 1_000_000, clock + 20_000_000
        clock = end
        if i % 5 == 0:
            attrs = [_kv("gen_ai.operation.name", "chat"), _kv("gen_ai.request.model", "gpt-4o"),
                     _kv("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": [
                         {"type": "text", "content": f"step {i}: checking the next signal"}]}]))]
            name = "chat gpt-4o"
        elif i % 10 == 3:
            docs = [{"id": f"kb-{i}-{d}", "content": f"runbook excerpt {d} about OOM kills",
                     "score": 0.9 - d / 10} for d in range(3)]
            attrs = [_kv("gen_ai.operation.name", "retrieval"),
                     _kv("gen_ai.retrieval.documents", json.dumps(docs))]
            name = "retrieval kb"
        else:
            attrs = [_kv("gen_ai.operation.name", "execute_tool"), _kv("gen_ai.tool.name", "query_logs"),
                     _kv("gen_ai.tool.call.id", f"call_{i}"),
                     _kv("gen_ai.tool.call.arguments", json.dumps({"service": "checkout", "limit": 100})),
                     _kv("gen_ai.tool.call.result", json.dumps({"lines": 42, "top": "OOMKilled (exit 137)"}))]
            name = "execute_tool query_logs"
        spans.append(Span(trace_id=trace_id, span_id=span_id, parent_span_id=root_id, name=name,
                          start_time_unix_nano=start, end_time_unix_nano=end, attributes=attrs))
    spans.append(Span(
        trace_id=trace_id, span_id=root_id, name="invoke_agent oncall",
        start_time_unix_nano=t0, end_time_unix_nano=clock + 1_000_000,
        status=Status(code=Status.STATUS_CODE_OK),
        attributes=[_kv("gen_ai.operation.name", "invoke_agent"), _kv("gen_ai.agent.name", "oncall"),
                    _kv("gen_ai.conversation.id", f"conv-{trace_id.hex()[:8]}"),
                    _kv("gen_ai.input.messages", json.dumps([{"role": "user", "parts": [
                        {"type": "text", "content": "Why is checkout returning 502?"}]}])),
                    _kv("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": [
                        {"type": "text", "content": "The checkout pods were OOM-killed."}]}]))]))
    return spans


def batches(spans: list[Span], size: int) -> list[ExportTraceServiceRequest]:
    out = []
    for i in range(0, len(spans), size):
        request = ExportTraceServiceRequest()
        resource_spans = request.resource_spans.add()
        resource_spans.resource.attributes.append(_kv("service.name", "bench-agent"))
        resource_spans.scope_spans.add().spans.extend(spans[i:i + size])
        out.append(request)
    return out


def _hex(node: object) -> object:
    if isinstance(node, dict):
        return {k: (base64.b64decode(v).hex()
                    if k in ("traceId", "spanId", "parentSpanId") else _hex(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_hex(v) for v in node]
    return node


def otlp_json(request: ExportTraceServiceRequest) -> bytes:
    return json.dumps(_hex(json_format.MessageToDict(request))).encode()


def post(port: int, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("POST", path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def get_json(port: int, path: str, token: str) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
        response = conn.getresponse()
        body = response.read()
        assert response.status == 200, (response.status, body[:300])
        return json.loads(body)
    finally:
        conn.close()


def prepare(folder: Path) -> tuple[dict[str, str], str]:
    env = {**os.environ, "REVIEWAPP_DATABASE_URL": f"sqlite:///{folder / 'reviewapp.sqlite'}",
           "REVIEWAPP_SECRET_KEY": "bench", "FLASK_APP": "app.py"}
    subprocess.run([str(BIN / "flask"), "db", "upgrade"], cwd=REPO, env=env, check=True,
                   capture_output=True)
    script = """
from reviewapp import create_app
from reviewapp.actors import Actor
from reviewapp.extensions import db
from reviewapp.services import admin
app = create_app()
with app.app_context():
    ws = admin.create_workspace(db.session, Actor.system_actor(), "bench", "Bench")
    print(admin.create_token(db.session, Actor.system_actor(), ws.id, "bench").secret)
"""
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, check=True,
                         capture_output=True, text=True)
    return env, out.stdout.strip().splitlines()[-1]


def export_run(port: int, token: str, requests: list[ExportTraceServiceRequest],
               encoding: str) -> tuple[float, int]:
    """Send the batches one after the other; returns (seconds, spans rejected)."""
    mime = "application/x-protobuf" if encoding == "protobuf" else "application/json"
    bodies = [r.SerializeToString() if encoding == "protobuf" else otlp_json(r) for r in requests]
    headers = {"Content-Type": mime, "Authorization": f"Bearer {token}"}
    rejected = 0
    began = time.perf_counter()
    for body in bodies:
        status, answer = post(port, "/v1/traces", body, headers)
        if status != 200:
            raise RuntimeError(f"export answered {status}: {answer[:300]!r}")
        if encoding == "json":
            rejected += int(json.loads(answer).get("partialSuccess", {}).get("rejectedSpans", 0))
    return time.perf_counter() - began, rejected


def reference_run(port: int, requests: list[ExportTraceServiceRequest]) -> float:
    """The same items, as tool events of the same size, into the bare insert reference."""
    bodies = []
    for r in requests:
        spans = [s for rs in r.resource_spans for ss in rs.scope_spans for s in ss.spans]
        bodies.append(json.dumps([{"id": s.span_id.hex(), "run_id": s.trace_id.hex(),
                                   "event": "completed", "tool_name": s.name,
                                   "output": {"lines": 42}} for s in spans]).encode())
    headers = {"Content-Type": "application/json"}
    began = time.perf_counter()
    for body in bodies:
        status, answer = post(port, "/api/ingest/tool-events", body, headers)
        if status != 200:
            raise RuntimeError(f"reference answered {status}: {answer[:300]!r}")
    return time.perf_counter() - began


def verify(port: int, token: str, spans: list[Span]) -> None:
    """Every trace readable through the trace API, with its calls, steps and answer."""
    traces = sorted({s.trace_id.hex() for s in spans})
    for trace_id in traces:
        t = get_json(port, f"/api/runs/{trace_id}/trace", token)
        calls, steps = len(t["toolCalls"]), len(t["steps"])
        assert t["run"]["status"] == "SUCCESS", t["run"]["status"]
        assert (calls, steps) == (39, 10), (trace_id, calls, steps)
        assert t["run"]["answer"] == "The checkout pods were OOM-killed."


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--spans", type=int, default=5000)
    parser.add_argument("--batch", type=int, default=512)
    args = parser.parse_args()
    rng = random.Random(13)
    folder = Path(tempfile.mkdtemp(prefix="reviewapp-otlp-bench-"))
    servers: list[subprocess.Popen] = []
    try:
        env, token = prepare(folder)
        port, ref_port = free_port(), free_port()
        servers.append(start_server("app:app", REPO, env, port))
        ref_env = {**os.environ, "REFERENCE_DATABASE_URL": f"sqlite:///{folder / 'reference.sqlite'}"}
        servers.append(start_server("reference_app:app", REPO / "benchmarks", ref_env, ref_port))
        t0 = time.time_ns() - 3600 * 1_000_000_000

        def workload() -> tuple[list[Span], list[ExportTraceServiceRequest]]:
            spans = [s for _ in range(args.spans // SPANS_PER_TRACE) for s in trace_spans(rng, t0)]
            return spans, batches(spans, args.batch)

        # Warm-up (unrecorded): gunicorn's workers import the app on their first request.
        for encoding in ("protobuf", "json"):
            _, warm = workload()
            export_run(port, token, warm[:2], encoding)
        reference_run(ref_port, workload()[1][:2])

        results: dict[str, list[tuple[int, float]]] = {"protobuf": [], "json": [], "reference": []}
        for round_no in range(args.rounds):
            order = ["protobuf", "json", "reference"]
            if round_no % 2:
                order.reverse()
            for name in order:
                spans, requests = workload()
                if name == "reference":
                    seconds = reference_run(ref_port, requests)
                else:
                    seconds, rejected = export_run(port, token, requests, name)
                    assert rejected == 0, rejected
                    verify(port, token, spans)
                results[name].append((len(spans), seconds))
                print(f"  round {round_no + 1} {name:<9} {len(spans) / seconds:9.0f} spans/s "
                      f"({len(spans)} in {seconds:.2f} s)", flush=True)

        def rate(name: str) -> float:
            return sum(n for n, _ in results[name]) / sum(s for _, s in results[name])

        print()
        print(f"gunicorn 2 workers, 127.0.0.1, SQLite WAL; {args.spans} spans per run "
              f"({args.spans // SPANS_PER_TRACE} traces x {SPANS_PER_TRACE}), batches of {args.batch}, "
              f"one exporter, {args.rounds} rounds, alternating; every trace read back and checked")
        ref = rate("reference")
        print(f"{'what':<28}{'spans/s':>10}{'vs reference':>14}")
        for name, label in (("protobuf", "OTLP protobuf, stored"), ("json", "OTLP JSON, stored"),
                            ("reference", "bare insert reference")):
            print(f"{label:<28}{rate(name):>10.0f}{rate(name) / ref:>13.0%}")
        for name in ("protobuf", "json"):
            r = rate(name)
            print(f"target {name}: >= 10,000 spans/s {'met' if r >= 10_000 else 'NOT met'} ({r:.0f}); "
                  f">= 40% of reference {'met' if r >= 0.4 * ref else 'NOT met'} ({r / ref:.0%})")
        return 0
    finally:
        stop_servers(servers, folder)


if __name__ == "__main__":
    sys.exit(main())
