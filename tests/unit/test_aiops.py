"""AIOps rule checks (SPEC 5.3) on plain values, including the demo alert runs."""

from __future__ import annotations

import pytest

from reviewapp.domain.aiops import DEFAULT_EVIDENCE_TOOLS, evaluate_aiops, evidence_tool_groups
from reviewapp.services.demo import DEMO_RUNS


def _demo(run_id):
    doc = next(d for d in DEMO_RUNS if d["run_id"] == run_id)
    report = (doc.get("report") or {}).get("content")
    calls = [(c["tool_name"], c["status"]) for c in doc["tool_calls"]]
    return report, doc.get("alert"), calls


def _checks(result):
    return {c["name"]: c["passed"] for c in result["checks"]}


def test_aiops_demo_payment_run_passes_every_check():
    result = evaluate_aiops(*_demo("demo-aiops-payment-errors"))
    assert result["verdict"] == "PASS"
    assert result["mode"] == "payload"
    assert _checks(result) == {
        "final_report_present": True, "evidence_tool:knowledge": True,
        "evidence_tool:logs": True, "evidence_tool:metrics": True,
        "report_names_input_alert": True, "other_alert_not_main_subject": True,
    }


def test_aiops_demo_disk_pressure_run_fails_without_report_or_evidence():
    result = evaluate_aiops(*_demo("demo-aiops-disk-pressure"))
    assert result["verdict"] == "FAIL"
    checks = _checks(result)
    assert checks["final_report_present"] is False
    assert checks["evidence_tool:metrics"] is False  # query_metrics was called, but failed
    assert checks["report_names_input_alert"] is False
    detail = {c["name"]: c["detail"] for c in result["checks"]}
    assert detail["final_report_present"] == "no final report"


ALERT = {"alertname": "HighErrorRate", "service": "payment-api",
         "other_active_alerts": ["DiskPressure node-7", {"alertname": "CertificateExpiry",
                                                         "service": "api-gateway"}]}
ALL_TOOLS = [("knowledge_search", "completed"), ("query_logs", "completed"),
             ("query_metrics", "completed")]


def test_aiops_report_about_another_active_alert_fails():
    report = ("## DiskPressure on node-7\n\nThe DiskPressure alert is caused by log rotation; "
              "DiskPressure clears after cleanup. HighErrorRate is a side effect.")
    result = evaluate_aiops(report, ALERT, ALL_TOOLS)
    checks = _checks(result)
    assert checks["report_names_input_alert"] is True
    assert checks["other_alert_not_main_subject"] is False
    assert result["verdict"] == "FAIL"
    detail = next(c["detail"] for c in result["checks"]
                  if c["name"] == "other_alert_not_main_subject")
    assert "DiskPressure node-7" in detail and "in the title" in detail


def test_aiops_other_alert_mentioned_in_passing_is_fine():
    report = ("# HighErrorRate on payment-api\n\npayment-api pool exhausted. "
              "DiskPressure on node-7 is unrelated.")
    result = evaluate_aiops(report, ALERT, ALL_TOOLS)
    assert result["verdict"] == "PASS"


def test_aiops_other_alert_named_more_often_than_the_input_is_main_subject():
    report = ("Incident summary\n\nCertificateExpiry: certificateexpiry on the gateway; "
              "CertificateExpiry renewal failed. Also HighErrorRate.")
    result = evaluate_aiops(report, ALERT, ALL_TOOLS)
    assert _checks(result)["other_alert_not_main_subject"] is False


def test_aiops_report_not_naming_the_alert_fails():
    result = evaluate_aiops("Everything is fine.", ALERT, ALL_TOOLS)
    assert _checks(result)["report_names_input_alert"] is False
    assert result["verdict"] == "FAIL"


def test_aiops_alert_identifiers_must_be_whole_tokens():
    """'payment-api' inside 'payment-api-v2' names another service."""
    alert = {"alertname": "HighLatency", "service": "payment-api"}
    result = evaluate_aiops("payment-api-v2 is slow", alert, ALL_TOOLS)
    assert _checks(result)["report_names_input_alert"] is False


def test_aiops_alertmanager_labels_are_read_when_top_level_is_empty():
    alert = {"labels": {"alertname": "KubePodCrashLooping", "pod": "checkout-7d9"}}
    result = evaluate_aiops("checkout-7d9 crash loops: OOM", alert, ALL_TOOLS)
    assert _checks(result)["report_names_input_alert"] is True


def test_aiops_missing_evidence_group_warns():
    result = evaluate_aiops("## HighErrorRate on payment-api", ALERT, ALL_TOOLS[:2])
    assert _checks(result)["evidence_tool:metrics"] is False
    assert result["verdict"] == "WARN"


def test_aiops_no_evidence_tool_at_all_fails():
    result = evaluate_aiops("## HighErrorRate on payment-api", ALERT, [("node_exec", "completed")])
    assert result["verdict"] == "FAIL"


@pytest.mark.parametrize("report", [None, "", "   \n"])
def test_aiops_missing_or_blank_report_fails(report):
    result = evaluate_aiops(report, None, ALL_TOOLS)
    assert _checks(result)["final_report_present"] is False
    assert result["verdict"] == "FAIL"


def test_aiops_query_mode_has_no_payload_checks():
    result = evaluate_aiops("Pool exhausted.", None, ALL_TOOLS)
    assert result["mode"] == "query"
    assert set(_checks(result)) == {"final_report_present", "evidence_tool:knowledge",
                                    "evidence_tool:logs", "evidence_tool:metrics"}
    assert result["verdict"] == "PASS"


def test_aiops_custom_tool_names_replace_the_defaults():
    custom = {"runbooks": ["Confluence_Search"], "traces": ["jaeger"]}
    result = evaluate_aiops("ok", None, [("confluence_search", "completed")], custom)
    assert _checks(result) == {"final_report_present": True, "evidence_tool:runbooks": True,
                               "evidence_tool:traces": False}
    assert result["verdict"] == "WARN"


@pytest.mark.parametrize("bad", [None, {}, "logs", {"logs": "query_logs"}, {1: ["x"]}])
def test_aiops_malformed_tool_settings_fall_back_to_defaults(bad):
    assert evidence_tool_groups(bad, DEFAULT_EVIDENCE_TOOLS) == {
        g: tuple(names) for g, names in DEFAULT_EVIDENCE_TOOLS.items()}


@pytest.mark.parametrize("label", ["service", "app", "deployment", "job", "pod", "node", "instance",
                                   "namespace", "cluster"])
def test_aiops_each_subject_label_names_the_input_alert(label):
    """Module doc: the report names the input alert by its alertname or the value of one of
    its subject labels (service, app, deployment, job, pod, node, instance, namespace,
    cluster)."""
    alert = {label: "checkout-zone-3"}
    result = evaluate_aiops("checkout-zone-3 is out of memory", alert, ALL_TOOLS)
    assert _checks(result)["report_names_input_alert"] is True
    assert result["verdict"] == "PASS"
    unnamed = evaluate_aiops("something else is out of memory", alert, ALL_TOOLS)
    detail = {c["name"]: c["detail"] for c in unnamed["checks"]}
    assert detail["report_names_input_alert"] == "report names neither checkout-zone-3 nor its subject"


def test_aiops_an_identifier_after_a_blank_is_a_whole_token_even_after_a_word():
    # "a payment-api": the character before the match is a blank, so it counts, whatever
    # stands before the blank.
    result = evaluate_aiops("a payment-api", {"service": "payment-api"}, ALL_TOOLS)
    assert _checks(result)["report_names_input_alert"] is True


def test_aiops_main_subject_detail_counts_each_mention_once():
    """The detail names how often each was mentioned: DiskPressure twice, the input alert
    once (the title, the first line, names neither)."""
    report = "Summary\nHighErrorRate: DiskPressure and DiskPressure again"
    alert = {"alertname": "HighErrorRate", "other_active_alerts": ["DiskPressure node-7"]}
    result = evaluate_aiops(report, alert, ALL_TOOLS)
    detail = {c["name"]: c["detail"] for c in result["checks"]}
    assert detail["other_alert_not_main_subject"] == (
        "another active alert is the main subject: DiskPressure node-7 (mentioned 2x vs 1x)")


def test_aiops_overlapping_mentions_of_a_symbol_name_each_count():
    # "==" occurs in "===" at 0 and at 1, each a whole token (no letter, digit, _ or - next
    # to it): two mentions against one of the input alert.
    alert = {"alertname": "HighErrorRate", "other_active_alerts": ["== x"]}
    result = evaluate_aiops("Summary\nHighErrorRate ===", alert, ALL_TOOLS)
    detail = {c["name"]: c["detail"] for c in result["checks"]}
    assert detail["other_alert_not_main_subject"] == (
        "another active alert is the main subject: == x (mentioned 2x vs 1x)")


def test_aiops_top_level_identifiers_win_over_the_labels_object():
    """Module doc of ``_input_identifiers``: the ``labels`` object is read only when the top
    level has no name; a payload with neither has nothing to name."""
    alert = {"alertname": "HighErrorRate", "labels": {"alertname": "SomethingElse"}}
    assert _checks(evaluate_aiops("HighErrorRate again", alert, ALL_TOOLS))["report_names_input_alert"] is True
    bare = evaluate_aiops("HighErrorRate again", {"summary": "errors"}, ALL_TOOLS)
    detail = {c["name"]: c["detail"] for c in bare["checks"]}
    assert detail["report_names_input_alert"] == "the alert payload has no alertname or subject label"
    assert bare["verdict"] == "FAIL"


def test_aiops_other_alerts_as_label_objects_and_their_subject():
    """An other alert given as an object is named by its ``alertname`` (or its ``labels``'
    one) and shown with its most specific subject label (node before cluster); an object
    without a name, or with a blank one, is no alert."""
    alert = {"alertname": "HighErrorRate", "other_active_alerts": [
        {"labels": {"alertname": "DiskPressure"}, "cluster": "c1", "node": "node-7"},
        {"service": "nameless"}, {"alertname": "   "}, "  "]}
    report = "Summary\nHighErrorRate: DiskPressure and DiskPressure again"
    result = evaluate_aiops(report, alert, ALL_TOOLS)
    detail = {c["name"]: c["detail"] for c in result["checks"]}
    assert detail["other_alert_not_main_subject"] == (
        "another active alert is the main subject: DiskPressure node-7 (mentioned 2x vs 1x)")


def test_aiops_a_report_naming_nothing_says_which_alert_it_missed_as_written():
    alert = {"alertname": "HighErrorRate", "service": "Payment-API"}
    result = evaluate_aiops("all quiet", alert, ALL_TOOLS)
    detail = {c["name"]: c["detail"] for c in result["checks"]}
    assert detail["report_names_input_alert"] == "report names neither HighErrorRate nor its subject"
    named = evaluate_aiops("payment-api degraded", alert, ALL_TOOLS)
    assert {c["name"]: c["detail"] for c in named["checks"]}["report_names_input_alert"] == (
        "report names Payment-API")


def test_aiops_a_blank_report_in_payload_mode_fails_both_payload_checks():
    result = evaluate_aiops("  \n ", ALERT, ALL_TOOLS)
    payload = [c for c in result["checks"] if c["name"] in (
        "report_names_input_alert", "other_alert_not_main_subject")]
    assert payload == [
        {"name": "report_names_input_alert", "passed": False, "detail": "no report to check"},
        {"name": "other_alert_not_main_subject", "passed": False, "detail": "no report to check"}]
    assert result["verdict"] == "FAIL"


def test_aiops_the_title_is_the_first_line_that_is_not_blank():
    # DiskPressure heads the report (after blank lines) and is named once, HighErrorRate twice
    # below it: the title decides, the other alert is the main subject.
    report = "\n   \nDiskPressure\nHighErrorRate HighErrorRate"
    alert = {"alertname": "HighErrorRate", "other_active_alerts": ["DiskPressure node-7"]}
    result = evaluate_aiops(report, alert, ALL_TOOLS)
    detail = {c["name"]: c["detail"] for c in result["checks"]}
    assert detail["other_alert_not_main_subject"] == (
        "another active alert is the main subject: DiskPressure node-7 (mentioned 1x vs 2x, in the title)")


def test_aiops_every_identifier_the_report_names_is_listed():
    alert = {"alertname": "HighErrorRate", "service": "payment-api"}
    result = evaluate_aiops("HighErrorRate on payment-api", alert, ALL_TOOLS)
    assert {c["name"]: c["detail"] for c in result["checks"]}["report_names_input_alert"] == (
        "report names HighErrorRate, payment-api")


def test_aiops_an_other_alert_in_passing_under_a_neutral_title_is_fine():
    # The title ("Summary") names neither alert; DiskPressure is mentioned once, the input
    # alert twice: the report stays on the input alert.
    report = "Summary\nHighErrorRate again: HighErrorRate; DiskPressure on node-7 is unrelated"
    alert = {"alertname": "HighErrorRate", "other_active_alerts": ["DiskPressure node-7"]}
    result = evaluate_aiops(report, alert, ALL_TOOLS)
    detail = {c["name"]: c["detail"] for c in result["checks"]}
    assert detail["other_alert_not_main_subject"] == "the report stays on the input alert"
    assert result["verdict"] == "PASS"


def test_aiops_as_many_mentions_as_the_input_alert_is_not_main_subject():
    alert = {"alertname": "HighErrorRate", "other_active_alerts": ["DiskPressure node-7"]}
    result = evaluate_aiops("Summary\nHighErrorRate and DiskPressure", alert, ALL_TOOLS)
    assert _checks(result)["other_alert_not_main_subject"] is True


def test_aiops_every_dominant_other_alert_is_listed():
    alert = {"alertname": "HighErrorRate", "other_active_alerts": ["DiskPressure node-7", "CertExpiry gw"]}
    result = evaluate_aiops("Summary\nDiskPressure DiskPressure CertExpiry CertExpiry HighErrorRate",
                            alert, ALL_TOOLS)
    detail = {c["name"]: c["detail"] for c in result["checks"]}
    assert detail["other_alert_not_main_subject"] == (
        "another active alert is the main subject: DiskPressure node-7 (mentioned 2x vs 1x); "
        "CertExpiry gw (mentioned 2x vs 1x)")


def test_aiops_evidence_details_count_successful_calls_and_name_the_missing_tools():
    calls = [("Query_Logs", "completed"), ("search_logs", "completed"), ("query_logs", "failed"),
             ("knowledge_search", "completed"), (None, "completed")]
    result = evaluate_aiops("## report", None, calls)
    detail = {c["name"]: c["detail"] for c in result["checks"]}
    assert detail["evidence_tool:logs"] == "successful logs calls: 2"
    assert detail["evidence_tool:knowledge"] == "successful knowledge calls: 1"
    assert detail["evidence_tool:metrics"] == (
        "no successful call of query_metrics, prometheus_query, metrics_query, promql")
    assert detail["final_report_present"] == "report of 9 characters"  # "## report"
    assert result["verdict"] == "WARN"


def test_aiops_a_call_without_a_tool_name_counts_for_no_group():
    result = evaluate_aiops("ok", None, [(None, "completed")], {"g": ["xx", "none"]})
    assert _checks(result)["evidence_tool:g"] is False
    empty = evaluate_aiops("ok", None, [], {"g": []})
    assert {c["name"]: c["detail"] for c in empty["checks"]}["evidence_tool:g"] == (
        "no successful call of (no tools configured)")


def test_aiops_an_empty_report_is_named_empty_not_missing():
    result = evaluate_aiops("", None, ALL_TOOLS)
    assert {c["name"]: c["detail"] for c in result["checks"]}["final_report_present"] == (
        "the final report is empty")


@pytest.mark.parametrize("alert", [{}, None, "HighErrorRate", ["HighErrorRate"]])
def test_aiops_only_a_non_empty_alert_object_is_payload_mode(alert):
    result = evaluate_aiops("HighErrorRate", alert, ALL_TOOLS)
    assert result == {"source": "rule", "verdict": "PASS", "mode": "query", "checks": result["checks"]}
    assert len(result["checks"]) == 4


def test_aiops_an_other_alert_object_without_a_subject_is_shown_by_its_name_alone():
    alert = {"alertname": "HighErrorRate", "other_active_alerts": [{"alertname": "CertExpiry", "team": 7}]}
    result = evaluate_aiops("Summary\nCertExpiry CertExpiry HighErrorRate", alert, ALL_TOOLS)
    detail = {c["name"]: c["detail"] for c in result["checks"]}
    assert detail["other_alert_not_main_subject"] == (
        "another active alert is the main subject: CertExpiry (mentioned 2x vs 1x)")
