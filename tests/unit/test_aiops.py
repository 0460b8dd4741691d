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
