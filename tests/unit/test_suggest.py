"""Deterministic proposals of fault category, error code and service (SPEC 7)."""

from __future__ import annotations

import pytest

from reviewapp.domain.suggest import (
    RunFacts,
    RunText,
    remediation,
    suggest,
    suggest_error_code,
    suggest_fault_category,
    suggest_service,
    suggest_triage_category,
    valid_category,
)


def test_service_from_alert_payload_key_beats_text():
    run = RunText(query="checkout-service is slow", alert={"labels": {"service": "payment-api"}})
    s = suggest_service(run)
    assert (s.value, s.rule, s.source, s.matched) == ("payment-api", "service_key", "alert",
                                                      "service=payment-api")


def test_service_from_tool_arguments_when_no_alert():
    run = RunText(query="why?", tool_arguments=[{"query": "x"}, {"app": "cart-worker", "since": "1h"}])
    s = suggest_service(run)
    assert (s.value, s.source) == ("cart-worker", "tool_arguments")


def test_service_from_text_takes_the_most_frequent_name_of_the_first_source():
    run = RunText(
        query="Why is checkout-service returning 502s?",
        answer="payment-api payment-api payment-api is fine; checkout-service restarted.",
    )
    s = suggest_service(run)
    assert (s.value, s.rule, s.source) == ("checkout-service", "service_name_in_text", "query")


def test_service_none_when_nothing_matches():
    assert suggest_service(RunText(query="what is the weather")) is None


def test_service_ignores_values_that_are_not_names():
    run = RunText(alert={"service": "two words here"}, query="billing_exporter down")
    assert suggest_service(run).value == "billing_exporter"


@pytest.mark.parametrize("text, code, rule", [
    ("ORA-00942: table or view does not exist", "ORA-00942", "vendor_code"),
    ("What does error E1042 mean in the billing exporter?", "E1042", "vendor_code"),
    ("connect ECONNREFUSED 10.0.0.7:5432", "ECONNREFUSED", "errno_name"),
    ("37 events. Reason: OOMKilled container checkout-service", "OOMKilled", "kubernetes_reason"),
    ("PoolTimeout: timed out waiting for a connection", "PoolTimeout", "exception_name"),
    ("prometheus: 503 Service Unavailable", "HTTP_503", "http_status"),
    ("Why is checkout-service returning 502s since 14:00?", "HTTP_502", "http_status"),
    ("upstream answered HTTP 504", "HTTP_504", "http_status"),
    ("status code: 429", "HTTP_429", "http_status"),
])
def test_error_code_rules(text, code, rule):
    s = suggest_error_code(RunText(query=text))
    assert (s.value, s.rule) == (code, rule)


@pytest.mark.parametrize("text", [
    "memory climbed from 410 MiB to 512 MiB", "p99 is 450 ms", "Error: something broke",
    "order 40412 shipped",
])
def test_error_code_ignores_numbers_without_context(text):
    assert suggest_error_code(RunText(query=text)) is None


def test_more_specific_rule_wins_over_source_priority():
    """A Kubernetes reason in the answer outranks an HTTP status in the query."""
    run = RunText(query="checkout returning 502s", answer="pods were OOMKilled")
    assert suggest_error_code(run).value == "OOMKilled"


def test_structured_error_code_key_wins():
    run = RunText(alert={"labels": {"error_code": "PAY-0042"}}, query="ORA-00942 seen")
    s = suggest_error_code(run)
    assert (s.value, s.rule, s.source) == ("PAY-0042", "error_code_key", "alert")


def test_fault_category_scores_by_source_weight():
    run = RunText(
        alert={"alertname": "HighErrorRate"},
        tool_errors=["PoolTimeout: connection pool exhausted"],
        answer="after the postgres failover the pool is exhausted",
    )
    s = suggest_fault_category(run)
    # RESOURCE_EXHAUSTION: "pool exhaust" + "exhausted" in tool errors (3 + 3) and
    # "exhausted" in the answer (1) = 7; DATABASE: "postgres" + "failover" in the answer = 2.
    assert (s.value, s.rule, s.source, s.matched) == (
        "RESOURCE_EXHAUSTION", "category_keywords", "tool_errors", "pool exhaust")


def test_fault_category_matches_chinese_keywords():
    assert suggest_fault_category(RunText(query="订单服务 p99 延迟升高")).value == "CAPACITY"


def test_fault_category_defaults_to_general():
    s = suggest_fault_category(RunText(query="hello there"))
    assert (s.value, s.rule) == ("GENERAL", "default")


def test_keywords_do_not_match_inside_words():
    """"acl" must not fire on "oracle", nor "dns" on "dnsmasq"-less words like "sundnss"."""
    assert suggest_fault_category(RunText(query="the miracle of oracles")).value == "GENERAL"


def test_suggest_is_deterministic_and_complete():
    run = RunText(query="Alert HighErrorRate on payment-api",
                  tool_errors=["PoolTimeout: timed out waiting for a connection"],
                  alert={"service": "payment-api"})
    first, second = suggest(run), suggest(run)
    assert first == second
    assert first.as_dict() == {"fault_category": "NETWORK", "error_code": "PoolTimeout",
                               "service": "payment-api"}


@pytest.mark.parametrize("facts, category", [
    (RunFacts(reasons=["incorrect", "unsafe"], tool_call_count=3), "UNSAFE_ADVICE"),
    (RunFacts(tool_call_count=0), "NO_EVIDENCE"),
    (RunFacts(tool_call_count=2, failed_tool_call_count=2), "TOOL_FAILURE"),
    (RunFacts(tool_call_count=2, evidence_factors=["retrieval_no_hit"]), "RETRIEVAL_MISS"),
    (RunFacts(tool_call_count=2, reasons=["citation"]), "CITATION_PROBLEM"),
    (RunFacts(tool_call_count=2, verifier_verdict="REJECT"), "UNGROUNDED_CLAIM"),
    (RunFacts(tool_call_count=2, reasons=["incomplete"]), "INCOMPLETE_ANSWER"),
    (RunFacts(tool_call_count=2, reasons=["incorrect"]), "WRONG_ROOT_CAUSE"),
    (RunFacts(tool_call_count=3, failed_tool_call_count=1), "TOOL_FAILURE"),
    (RunFacts(tool_call_count=3), "GENERAL"),
])
def test_triage_category_rules_in_order(facts, category):
    assert suggest_triage_category(facts).value == category


@pytest.mark.parametrize("code, ok", [
    ("GENERAL", True), ("RETRIEVAL_MISS", True), ("A1", True), ("lower", False),
    ("1ABC", False), ("HAS SPACE", False), ("X" * 64, True), ("X" * 65, False),
])
def test_valid_category(code, ok):
    assert valid_category(code) is ok


def test_other_active_alerts_are_never_the_subject():
    """SPEC 5.3: the diagnosis is about the input alert, not the other alerts firing."""
    run = RunText(
        query="Alert HighErrorRate on payment-api (critical)",
        alert={"alertname": "HighErrorRate", "service": "payment-api",
               "other_active_alerts": ["DiskPressure node-7", "CertificateExpiry api-gateway"],
               "related_alerts": [{"service": "api-gateway", "code": "CERT-0001"}]},
        answer="Connection pool exhaustion after the failover.",
    )
    proposals = suggest(run)
    assert proposals.service.value == "payment-api"
    assert proposals.error_code is None
    # "pool exhaust" (answer, 1) ties with DATABASE's "failover" (answer, 1) and is listed
    # first; "DiskPressure" (weight 3 if it counted) sits in the other alerts and is ignored
    assert (proposals.fault_category.value, proposals.fault_category.source) == (
        "RESOURCE_EXHAUSTION", "answer")


@pytest.mark.parametrize(("text", "expected"), [
    # a heading: the section up to the next heading
    ("Root cause: the pool.\n\n### Fix\n\nRaise the pool size.\nRestart pods.\n\n## Evidence\nlogs",
     "Raise the pool size.\nRestart pods."),
    # a bold label with its text on the line, up to the blank line
    ("**Root cause:** disk full.\n\n**Remediation:** rotate the logs.\n\nMore prose.", "rotate the logs."),
    # a list item label, any case; a full-width colon
    ("- Next steps: page the DBA", "page the DBA"),
    ("建议：检查最近的发布", "检查最近的发布"),
    # a bold label alone on its line: the paragraph after it
    ("**Solution**\n\nRoll back release 42.\n\nTail.", "Roll back release 42."),
    # only a root cause, or "fix" as a plain verb: nothing
    ("Root cause: connection pool exhaustion in payment-api.", ""),
    ("Fix the pool: it is too small.", ""),
    ("", ""),
])
def test_remediation_is_the_labelled_section_never_the_root_cause(text, expected):
    assert remediation(text) == expected


@pytest.mark.parametrize("key", ["service", "service_name", "serviceName", "app", "application",
                                 "deployment", "job", "container"])
def test_each_service_key_of_an_alert_names_the_service(key):
    s = suggest_service(RunText(query="why?", alert={"labels": {key: "cart-worker"}}))
    assert (s.value, s.rule, s.source, s.matched) == ("cart-worker", "service_key", "alert", f"{key}=cart-worker")
    assert s.source_label == "alert payload"


@pytest.mark.parametrize("key", ["error_code", "errorCode", "code", "errno", "reason"])
def test_each_error_code_key_of_a_tool_argument_names_the_code(key):
    s = suggest_error_code(RunText(query="why?", tool_arguments=[{key: "E_POOL_42"}]))
    assert (s.value, s.rule, s.source, s.matched) == ("E_POOL_42", "error_code_key", "tool_arguments",
                                                      f"{key}=E_POOL_42")
    assert s.source_label == "tool-call arguments"


@pytest.mark.parametrize("key", ["other_active_alerts", "other_alerts", "active_alerts", "related_alerts",
                                 "firing_alerts", "otherActiveAlerts", "relatedAlerts"])
def test_lists_of_other_alerts_are_context_not_the_subject(key):
    run = RunText(query="why?", alert={"alertname": "X", key: [{"service": "elsewhere"}]})
    assert suggest_service(run) is None


def test_source_labels_as_the_page_words_them():
    from reviewapp.domain.suggest import SOURCES, Suggestion

    words = [Suggestion("f", "v", "r", source, "m").source_label for source in SOURCES + ("",)]
    assert words == ["alert payload", "tool-call arguments", "tool-call errors", "query", "answer", "default"]


@pytest.mark.parametrize("text", [
    "Ran psql with password=[redacted] against the replica",  # a label, then the marker
    "env: DB_PASSWORD: [redacted]",
    'args {"password": "[redacted]", "credentials": "[redacted]"}',
    "<Password>[redacted]</Password>",
    "ran the client with --password [redacted] -h host",
    "aws configure set aws_secret_access_key [redacted]",
])
def test_a_redaction_marker_and_its_label_propose_no_category(text):
    # "password" / "credential" are AUTH keywords, but here they only name a secret the
    # redactor replaced: evidence that a secret was in the text, not of an auth fault.
    s = suggest_fault_category(RunText(query=text))
    assert (s.value, s.rule) == ("GENERAL", "default")


def test_a_redacted_secret_in_tool_arguments_proposes_no_category():
    # _text_of joins a key and its value with a newline: "password\n[redacted]".
    s = suggest_fault_category(RunText(tool_arguments=[{"password": "[redacted]", "host": "db1"}]))
    assert (s.value, s.rule) == ("GENERAL", "default")


def test_auth_words_outside_a_redaction_still_count():
    # "password authentication failed" (query: 2) is an auth fault; the redacted
    # "password=[redacted]" next to it adds nothing, so AUTH scores 2, found in the query.
    s = suggest_fault_category(RunText(
        query="password authentication failed for user app (password=[redacted])"))
    assert (s.value, s.source, s.matched) == ("AUTH", "query", "password")
