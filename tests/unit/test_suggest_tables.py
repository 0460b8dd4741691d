"""The tables of the proposal rules, pinned entry by entry (SPEC 7; rules in the module doc
of ``reviewapp/domain/suggest.py``).

Every sample text below is written by hand in an on-call's words, and so is the category
(or code, or name) a lead would expect from it: none is read from the module's tables, so
switching one keyword, key or suffix off fails the test that names it.
"""

from __future__ import annotations

import dataclasses

import pytest

from reviewapp.domain.suggest import (
    CASE_CATEGORIES,
    TRIAGE_CATEGORIES,
    RunFacts,
    RunText,
    Suggestion,
    Suggestions,
    remediation,
    suggest_error_code,
    suggest_fault_category,
    suggest_service,
    suggest_triage_category,
)

# --------------------------------------------------------------------------- categories

# (text of the query, category a lead expects, the keyword shown as the reason)
CATEGORY_SAMPLES = [
    # resource exhaustion
    ("checkout-worker restarted, last state OOMKilled", "RESOURCE_EXHAUSTION", "oomkilled"),
    ("the JVM ran out of memory during the nightly batch", "RESOURCE_EXHAUSTION", "out of memory"),
    ("OOM on node-3, the kernel killed the java process", "RESOURCE_EXHAUSTION", "oom"),
    ("the container hit its memory limit of 512Mi", "RESOURCE_EXHAUSTION", "memory limit"),
    ("node-7 is under disk pressure, pods are being evicted", "RESOURCE_EXHAUSTION", "disk pressure"),
    ("condition DiskPressure=True on node-7", "RESOURCE_EXHAUSTION", "diskpressure"),
    ("disk full on the logging host", "RESOURCE_EXHAUSTION", "disk full"),
    ("write failed: no space left on device", "RESOURCE_EXHAUSTION", "no space left"),
    ("ENOSPC while writing the WAL", "RESOURCE_EXHAUSTION", "enospc"),
    ("fork failed with ENOMEM", "RESOURCE_EXHAUSTION", "enomem"),
    ("containers are CPU throttled at the 2-core limit", "RESOURCE_EXHAUSTION", "cpu throttl"),
    ("connection pool exhaustion in payment-api", "RESOURCE_EXHAUSTION", "pool exhaust"),
    ("all worker threads exhausted", "RESOURCE_EXHAUSTION", "exhausted"),
    ("accept4: too many open files", "RESOURCE_EXHAUSTION", "too many open files"),
    ("ephemeral storage quota exceeded in namespace shop", "RESOURCE_EXHAUSTION", "quota exceeded"),
    # database
    ("database connections are piling up", "DATABASE", "database"),
    ("postgres primary is at 100% cpu", "DATABASE", "postgres"),
    ("MySQL replica stopped applying events", "DATABASE", "mysql"),
    ("the slow query log shows a full table scan", "DATABASE", "slow query"),
    ("deadlock detected while updating orders", "DATABASE", "deadlock"),
    ("replication lag on the read replica is 40 s", "DATABASE", "replication lag"),
    ("after the failover the app kept writing to the old primary", "DATABASE", "failover"),
    # MySQL's own wording: "timeout" (NETWORK, 2) ties and DATABASE is listed first
    ("Lock wait timeout exceeded; try restarting transaction", "DATABASE", "lock wait"),
    ("SQL error in the nightly report", "DATABASE", "sql"),
    ("订单库出现大量慢查询", "DATABASE", "慢查询"),
    ("数据库连接数打满", "DATABASE", "数据库"),
    # network
    ("the call to inventory timed out after 30 s", "NETWORK", "timed out"),
    ("client timeout talking to redis", "NETWORK", "timeout"),
    ("dial tcp 10.0.0.7:6379: connection refused", "NETWORK", "connection refused"),
    ("read: connection reset by peer", "NETWORK", "connection reset"),
    ("DNS lookup for inventory.internal failed", "NETWORK", "dns"),
    ("host unreachable from the eu-west nodes", "NETWORK", "unreachable"),
    ("connect ECONNREFUSED 10.0.0.7:5432", "NETWORK", "econnrefused"),
    ("ETIMEDOUT calling the rates endpoint", "NETWORK", "etimedout"),
    ("5% packet loss between the zones", "NETWORK", "packet loss"),
    ("TLS handshake error from 10.2.3.4", "NETWORK", "tls handshake"),
    ("the ingress returns 504 for /checkout", "NETWORK", "504"),
    # deployment
    ("errors started right after we deployed v2.3", "DEPLOYMENT", "deploy"),
    ("the rollout of build 8812 stalled at 50%", "DEPLOYMENT", "rollout"),
    ("since the 14:00 release", "DEPLOYMENT", "release"),
    ("a rollback to the previous build did not help", "DEPLOYMENT", "rollback"),
    ("should we roll back checkout?", "DEPLOYMENT", "roll back"),
    ("the image tag latest points to a broken build", "DEPLOYMENT", "image tag"),
    ("下午发布之后错误率上升", "DEPLOYMENT", "发布"),
    # dependency
    ("upstream connect error or disconnect/reset before headers", "DEPENDENCY", "upstream"),
    ("the third-party payment provider is flaky", "DEPENDENCY", "third-party"),
    ("Service Unavailable from the tax provider", "DEPENDENCY", "service unavailable"),
    ("a dependency of checkout is failing", "DEPENDENCY", "dependency"),
    ("the external API for shipping rates is down", "DEPENDENCY", "external api"),
    ("Bad Gateway from the shipping provider", "DEPENDENCY", "bad gateway"),
    ("nginx answered 502 for /cart", "DEPENDENCY", "502"),
    ("envoy answered 503 for /cart", "DEPENDENCY", "503"),
    # auth
    ("permission denied writing /data", "AUTH", "permission denied"),
    ("Unauthorized when calling the billing endpoint", "AUTH", "unauthorized"),
    ("Forbidden: user cannot list pods", "AUTH", "forbidden"),
    ("the login endpoint returns 401", "AUTH", "401"),
    ("S3 returns 403 on PutObject", "AUTH", "403"),
    ("credentials were rotated last night", "AUTH", "credential"),
    ("password authentication failed for user app", "AUTH", "password"),
    ("the certificate has expired", "AUTH", "certificate"),
    ("token expired for the ci account", "AUTH", "token expired"),
    ("an ACL change blocked the subnet", "AUTH", "acl"),
    # configuration
    ("misconfigured ingress host", "CONFIGURATION", "misconfigur"),
    ("a config change at 13:55 preceded the errors", "CONFIGURATION", "config change"),
    ("wrong configuration of the retry policy", "CONFIGURATION", "configuration"),
    ("feature flag new-cart was switched on", "CONFIGURATION", "feature flag"),
    ("missing env var PAYMENT_URL", "CONFIGURATION", "env var"),
    ("配置中心推送了错误的参数", "CONFIGURATION", "配置"),
    # capacity
    ("latency is above the SLO", "CAPACITY", "latency"),
    ("p99 doubled since noon", "CAPACITY", "p99"),
    ("saturation on the ingress nodes", "CAPACITY", "saturation"),
    ("throttling by the cloud provider", "CAPACITY", "throttling"),
    ("hitting the rate limit of the geo lookup", "CAPACITY", "rate limit"),
    ("high load on the search nodes", "CAPACITY", "high load"),
    ("接口延迟升高", "CAPACITY", "延迟"),
]


@pytest.mark.parametrize(("text", "category", "keyword"), CATEGORY_SAMPLES)
def test_each_keyword_proposes_its_category(text, category, keyword):
    s = suggest_fault_category(RunText(query=text))
    assert (s.value, s.rule, s.source, s.matched) == (category, "category_keywords", "query", keyword)
    assert s.source_label == "query"


@pytest.mark.parametrize(("query", "category", "keyword"), [
    # "postgres" and "postgresql" both count (2 + 2 = 4) and beat an OOM in a tool error (3)
    ("PostgreSQL primary restarted", "DATABASE", "postgres"),
    # "deploy" and "deployment" (2 + 2) against the tool error's "oom" (3)
    ("deployment checkout stuck at 3 of 5 pods", "DEPLOYMENT", "deploy"),
    # "timeout" and "gateway timeout" (2 + 2) against the tool error's "oom" (3)
    ("Gateway Timeout from the ingress", "NETWORK", "timeout"),
])
def test_a_longer_keyword_counts_besides_the_shorter_one_inside_it(query, category, keyword):
    s = suggest_fault_category(RunText(query=query, tool_errors=["OOM while sorting"]))
    assert (s.value, s.source, s.matched) == (category, "query", keyword)


@pytest.mark.parametrize("text", [
    "p99 went from 4030 ms to 5020 ms",  # latency, not a 502
    "memory at 5030 MiB of 6144 MiB",
    "order 4011 shipped",
    "took 50412 ms",
])
def test_status_keywords_do_not_match_inside_longer_numbers(text):
    """A bug: "502" matched "5020", so a latency alert was proposed as a dependency fault."""
    s = suggest_fault_category(RunText(query=text))
    assert s.value == ("CAPACITY" if "p99" in text else "GENERAL")


def test_status_keyword_at_the_end_of_the_text_still_matches():
    assert suggest_fault_category(RunText(query="envoy answered 503")).matched == "503"


# Source weights (module doc): alert 3, tool arguments 1, tool errors 3, query 2, answer 1.
# RESOURCE_EXHAUSTION is listed before CAPACITY, so it wins a tie.
@pytest.mark.parametrize(("run", "category"), [
    # alert 3 against query 2 + answer 1: a tie, the first listed wins
    (RunText(alert={"summary": "latency"}, query="oom", answer="oom"), "RESOURCE_EXHAUSTION"),
    # alert 3 against query 2
    (RunText(alert={"summary": "latency"}, query="oom"), "CAPACITY"),
    # tool errors 3 against query 2 + answer 1, then against query 2
    (RunText(tool_errors=["latency"], query="oom", answer="oom"), "RESOURCE_EXHAUSTION"),
    (RunText(tool_errors=["latency"], query="oom"), "CAPACITY"),
    # query 2 against answer 1 + tool arguments 1, then against answer 1
    (RunText(query="latency", answer="oom", tool_arguments=[{"q": "oom"}]), "RESOURCE_EXHAUSTION"),
    (RunText(query="latency", answer="oom"), "CAPACITY"),
    # tool arguments 1 against answer 1; tool arguments 1 + answer 1 against tool arguments 1
    (RunText(tool_arguments=[{"q": "latency"}], answer="oom"), "RESOURCE_EXHAUSTION"),
    (RunText(tool_arguments=[{"q": "latency"}, {"q": "oom"}], answer="p99"), "CAPACITY"),
    # answer 1 against tool arguments 1; answer 1 + 1 against tool arguments 1
    (RunText(answer="latency", tool_arguments=["oom"]), "RESOURCE_EXHAUSTION"),
    (RunText(answer="latency p99", tool_arguments=["oom"]), "CAPACITY"),
])
def test_source_weights_decide_between_categories(run, category):
    assert suggest_fault_category(run).value == category


def test_the_reason_shown_is_the_first_keyword_of_the_highest_source():
    run = RunText(alert={"summary": "p99 latency"}, query="latency")
    s = suggest_fault_category(run)
    assert (s.value, s.source, s.matched, s.source_label) == ("CAPACITY", "alert", "latency",
                                                              "alert payload")


def test_a_keyword_counts_once_per_source_however_often_it_appears():
    """CAPACITY: "latency" three times in the query is 2, not 6; DATABASE's two keywords
    in the query are 4."""
    run = RunText(query="latency latency latency; postgres deadlock")
    assert suggest_fault_category(run).value == "DATABASE"


def test_a_number_in_the_alert_payload_is_text_too():
    """An alert carries the status as a JSON number: 503 still reads as a dependency fault."""
    run = RunText(alert={"alertname": "HighErrorRate", "http_status": 503, "resolved": False,
                         "runbook": None}, query="why?")
    s = suggest_fault_category(run)
    assert (s.value, s.source, s.matched) == ("DEPENDENCY", "alert", "503")


def test_every_part_of_a_json_payload_is_read_keys_included():
    """Keys count (a custom metric named after the fault); so does every element of a list,
    every tool call's arguments and every failed call's error, each read from its start."""
    payload = RunText(alert={"alertname": "LockContention", "deadlocks_per_min": 4})
    assert suggest_fault_category(payload).value == "DATABASE"
    promql = RunText(tool_arguments=[{"queries": ["rate(http_requests_total[5m])",
                                                  "latency_seconds_bucket"]}])
    assert (suggest_fault_category(promql).value, suggest_fault_category(promql).source) == (
        "CAPACITY", "tool_arguments")
    kubectl = RunText(tool_arguments=[{"namespace": "shop"}, {"deployment": "checkout"}])
    assert (suggest_fault_category(kubectl).value, suggest_fault_category(kubectl).matched) == (
        "DEPLOYMENT", "deploy")
    errors = RunText(tool_errors=["exit status 1", "timeout waiting for the log stream"])
    assert (suggest_fault_category(errors).value, suggest_fault_category(errors).source) == (
        "NETWORK", "tool_errors")


def test_a_multi_line_alert_description_is_read_line_by_line():
    """Alertmanager annotations span lines: a keyword or code at the start of a line counts."""
    run = RunText(alert={"annotations": {"description": "Pods restarting.\nOOMKilled 3 times"}})
    assert (suggest_fault_category(run).value, suggest_error_code(run).value) == (
        "RESOURCE_EXHAUSTION", "OOMKilled")


def test_each_proposal_names_its_field():
    run = RunText(alert={"service": "payment-api", "code": "PAY-42"}, query="deadlock")
    assert [s.field for s in (suggest_service(run), suggest_error_code(run),
                              suggest_fault_category(run))] == ["service", "error_code",
                                                                "fault_category"]
    text = RunText(query="cart-api: ECONNREFUSED")
    assert (suggest_service(text).field, suggest_error_code(text).field) == ("service", "error_code")
    assert suggest_fault_category(RunText()).field == "fault_category"
    assert suggest_triage_category(RunFacts()).field == "fault_category"
    assert suggest_triage_category(RunFacts(tool_call_count=1)).field == "fault_category"


def test_default_category_has_no_source():
    s = suggest_fault_category(RunText())
    assert (s.value, s.rule, s.source, s.matched, s.source_label) == ("GENERAL", "default", "", "",
                                                                      "default")


# --------------------------------------------------------------------------- service


@pytest.mark.parametrize("name", [
    "checkout-service", "cart-svc", "payment-api", "edge-gateway", "search-server",
    "mail-worker", "billing_exporter", "orders-db", "session-cache", "egress-proxy",
    "shop-frontend", "shop-backend", "email-queue", "kafka-cluster",
])
def test_each_service_suffix_names_a_service(name):
    s = suggest_service(RunText(answer=f"Errors rose on {name} around 14:05."))
    assert (s.value, s.rule, s.source, s.matched) == (name, "service_name_in_text", "answer", name)


@pytest.mark.parametrize("text", [
    "the checkout service is slow",   # no hyphen: a phrase, not a name
    "see /var/run/app-service.sock",  # part of a path
    "https://status.example.com/cart-api-v2",  # followed by more of the name
])
def test_service_name_needs_a_name_of_its_own(text):
    assert suggest_service(RunText(query=text)) is None


def test_service_name_most_frequent_within_one_source():
    run = RunText(query="cart-api called payment-api, payment-api timed out")
    assert suggest_service(run).value == "payment-api"


def test_service_name_tie_goes_to_the_first_seen():
    run = RunText(query="payment-api and cart-api both alert")
    assert suggest_service(run).value == "payment-api"


def test_service_key_beats_any_later_service_key_anywhere_in_the_same_source():
    """Keys are tried in the order service, service_name, ..., container: a nested
    ``service`` outranks a top-level ``app``."""
    run = RunText(alert={"app": "web-frontend", "labels": {"service": "payment-api"}})
    assert suggest_service(run).matched == "service=payment-api"


def test_service_key_top_level_before_nested():
    run = RunText(alert={"labels": {"service": "inner-api"}, "service": "outer-api"})
    assert suggest_service(run).value == "outer-api"


def test_service_key_in_a_list_of_tool_arguments():
    run = RunText(tool_arguments=[[{"targets": [{"job": "node-exporter"}]}]])
    s = suggest_service(run)
    assert (s.value, s.rule, s.source, s.matched) == ("node-exporter", "service_key", "tool_arguments",
                                                      "job=node-exporter")


def test_service_key_value_is_stripped():
    assert suggest_service(RunText(alert={"service": "  payment-api \n"})).value == "payment-api"


@pytest.mark.parametrize("value", [None, True, {"name": "x"}, ["a"], "", "two words", "-leading-dash"])
def test_service_key_value_that_is_no_name_falls_through_to_the_text(value):
    run = RunText(alert={"service": value}, query="payment-api is down")
    s = suggest_service(run)
    assert (s.value, s.rule, s.source) == ("payment-api", "service_name_in_text", "query")


def test_service_key_accepts_a_120_character_name_not_121():
    assert suggest_service(RunText(alert={"app": "a" * 120})).value == "a" * 120
    assert suggest_service(RunText(alert={"app": "a" * 121})) is None


def test_service_key_number_is_a_name():
    assert suggest_service(RunText(alert={"job": 42})).value == "42"


def test_empty_alert_then_tool_arguments():
    run = RunText(alert={}, tool_arguments=[{"service": "cart-api"}])
    assert suggest_service(run).source == "tool_arguments"


def test_service_from_text_in_the_alert_payload_before_the_query():
    run = RunText(alert={"summary": "errors on cart-api"}, query="payment-api is down")
    s = suggest_service(run)
    assert (s.value, s.source) == ("cart-api", "alert")


def test_service_from_tool_errors_before_the_query():
    run = RunText(tool_errors=["", "dial cart-api: refused"], query="payment-api is down")
    s = suggest_service(run)
    assert (s.value, s.source, s.source_label) == ("cart-api", "tool_errors", "tool-call errors")


# --------------------------------------------------------------------------- error code


@pytest.mark.parametrize(("text", "code", "rule", "matched"), [
    ("ERR-1234 raised by the billing job", "ERR-1234", "vendor_code", "ERR-1234"),
    ("connect ECONNRESET", "ECONNRESET", "errno_name", "ECONNRESET"),
    ("write EPIPE", "EPIPE", "errno_name", "EPIPE"),
    ("listen EADDRINUSE :8080", "EADDRINUSE", "errno_name", "EADDRINUSE"),
    ("open /etc/app.yaml: ENOENT", "ENOENT", "errno_name", "ENOENT"),
    ("Back-off restarting: CrashLoopBackOff", "CrashLoopBackOff", "kubernetes_reason",
     "CrashLoopBackOff"),
    ("Failed to pull image: ImagePullBackOff", "ImagePullBackOff", "kubernetes_reason",
     "ImagePullBackOff"),
    ("node-4 went NodeNotReady at 03:12", "NodeNotReady", "kubernetes_reason", "NodeNotReady"),
    ("psycopg.OperationalError: server closed the connection", "OperationalError",
     "exception_name", "OperationalError"),
    ("PermissionDenied: cannot read secret payments/db", "PermissionDenied", "exception_name",
     "PermissionDenied"),
    ("RateLimitExceeded for the geo lookup", "RateLimitExceeded", "exception_name",
     "RateLimitExceeded"),
    ("upstream answered HTTP 504", "HTTP_504", "http_status", "HTTP 504"),
    ("status=500 from the cart", "HTTP_500", "http_status", "status=500"),
    ("exit code: 404 page", "HTTP_404", "http_status", "code: 404"),
    ("the proxy says 502 Bad Gateway", "HTTP_502", "http_status", "502 Bad Gateway"),
    ("S3: 403 permission denied", "HTTP_403", "http_status", "403 permission denied"),
    ("lots of 429s since noon", "HTTP_429", "http_status", "429s"),
])
def test_error_code_rules_by_example(text, code, rule, matched):
    s = suggest_error_code(RunText(tool_errors=[text]))
    assert (s.value, s.rule, s.source, s.matched) == (code, rule, "tool_errors", matched)


def test_error_code_most_frequent_in_the_source_then_first_seen():
    s = suggest_error_code(RunText(query="E1001 once, then E2002 and E2002 again"))
    assert (s.value, s.matched) == ("E2002", "E2002")
    assert suggest_error_code(RunText(query="E1001 then E2002")).value == "E1001"


def test_error_code_rule_order_beats_source_order():
    """errno (rule 3) in the answer beats an exception name (rule 5) in the alert."""
    run = RunText(alert={"summary": "PoolTimeout"}, answer="connect ETIMEDOUT")
    s = suggest_error_code(run)
    assert (s.value, s.source) == ("ETIMEDOUT", "answer")


def test_error_code_within_a_rule_source_order():
    run = RunText(alert={"summary": "E1001"}, query="E2002 E2002")
    assert (suggest_error_code(run).value, suggest_error_code(run).source) == ("E1001", "alert")


@pytest.mark.parametrize("value", [None, True, "", "  ", "two words", "x" * 121])
def test_error_code_key_value_that_is_no_code_falls_through(value):
    run = RunText(alert={"error_code": value}, query="ORA-00942 seen")
    assert suggest_error_code(run).value == "ORA-00942"


def test_error_code_key_accepts_120_characters_and_a_number():
    assert suggest_error_code(RunText(alert={"code": "C" * 120})).value == "C" * 120
    s = suggest_error_code(RunText(tool_arguments=[{"errno": 111}]))
    assert (s.value, s.matched) == ("111", "errno=111")


def test_error_code_key_value_is_stripped():
    assert suggest_error_code(RunText(alert={"reason": " Evicted "})).value == "Evicted"


# --------------------------------------------------------------------------- triage


@pytest.mark.parametrize(("facts", "category", "rule", "reason"), [
    (RunFacts(tool_call_count=2, reasons=["unsafe"]), "UNSAFE_ADVICE", "reviewers_flag_unsafe",
     "a reviewer marked the answer unsafe"),
    (RunFacts(), "NO_EVIDENCE", "no_tool_call", "the agent called no tool"),
    (RunFacts(tool_call_count=1, failed_tool_call_count=1), "TOOL_FAILURE", "all_tool_calls_failed",
     "every tool call failed"),
    (RunFacts(tool_call_count=1, evidence_factors=("retrieval_no_hit",)), "RETRIEVAL_MISS",
     "retrieval_no_hit", "the knowledge lookups found nothing"),
    (RunFacts(tool_call_count=1, reasons=["citation"]), "CITATION_PROBLEM",
     "reviewers_flag_citations", "reviewers complained about the citations"),
    (RunFacts(tool_call_count=1, verifier_verdict="REJECT"), "UNGROUNDED_CLAIM",
     "verifier_rejected", "the agent's verifier rejected the answer"),
    (RunFacts(tool_call_count=1, reasons=["incomplete"]), "INCOMPLETE_ANSWER",
     "reviewers_flag_incomplete", "reviewers found the answer incomplete"),
    (RunFacts(tool_call_count=1, reasons=["incorrect"]), "WRONG_ROOT_CAUSE",
     "reviewers_flag_incorrect", "reviewers found the answer incorrect"),
    (RunFacts(tool_call_count=2, failed_tool_call_count=1), "TOOL_FAILURE",
     "some_tool_calls_failed", "some tool calls failed"),
    (RunFacts(tool_call_count=1, verifier_verdict="PASS"), "GENERAL", "default", ""),
])
def test_triage_rule_names_and_reasons_as_a_lead_reads_them(facts, category, rule, reason):
    s = suggest_triage_category(facts)
    assert (s.value, s.rule, s.matched, s.source) == (category, rule, reason, "")


@pytest.mark.parametrize(("facts", "category"), [
    # each rule outranks the next one when both hold
    (RunFacts(tool_call_count=0, reasons=["unsafe"]), "UNSAFE_ADVICE"),
    (RunFacts(tool_call_count=0, evidence_factors=["retrieval_no_hit"]), "NO_EVIDENCE"),
    (RunFacts(tool_call_count=2, failed_tool_call_count=2, evidence_factors=["retrieval_no_hit"]),
     "TOOL_FAILURE"),
    (RunFacts(tool_call_count=1, evidence_factors=["retrieval_no_hit"], reasons=["citation"]),
     "RETRIEVAL_MISS"),
    (RunFacts(tool_call_count=1, reasons=["citation"], verifier_verdict="REJECT"), "CITATION_PROBLEM"),
    (RunFacts(tool_call_count=1, verifier_verdict="REJECT", reasons=["incomplete"]), "UNGROUNDED_CLAIM"),
    (RunFacts(tool_call_count=1, reasons=["incorrect", "incomplete"]), "INCOMPLETE_ANSWER"),
    (RunFacts(tool_call_count=3, failed_tool_call_count=1, reasons=["incorrect"]), "WRONG_ROOT_CAUSE"),
    # one failed call of three is "some", not "all"; three of three is "all"
    (RunFacts(tool_call_count=3, failed_tool_call_count=2), "TOOL_FAILURE"),
])
def test_triage_rules_priority(facts, category):
    assert suggest_triage_category(facts).value == category


def test_triage_some_failed_is_not_all_failed():
    assert suggest_triage_category(RunFacts(tool_call_count=3, failed_tool_call_count=2)).rule \
        == "some_tool_calls_failed"
    assert suggest_triage_category(RunFacts(tool_call_count=3, failed_tool_call_count=3)).rule \
        == "all_tool_calls_failed"


def test_category_groups_as_the_two_pages_list_them():
    assert CASE_CATEGORIES == ("GENERAL", "RESOURCE_EXHAUSTION", "DATABASE", "NETWORK", "DEPLOYMENT",
                               "DEPENDENCY", "AUTH", "CONFIGURATION", "CAPACITY")
    assert TRIAGE_CATEGORIES == ("NO_EVIDENCE", "RETRIEVAL_MISS", "TOOL_FAILURE", "UNGROUNDED_CLAIM",
                                 "WRONG_ROOT_CAUSE", "INCOMPLETE_ANSWER", "UNSAFE_ADVICE",
                                 "CITATION_PROBLEM", "KNOWLEDGE_GAP")


# --------------------------------------------------------------------------- remediation


@pytest.mark.parametrize("label", [
    "Remediation", "Solution", "Fix", "Resolution", "Mitigation", "Workaround", "Action",
    "Actions", "Action items", "Next step", "Next steps", "Recommended action",
    "Recommended actions", "Recommendation", "Recommendations", "Suggested fix",
    "修复", "解决方案", "处理建议", "建议",
])
def test_each_remediation_label(label):
    text = f"Root cause: the pool is too small.\n{label}: raise max_connections to 200\n\nNotes."
    assert remediation(text) == "raise max_connections to 200"


@pytest.mark.parametrize(("text", "expected"), [
    # a heading with a trailing colon, any level; the section runs across blank lines
    ("# Mitigation:\nscale out\n\nthen drain node-3\n# Timeline\n14:00", "scale out\n\nthen drain node-3"),
    # a heading that is not a label is skipped, the label after it is found
    ("## Impact\ncheckout down\n## Workaround\nuse the backup region", "use the backup region"),
    # a label whose text starts on the next lines, up to a blank line
    ("Fix:\n\n  restart the pods\nclear the cache\n\nmore", "restart the pods\nclear the cache"),
    # a label with no text at all: the following lines up to a heading
    ("**Fix**\n\nrestart\n# Next", "restart"),
    ("__Mitigation__\n\ndrain node-3\n\nTail.", "drain node-3"),
    # an all-capitals heading
    ("## ROOT CAUSE\npool too small\n## SUGGESTED FIX\nraise the pool to 50", "raise the pool to 50"),
    # __bold__ and list markers are not part of the label
    ("__Resolution:__ rotate the key", "rotate the key"),
    ("* Fix: bump the limit", "bump the limit"),
    ("+ Fix: bump the limit", "bump the limit"),
    # the first label in text order wins
    ("Workaround: use the replica\nFix: add an index", "use the replica\nFix: add an index"),
    # a label inside a sentence, or plain bold words, are no label
    ("We will fix it tomorrow.", ""),
    ("**Root cause**\npool too small", ""),
    ("Fix", ""),
])
def test_remediation_shapes(text, expected):
    assert remediation(text) == expected


# --------------------------------------------------------------------------- values


def test_inputs_default_to_an_empty_run_and_a_successful_run_without_calls():
    assert RunText() == RunText(query="", answer="", alert=None, tool_arguments=(), tool_errors=())
    assert RunFacts() == RunFacts(status="SUCCESS", tool_call_count=0, failed_tool_call_count=0,
                                  evidence_factors=(), verifier_verdict=None, reasons=())


def test_inputs_and_proposals_are_immutable_values():
    proposal = Suggestion("service", "payment-api", "service_key", "alert", "service=payment-api")
    values = [RunText(query="q"), RunFacts(), proposal, Suggestions(proposal, None, None)]
    for value in values:
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.query = "changed"
    assert len({RunText(query="q"), RunText(query="q"), RunFacts(), RunFacts()}) == 2
