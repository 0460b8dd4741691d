"""Demo data the project writes itself (not copied from anywhere).

A small, realistic set in one workspace: chat runs whose assistant messages carry
citations, AIOps runs started by an alert with steps and a report, tool calls that
completed, failed, have no end event and were compensated, retrieval calls with L0 / L1 /
no hits, a legacy session with a flat ``self_evaluation``, and one RUNNING run. Loaded
through the same ingest services as the API, so loading twice changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..actors import Actor
from ..models import DiagnosisSession, Workspace
from . import runs, tool_calls

DEMO_SLUG = "demo"
BASE = datetime(2026, 11, 27, 8, 0, tzinfo=UTC)


def _t(minutes: float) -> str:
    return (BASE + timedelta(minutes=minutes)).isoformat()


def _call(call_id: str, tool: str, start: float, seconds: float, args: dict[str, Any],
          output: Any = None, error: Any = None, retrieval: dict[str, Any] | None = None,
          step_id: str | None = None) -> dict[str, Any]:
    return {
        "id": call_id, "tool_name": tool, "status": "failed" if error else "completed",
        "arguments": args, "output": output, "error": error,
        "started_at": _t(start), "completed_at": _t(start + seconds / 60),
        "retrieval": retrieval, "step_id": step_id,
    }


CHECKOUT_ANSWER = """**Most likely cause:** the `checkout-service` pods were OOM-killed after the 14:02 deploy
raised the cart cache size, so the ingress returned 502 while pods restarted.

1. `kubectl get events` shows 37 `OOMKilled` events for `checkout-service` between 14:03 and 14:19 [c1].
2. The runbook says 502s at the ingress with healthy upstream DNS mean the upstream pods are
   restarting [c2].
3. Memory of the pods climbed from 410 MiB to the 512 MiB limit within four minutes of the deploy.

**Suggested fix:** roll back to `checkout-service:2026.11.27-1` or raise the memory limit to 768 MiB,
then watch `container_memory_working_set_bytes`.
"""

DEMO_RUNS: list[dict[str, Any]] = [
    {
        "run_id": "demo-chat-checkout-502",
        "session_id": "demo-chat-session-1",
        "kind": "chat",
        "query": "Why is checkout-service returning 502s since 14:00?",
        "answer": CHECKOUT_ANSWER,
        "status": "SUCCESS",
        "started_at": _t(0), "finished_at": _t(1.2),
        "messages": [
            {"id": "m1", "role": "user", "content": "Why is checkout-service returning 502s since 14:00?"},
            {"id": "m2", "role": "assistant", "content": CHECKOUT_ANSWER, "metadata": {
                "tool_call_ids": ["demo-call-1", "demo-call-2", "demo-call-3"],
                "citations": [
                    {"id": "c1", "title": "kubectl events, namespace shop", "source": "tool:query_logs",
                     "excerpt": "Reason: OOMKilled container checkout-service", "evidence_ref": "logs://shop/checkout/oom"},
                    {"id": "c2", "title": "Runbook: ingress 502", "source": "https://wiki.example.com/runbooks/ingress-502",
                     "excerpt": "A 502 at the ingress with healthy DNS means the upstream pods are restarting.",
                     "evidence_ref": "kb://runbooks/ingress-502"},
                    {"id": "c3", "title": "Deploy log 14:02", "source": "https://deploy.example.com/checkout/8841",
                     "excerpt": "cart cache size raised to 2048 entries", "evidence_ref": "deploy://checkout/8841"},
                ],
            }},
        ],
        "tool_calls": [
            _call("demo-call-1", "knowledge_search", 0.1, 0.8, {"query": "ingress 502 upstream"},
                  output={"hits": 1, "top": "Runbook: ingress 502"},
                  retrieval={"match_level": "L0", "hit_count": 1, "evidence_refs": [
                      {"ref": "kb://runbooks/ingress-502",
                       "excerpt": "A 502 at the ingress with healthy DNS means the upstream pods are restarting."}]}),
            _call("demo-call-2", "query_logs", 0.2, 2.4,
                  {"namespace": "shop", "query": "reason=OOMKilled app=checkout-service", "since": "14:00"},
                  output="37 events. Reason: OOMKilled container checkout-service (first 14:03, last 14:19)",
                  retrieval={"match_level": "L1", "hit_count": 37, "evidence_refs": [
                      {"ref": "logs://shop/checkout/oom", "excerpt": "Reason: OOMKilled container checkout-service"}]}),
            _call("demo-call-3", "query_metrics", 0.3, 1.1,
                  {"promql": "max(container_memory_working_set_bytes{pod=~\"checkout.*\"})"},
                  output={"series": [{"t": "14:00", "mib": 410}, {"t": "14:04", "mib": 512}]}),
        ],
        "verifier_evaluation": {
            "verdict": "PASS", "groundedness_score": 0.86, "critical_fact_count": 3, "round": 1,
            "claim_checks": [
                {"claim": "37 OOMKilled events between 14:03 and 14:19", "supported": True},
                {"claim": "502 at ingress means upstream restarting", "supported": True},
                {"claim": "memory climbed from 410 to 512 MiB", "supported": True},
            ],
            "rationale": "All critical facts are backed by tool output.",
        },
    },
    {
        "run_id": "demo-chat-redis-rotate",
        "session_id": "demo-chat-session-2",
        "kind": "chat",
        "query": "How do I rotate the Redis password for the sessions cluster without downtime?",
        "answer": "Use Redis ACL users: add a second password to the `app` user with "
                  "`ACL SETUSER app >NEWPASS`, roll the app config, then remove the old one "
                  "with `ACL SETUSER app <OLDPASS` [c1].\n\nThe vault path is shown in the runbook.",
        "status": "SUCCESS",
        "started_at": _t(30), "finished_at": _t(30.9),
        "messages": [
            {"id": "m1", "role": "user", "content": "How do I rotate the Redis password for the sessions cluster without downtime?"},
            {"id": "m2", "role": "assistant",
             "content": "Use Redis ACL users: add a second password to the `app` user with "
                        "`ACL SETUSER app >NEWPASS`, roll the app config, then remove the old one "
                        "with `ACL SETUSER app <OLDPASS` [c1].\n\nThe vault path is shown in the runbook.",
             "metadata": {"tool_call_ids": ["demo-call-4", "demo-call-5"], "citations": [
                 {"id": "c1", "title": "Redis ACL docs (semantic match)", "source": "kb://redis/acl",
                  "excerpt": "ACL SETUSER can add multiple passwords to one user", "evidence_ref": "kb://redis/acl"},
                 {"id": "c2", "title": "Vault path for sessions cluster", "source": "kb://vault/sessions",
                  "excerpt": "secret/data/redis/sessions", "evidence_ref": "kb://vault/sessions"},
             ]}},
        ],
        "tool_calls": [
            _call("demo-call-4", "knowledge_search", 30.1, 0.6, {"query": "rotate redis password no downtime"},
                  output={"hits": 2},
                  retrieval={"match_level": "L1", "hit_count": 2, "evidence_refs": [
                      {"ref": "kb://redis/acl", "excerpt": "ACL SETUSER can add multiple passwords to one user"}]}),
            _call("demo-call-5", "vault_read", 30.3, 0.2,
                  {"path": "secret/data/redis/sessions",
                   "headers": {"Authorization": "Bearer hvs.CAESIJ7pZr3Vn0d1Yk2Xq9WmT5sLbHcE4gFuA8oRiK6"}},
                  error={"type": "PermissionDenied", "message": "403 permission denied on secret/data/redis/sessions"}),
        ],
        "verifier_evaluation": {"verdict": "LOW_CONFID", "groundedness_score": 0.52, "critical_fact_count": 2,
                                "claim_checks": [{"claim": "ACL SETUSER supports two passwords", "supported": True},
                                                 {"claim": "vault path shown in runbook", "supported": False}],
                                "rationale": "The vault path claim is not supported: the read failed."},
    },
    {
        "run_id": "demo-chat-latency-zh",
        "session_id": "demo-chat-session-3",
        "kind": "chat",
        "query": "订单服务 p99 延迟升高的原因是什么？",
        "answer": "没有在知识库中找到相关记录。建议先检查最近的发布和数据库慢查询。🙏",
        "status": "SUCCESS",
        "started_at": _t(60), "finished_at": _t(60.5),
        "messages": [
            {"id": "m1", "role": "user", "content": "订单服务 p99 延迟升高的原因是什么？"},
            {"id": "m2", "role": "assistant", "content": "没有在知识库中找到相关记录。建议先检查最近的发布和数据库慢查询。🙏",
             "metadata": {"tool_call_ids": ["demo-call-6"], "citations": []}},
        ],
        "tool_calls": [
            _call("demo-call-6", "knowledge_search", 60.1, 0.4, {"query": "订单服务 p99 延迟"},
                  output={"hits": 0}, retrieval={"match_level": None, "hit_count": 0, "evidence_refs": []}),
        ],
        "verifier_evaluation": {"verdict": "REJECT", "groundedness_score": 0.1, "critical_fact_count": 0,
                                "claim_checks": [], "rationale": "No evidence was collected."},
    },
    {
        "run_id": "demo-aiops-payment-errors",
        "session_id": "demo-aiops-task-1",
        "kind": "aiops",
        "query": "Alert HighErrorRate on payment-api (critical)",
        "answer": "Root cause: connection pool exhaustion in payment-api after the PostgreSQL failover.",
        "status": "SUCCESS",
        "started_at": _t(120), "finished_at": _t(124),
        "alert": {"alertname": "HighErrorRate", "service": "payment-api", "severity": "critical",
                  "starts_at": _t(118), "summary": "5xx ratio 12% over 5m on payment-api",
                  "other_active_alerts": ["DiskPressure node-7", "CertificateExpiry api-gateway"]},
        "steps": [
            {"id": "s1", "name": "Understand the alert", "status": "completed",
             "summary": "HighErrorRate on payment-api: 5xx ratio 12% for 5 minutes.",
             "started_at": _t(120), "finished_at": _t(120.5)},
            {"id": "s2", "name": "Collect logs and metrics", "status": "completed",
             "summary": "Errors are `PoolTimeout` from the database client since 09:58.",
             "started_at": _t(120.5), "finished_at": _t(122)},
            {"id": "s3", "name": "Check recent changes", "status": "completed",
             "summary": "PostgreSQL primary failed over at 09:57; no deploy of payment-api.",
             "started_at": _t(122), "finished_at": _t(123)},
            {"id": "s4", "name": "Conclude", "status": "completed",
             "summary": "Pool exhaustion after failover; connections to the old primary hang.",
             "started_at": _t(123), "finished_at": _t(124)},
        ],
        "report": {"content": "## HighErrorRate on payment-api\n\n**Root cause:** the database "
                              "connection pool of `payment-api` is exhausted since the PostgreSQL "
                              "failover at 09:57; connections to the old primary hang until "
                              "`PoolTimeout`.\n\n**Evidence**\n\n- logs: 1,284 `PoolTimeout` errors "
                              "since 09:58\n- metrics: active connections pinned at the pool "
                              "maximum (50)\n\n**Action:** restart payment-api pods to drop stale "
                              "connections; set `tcp_keepalives_idle` so this recovers by itself."},
        "tool_calls": [
            _call("demo-call-7", "knowledge_search", 120.2, 0.7, {"query": "HighErrorRate payment-api"},
                  output={"hits": 1}, step_id="s1",
                  retrieval={"match_level": "L0", "hit_count": 1, "evidence_refs": [
                      {"ref": "kb://alerts/high-error-rate", "excerpt": "Check the database pool first."}]}),
            _call("demo-call-8", "query_logs", 120.6, 3.2,
                  {"service": "payment-api", "level": "error", "since": "09:50"},
                  output="1284 lines: PoolTimeout: timed out waiting for a connection", step_id="s2"),
            _call("demo-call-9", "query_metrics", 120.8, 1.5,
                  {"promql": "db_pool_active_connections{service=\"payment-api\"}"},
                  output={"max": 50, "value": 50}, step_id="s2"),
            _call("demo-call-10", "change_log", 122.1, 0.9, {"since": "09:00", "service": "payment-api"},
                  output={"deploys": [], "infra": ["postgres failover 09:57"]}, step_id="s3"),
        ],
        "aiops_rule_evaluation": None,
    },
    {
        "run_id": "demo-aiops-disk-pressure",
        "session_id": "demo-aiops-task-2",
        "kind": "aiops",
        "query": "Alert DiskPressure on node-7 (warning)",
        "answer": None,
        "status": "FAILED",
        "started_at": _t(180), "finished_at": _t(181),
        "alert": {"alertname": "DiskPressure", "node": "node-7", "severity": "warning",
                  "summary": "node-7 filesystem 93% full"},
        "steps": [
            {"id": "s1", "name": "Collect node facts", "status": "failed",
             "summary": "Both node tools failed; no facts collected.",
             "started_at": _t(180), "finished_at": _t(181)},
        ],
        "tool_calls": [
            _call("demo-call-11", "node_exec", 180.1, 10, {"node": "node-7", "command": "df -h"},
                  error="Error: ssh: connect to host node-7 port 22: Connection timed out", step_id="s1"),
            _call("demo-call-12", "query_metrics", 180.3, 0.3,
                  {"promql": "node_filesystem_avail_bytes{instance=\"node-7\"}"},
                  error={"type": "UpstreamUnavailable", "message": "prometheus: 503 Service Unavailable"},
                  step_id="s1"),
        ],
    },
    {
        "run_id": "demo-chat-running",
        "session_id": "demo-chat-session-4",
        "kind": "chat",
        "query": "Is the search cluster healthy right now?",
        "answer": None,
        "status": "RUNNING",
        "started_at": _t(240),
        "messages": [{"id": "m1", "role": "user", "content": "Is the search cluster healthy right now?"}],
        "tool_calls": [],
    },
]

# Lifecycle events applied after the documents: a call that never ended, a terminal
# event whose started never arrived (compensated), and a live call on the RUNNING run.
DEMO_EVENTS: list[dict[str, Any]] = [
    {"id": "demo-call-13", "run_id": "demo-aiops-payment-errors", "event": "started",
     "tool_name": "trace_search", "arguments": {"service": "payment-api", "limit": 20},
     "timestamp": _t(123.2), "step_id": "s3"},
    {"id": "demo-call-14", "run_id": "demo-aiops-payment-errors", "event": "completed",
     "tool_name": "query_logs", "output": "postgres: 3 connections terminated by failover",
     "timestamp": _t(123.5), "step_id": "s3"},
    {"id": "demo-call-15", "run_id": "demo-chat-running", "event": "started",
     "tool_name": "cluster_health", "arguments": {"cluster": "search-prod"},
     "timestamp": _t(240.1)},
]

DEMO_LEGACY_SESSION = {
    "session_id": "demo-legacy-session",
    "kind": "chat",
    "query": "What does error E1042 mean in the billing exporter?",
    "answer": "E1042 means the exporter could not reach the billing API; it retries with backoff.",
    "status": "SUCCESS",
    "self_evaluation": {"evidence_score": 65, "source": "rule", "factors": [
        {"name": "has_successful_tool_call", "delta": 30, "description": "successful tool calls: 2"},
        {"name": "l0_exact_match", "delta": 35, "description": "L0 hits: 1"}]},
}


@dataclass(frozen=True)
class DemoSummary:
    """Counts of what one load did (``created`` + ``updated`` + ``unchanged`` = all runs)."""

    created: int
    updated: int
    unchanged: int


def load(session: Session, actor: Actor, workspace_id: int) -> DemoSummary:
    """Load (or re-load) the demo runs into ``workspace_id`` through the ingest services.

    Idempotent: a second load leaves every row count unchanged. Raises ``Forbidden``
    unless ``actor`` may ingest into the workspace.
    """
    outcome = {"created": 0, "updated": 0, "unchanged": 0}
    for doc in DEMO_RUNS:
        body = {k: v for k, v in doc.items() if k != "run_id"}
        result = runs.upsert_run(session, actor, workspace_id, doc["run_id"], body)
        outcome[result.result] += 1
    tool_calls.apply_events(session, actor, workspace_id, DEMO_EVENTS)
    _load_legacy_session(session, workspace_id)
    return DemoSummary(**outcome)


def _load_legacy_session(session: Session, workspace_id: int) -> None:
    legacy = DEMO_LEGACY_SESSION
    existing = session.scalars(
        select(DiagnosisSession).where(
            DiagnosisSession.workspace_id == workspace_id,
            DiagnosisSession.session_id == legacy["session_id"],
        )
    ).one_or_none()
    if existing is None:
        session.add(DiagnosisSession(workspace_id=workspace_id, **legacy))
        session.commit()


def demo_workspace(session: Session) -> Workspace | None:
    """The demo workspace, if it exists."""
    return session.scalars(select(Workspace).where(Workspace.slug == DEMO_SLUG)).one_or_none()
