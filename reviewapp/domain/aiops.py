"""Deterministic checks of an AIOps run: ``aiops_rule_evaluation`` (SPEC 5.3, S001 §6).

A light rule check, not a verifier. The checks, each ``{name, passed, detail}``:

* ``final_report_present`` — the run has a final report whose text is not blank.
* ``evidence_tool:<group>`` — one per evidence group (default groups: ``knowledge``,
  ``logs``, ``metrics``): at least one call of a tool named in the group *completed*. The
  tool names come from config ``AIOPS_EVIDENCE_TOOLS`` or the workspace's
  ``settings["aiops_evidence_tools"]`` (``{group: [tool names]}``); names match
  case-insensitively.
* payload mode only (the run was started by an alert, ``run.alert`` is set):
  ``report_names_input_alert`` — the report names the input alert: its ``alertname`` or
  the value of one of its subject labels (``SUBJECT_LABELS``: service, node, ...) occurs
  in the report (case-insensitive).
  ``other_alert_not_main_subject`` — no other active alert (``alert.other_active_alerts``,
  strings like ``"DiskPressure node-7"`` or label objects) is the main subject of the
  report. The heuristic, deterministic and documented because no rule can be perfect:
  an other alert is the main subject when the report's title (its first non-blank line)
  names it but not the input alert, or when its ``alertname`` occurs more often in the
  report than the input alert's identifiers together. An other alert mentioned in
  passing ("DiskPressure on node-7 is unrelated") does not fail the check.

Overall verdict (the rule):

* ``FAIL`` when a *required* check fails — ``final_report_present`` and, in payload mode,
  ``report_names_input_alert`` and ``other_alert_not_main_subject`` — or when no evidence
  group was called successfully at all;
* ``WARN`` when every required check passes but some evidence group was not called
  successfully;
* ``PASS`` when every check passes.

Output: ``{"source": "rule", "verdict": "PASS"|"WARN"|"FAIL", "mode": "payload"|"query",
"checks": [{name, passed, detail}]}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# The groups the product knows about; config and workspace settings may rename the tools.
DEFAULT_EVIDENCE_TOOLS: Mapping[str, Sequence[str]] = {
    "knowledge": ("knowledge_search", "search_knowledge", "lookup_knowledge", "kb_search",
                  "retrieve_docs"),
    "logs": ("query_logs", "search_logs", "logs_query", "loki_query"),
    "metrics": ("query_metrics", "prometheus_query", "metrics_query", "promql"),
}
# Alert labels that name what the alert is about, most specific first.
SUBJECT_LABELS = ("service", "app", "deployment", "job", "pod", "node", "instance",
                  "namespace", "cluster")

REPORT_CHECK = "final_report_present"
NAMES_ALERT_CHECK = "report_names_input_alert"
MAIN_SUBJECT_CHECK = "other_alert_not_main_subject"
EVIDENCE_PREFIX = "evidence_tool:"


def evidence_tool_groups(
    value: Any, default: Mapping[str, Sequence[str]]
) -> dict[str, tuple[str, ...]]:
    """A validated ``{group: (tool names)}``: ``value`` when it is a non-empty mapping of
    group name -> list of strings, else ``default``. Names are compared casefolded."""
    source = value if isinstance(value, Mapping) and value else default
    groups: dict[str, tuple[str, ...]] = {}
    for group, names in source.items():
        if not isinstance(group, str) or isinstance(names, str) or not isinstance(names, Iterable):
            return {g: tuple(n.casefold() for n in ns) for g, ns in default.items()}
        groups[group] = tuple(n.casefold() for n in names if isinstance(n, str))
    return groups


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch in "_-"


def _count(haystack: str, needle: str) -> int:
    """Occurrences of ``needle`` in ``haystack`` as a whole token: not preceded or followed
    by a letter, digit, ``_`` or ``-`` (both already normalised). ``payment-api`` is not
    found in ``payment-api-v2``."""
    if not needle:
        return 0
    count, start, size = 0, 0, len(needle)
    while (pos := haystack.find(needle, start)) >= 0:
        end = pos + size
        if (pos == 0 or not _is_word(haystack[pos - 1])) and (
                end == len(haystack) or not _is_word(haystack[end])):
            count += 1
        start = pos + 1
    return count


def _input_identifiers(alert: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(as written, normalised) of the alert's name and subject labels; a payload whose
    top level has none is read from its ``labels`` object (Alertmanager's shape)."""
    names = []
    for key in ("alertname", *SUBJECT_LABELS):
        value = alert.get(key)
        if isinstance(value, str) and value.strip():
            names.append((value.strip(), _norm(value)))
    labels = alert.get("labels")
    if isinstance(labels, Mapping) and not names:
        return _input_identifiers(labels)
    return names


def _other_alerts(alert: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label for the detail, normalised alertname) of each other active alert."""
    raw = alert.get("other_active_alerts")
    if not isinstance(raw, list):
        return []
    out = []
    for item in raw:
        if isinstance(item, str) and item.strip():
            out.append((item.strip(), _norm(item.split()[0])))
        elif isinstance(item, Mapping):
            name = item.get("alertname") or (item.get("labels") or {}).get("alertname")
            if isinstance(name, str) and name.strip():
                subject = next(
                    (item[k] for k in SUBJECT_LABELS if isinstance(item.get(k), str)), "")
                out.append((f"{name} {subject}".strip(), _norm(name)))
    return out


def _check(name: str, passed: bool, detail: str) -> dict[str, Any]:
    return {"name": name, "passed": passed, "detail": detail}


def _payload_checks(report: str, alert: Mapping[str, Any]) -> list[dict[str, Any]]:
    pairs = _input_identifiers(alert)
    label = pairs[0][0] if pairs else "the input alert"
    identifiers = [norm for _, norm in pairs]
    if not report.strip():
        return [_check(NAMES_ALERT_CHECK, False, "no report to check"),
                _check(MAIN_SUBJECT_CHECK, False, "no report to check")]
    text = _norm(report)
    title = next((_norm(line) for line in report.splitlines() if line.strip()), "")
    input_mentions = sum(_count(text, ident) for ident in identifiers)
    named = [shown for shown, norm in pairs if _count(text, norm)]
    checks = [_check(
        NAMES_ALERT_CHECK, bool(named),
        f"report names {', '.join(named)}" if named else
        (f"report names neither {label} nor its subject"
         if identifiers else "the alert payload has no alertname or subject label"),
    )]
    title_names_input = any(_count(title, ident) for ident in identifiers)
    dominant = []
    for shown, other in _other_alerts(alert):
        if other in identifiers:
            continue  # the same alert name firing elsewhere is not "another" alert here
        mentions = _count(text, other)
        in_title = _count(title, other) > 0
        if (in_title and not title_names_input) or mentions > input_mentions:
            dominant.append(f"{shown} (mentioned {mentions}x vs {input_mentions}x"
                            f"{', in the title' if in_title else ''})")
    checks.append(_check(
        MAIN_SUBJECT_CHECK, not dominant,
        f"another active alert is the main subject: {'; '.join(dominant)}" if dominant
        else "the report stays on the input alert",
    ))
    return checks


def evaluate_aiops(
    report: str | None,
    alert: Mapping[str, Any] | None,
    calls: Iterable[tuple[str, str]],
    evidence_tools: Mapping[str, Sequence[str]] = DEFAULT_EVIDENCE_TOOLS,
) -> dict[str, Any]:
    """The ``aiops_rule_evaluation`` of one AIOps run (rules and verdict: module docstring).

    ``report``: the final report's text or None; ``alert``: the input alert payload or
    None (then not payload mode); ``calls``: (tool_name, status) of every tool call;
    ``evidence_tools``: ``{group: [tool names]}`` (see ``evidence_tool_groups``).
    """
    groups = evidence_tool_groups(evidence_tools, DEFAULT_EVIDENCE_TOOLS)
    text = report if isinstance(report, str) else ""
    checks = [_check(REPORT_CHECK, bool(text.strip()),
                     f"report of {len(text.strip())} characters" if text.strip()
                     else "no final report" if report is None else "the final report is empty")]
    called: dict[str, int] = {}
    for tool_name, status in calls:
        if status == "completed":
            key = (tool_name or "").casefold()
            called[key] = called.get(key, 0) + 1
    evidence_passed = []
    for group, names in groups.items():
        hits = sum(called.get(name, 0) for name in names)
        evidence_passed.append(hits > 0)
        checks.append(_check(
            EVIDENCE_PREFIX + group, hits > 0,
            f"successful {group} calls: {hits}" if hits else
            f"no successful call of {', '.join(names) or '(no tools configured)'}",
        ))
    payload = isinstance(alert, Mapping) and bool(alert)
    if payload:
        assert isinstance(alert, Mapping)
        checks.extend(_payload_checks(text, alert))
    required = {REPORT_CHECK, NAMES_ALERT_CHECK, MAIN_SUBJECT_CHECK}
    if any(not c["passed"] for c in checks if c["name"] in required) or (
        evidence_passed and not any(evidence_passed)
    ):
        verdict = "FAIL"
    elif all(c["passed"] for c in checks):
        verdict = "PASS"
    else:
        verdict = "WARN"
    return {"source": "rule", "verdict": verdict, "mode": "payload" if payload else "query",
            "checks": checks}
