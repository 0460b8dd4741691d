"""The real OpenTelemetry SDK and OTLP/HTTP exporter against a live server (SPEC 9): a
GenAI-convention agent trace over protobuf, the same trace as OTLP JSON with gzip, and an
OpenInference trace; read back through the trace API."""

from __future__ import annotations

import json

import pytest
import requests
from opentelemetry.trace import Status, StatusCode

from .otlp import RESOURCE, gzip_json, otlp_json, provider

CITATIONS = [{"id": "c1", "title": "Runbook: checkout OOM", "source": "kb://runbooks/checkout",
              "excerpt": "checkout pods OOM-killed", "evidence_ref": "kb-42"},
             {"id": "c2", "title": "Made up", "source": "kb://none", "excerpt": "nothing",
              "evidence_ref": "kb-404"}]


@pytest.fixture
def token(make, ws):
    return make.token(ws, "otel")


def genai_trace(tracer) -> str:
    """An agent run in GenAI semantic conventions; returns the trace id (hex)."""
    with tracer.start_as_current_span("invoke_agent oncall", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "oncall-bot",
        "gen_ai.conversation.id": "conv-7",
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [
            {"type": "text", "content": "Why is checkout returning 502?"}]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
            {"type": "text", "content": "The checkout pods were OOM-killed."}],
            "finish_reason": "stop"}]),
        "reviewapp.citations": json.dumps(CITATIONS),
    }) as root:
        with tracer.start_as_current_span("chat gpt-4o", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}):
            pass
        with tracer.start_as_current_span("execute_tool query_logs", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "query_logs",
                "gen_ai.tool.call.id": "call_logs",
                "gen_ai.tool.call.arguments": json.dumps({"service": "checkout"}),
                "gen_ai.tool.call.result": json.dumps({"lines": 37})}):
            pass
        with pytest.raises(TimeoutError), tracer.start_as_current_span(
                "execute_tool query_metrics", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "query_metrics",
                    "gen_ai.tool.call.id": "call_metrics"}):
            raise TimeoutError("prometheus did not answer")
        with tracer.start_as_current_span("retrieval kb", attributes={
                "gen_ai.operation.name": "retrieval",
                "gen_ai.retrieval.documents": json.dumps([
                    {"id": "kb-42", "content": "checkout pods OOM-killed", "score": 0.93}])}):
            pass
        root.set_status(Status(StatusCode.OK))
        return format(root.get_span_context().trace_id, "032x")


def trace_of(base: str, token: str, run_id: str) -> dict:
    response = requests.get(f"{base}/api/runs/{run_id}/trace",
                            headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def check_genai_run(t: dict, run_id: str) -> None:
    run = t["run"]
    assert (run["runId"], run["status"], run["sessionId"]) == (run_id, "SUCCESS", "conv-7")
    assert run["query"] == "Why is checkout returning 502?"
    assert run["answer"] == "The checkout pods were OOM-killed."
    assert run["orchestrationTrace"]["agent"] == "oncall-bot"
    assert run["orchestrationTrace"]["service"] == {"name": RESOURCE["service.name"],
                                                    "version": RESOURCE["service.version"]}
    calls = {c["toolName"]: c for c in t["toolCalls"]}
    assert set(calls) == {"query_logs", "query_metrics", "retrieval kb"}
    logs, metrics, kb = calls["query_logs"], calls["query_metrics"], calls["retrieval kb"]
    assert (logs["status"], logs["arguments"], json.loads(logs["resultSummary"])) == (
        "completed", {"service": "checkout"}, {"lines": 37})
    assert logs["id"] == f"{run_id}/call_logs" and not logs["compensated"]
    assert (metrics["status"], metrics["errorMessage"]) == (
        "failed", "TimeoutError: prometheus did not answer")
    assert (kb["matchLevel"], kb["hitCount"]) == ("L1", 1)
    assert kb["evidenceRefs"] == [{"ref": "kb-42", "excerpt": "checkout pods OOM-killed"}]
    for call in calls.values():
        assert call["durationMs"] is not None and call["durationMs"] >= 0
    assert [s["name"] for s in t["steps"]] == ["chat gpt-4o"]
    answer = [m for m in t["messages"] if m["role"] == "assistant"][-1]
    assert [c["id"] for c in answer["metadata"]["citations"]] == ["c1", "c2"]
    rule = t["selfEvaluation"]["rule_evaluation"]
    # +30 successful call, +20 L1 hit (SPEC 5.1); no all-failed, a retrieval with a hit.
    assert rule["evidence_score"] == 50
    gate = t["selfEvaluation"]["citation_gatekeeper"]
    verified = {c["citation_id"]: c["status"] for c in gate["citations"]}
    assert verified == {"c1": "verified", "c2": "unverified"}


def test_sdk_exporter_protobuf_makes_a_reviewable_run(live_server, token):
    tracer_provider, _ = provider(live_server, token, gzip_body=True)
    run_id = genai_trace(tracer_provider.get_tracer("agent"))
    tracer_provider.shutdown()
    check_genai_run(trace_of(live_server, token, run_id), run_id)


def test_same_trace_as_otlp_json_with_gzip(live_server, token):
    tracer_provider, memory = provider()
    run_id = genai_trace(tracer_provider.get_tracer("agent"))
    body = gzip_json(otlp_json(memory.get_finished_spans()))
    response = requests.post(f"{live_server}/v1/traces", data=body, timeout=30, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json",
        "Content-Encoding": "gzip"})
    assert (response.status_code, response.json()) == (200, {})
    assert response.headers["Content-Type"] == "application/json"
    check_genai_run(trace_of(live_server, token, run_id), run_id)


def openinference_trace(tracer) -> str:
    """The same kind of run as OpenInference (Arize Phoenix) instrumentation writes it."""
    with tracer.start_as_current_span("AgentExecutor", attributes={
        "openinference.span.kind": "AGENT", "agent.name": "phoenix-bot", "session.id": "sess-9",
        "input.value": json.dumps({"input": "Is the payments DB healthy?"}),
        "input.mime_type": "application/json", "output.value": "Yes, replication lag is 0.",
        "annotations.correctness.label": "correct",
    }) as root:
        with tracer.start_as_current_span("ChatOpenAI", attributes={
                "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "Is the payments DB healthy?",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": "Checking replication."}):
            pass
        with tracer.start_as_current_span("db_status", attributes={
                "openinference.span.kind": "TOOL", "tool.name": "db_status",
                "tool.parameters": json.dumps({"db": "payments"}),
                "input.value": json.dumps({"db": "payments"}), "output.value": "lag=0"}):
            pass
        with tracer.start_as_current_span("VectorStoreRetriever", attributes={
                "openinference.span.kind": "RETRIEVER", "input.value": "payments replication",
                "retrieval.documents.0.document.id": "runbook-7",
                "retrieval.documents.0.document.content": "replication lag alert",
                "retrieval.documents.0.document.score": 0.71}):
            pass
        return format(root.get_span_context().trace_id, "032x")


def test_sdk_exporter_openinference_trace(live_server, token):
    tracer_provider, _ = provider(live_server, token)
    run_id = openinference_trace(tracer_provider.get_tracer("openinference"))
    tracer_provider.shutdown()
    t = trace_of(live_server, token, run_id)
    run = t["run"]
    assert (run["status"], run["sessionId"], run["query"], run["answer"]) == (
        "SUCCESS", "sess-9", "Is the payments DB healthy?", "Yes, replication lag is 0.")
    assert run["orchestrationTrace"]["agent"] == "phoenix-bot"
    assert run["orchestrationTrace"]["agent_evaluations"][0]["attributes"] == {
        "annotations.correctness.label": "correct"}
    assert t["feedback"]["items"] == [] and run["feedback"] is None  # never a reviewer's rating
    calls = {c["toolName"]: c for c in t["toolCalls"]}
    assert calls["db_status"]["arguments"] == {"db": "payments"}
    assert calls["db_status"]["resultSummary"] == "lag=0"
    assert calls["VectorStoreRetriever"]["evidenceRefs"] == [
        {"ref": "runbook-7", "excerpt": "replication lag alert"}]
    assert [s["name"] for s in t["steps"]] == ["ChatOpenAI"]
    assert [m["content"] for m in t["messages"]] == [
        "Is the payments DB healthy?", "Checking replication.", "Yes, replication lag is 0."]
