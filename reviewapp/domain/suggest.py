"""Deterministic proposals of fault category, error code and service from a run (SPEC 7).

A lead editing a case (or triaging a bad run) sees these as *proposals* to accept or
change; nothing is written by them. Same input, same output: no LLM, no randomness, no
clock. Pure: stdlib only.

Inputs (``RunText``), in **source priority** order — structured data outranks prose and
the agent's own answer ranks last, because it may be wrong:

1. ``alert``          the alert payload of an AIOps run (a JSON object), without the keys
                      that list *other* alerts (``OTHER_ALERT_KEYS``): they are context,
                      never the subject of the diagnosis (SPEC 5.3)
2. ``tool_arguments`` the arguments of the run's tool calls (JSON values)
3. ``tool_errors``    the error texts of its failed tool calls
4. ``query``          the question / alert title
5. ``answer``         the agent's answer (and report)

Rules, each named (the name is shown next to the proposal):

* **service**
  - ``service_key``: the first string value under a service-like key
    (``SERVICE_KEYS``: ``service``, ``service_name``, ``app``, ``application``,
    ``deployment``, ``job``, ``container``), searched depth-first in ``alert``, then in
    each tool call's ``arguments``; it must look like a name (``NAME_RE``).
  - ``service_name_in_text``: otherwise, a hyphenated or underscored name ending in a
    service-like word (``checkout-service``, ``payment-api``, ``billing_exporter``) in the
    text sources, by source priority; within one source the most frequent, ties to the
    first seen.
* **error_code** — the first rule that matches wins; within a rule, source priority,
  then frequency, then first seen:
  1. ``error_code_key``: a value under ``error_code`` / ``errorCode`` / ``code`` /
     ``errno`` / ``reason`` in the alert or tool arguments;
  2. ``vendor_code``: ``ORA-00942``, ``ERR-1234``, ``E1042`` style codes;
  3. ``errno_name``: ``ECONNREFUSED``, ``ETIMEDOUT``, ``ENOSPC`` ...;
  4. ``kubernetes_reason``: ``OOMKilled``, ``CrashLoopBackOff``, ``ImagePullBackOff`` ...;
  5. ``exception_name``: a CamelCase word ending in ``Error``, ``Exception``,
     ``Timeout``, ``Denied``, ``Refused``, ``Unavailable`` or ``Exceeded``
     (``PoolTimeout``, ``PermissionDenied``);
  6. ``http_status``: a 4xx / 5xx status *in context* ("HTTP 503", "status 502",
     "502s", "503 Service Unavailable", "403 permission denied"), proposed as
     ``HTTP_503``. Bare three-digit numbers are ignored ("512 MiB" is not a status).
* **fault_category** (``category_keywords``): every category of ``CATEGORY_KEYWORDS``
  scores ``SOURCE_WEIGHTS[source]`` per distinct keyword found in that source; the
  highest score wins, ties go to the category listed first; no keyword at all proposes
  ``GENERAL`` (rule ``default``). A keyword matches at the start of a word (``deploy`` in
  "deployed", not ``acl`` in "oracle"); a number keyword (``502``) only as a whole number
  (not in "5020 ms").

Redacted secrets are no evidence: before any text rule reads a source, each redaction
marker (``[redacted]``, with the ``~digest`` a redacted key carries) is taken out
together with the label the redactor left in front of it (``password=``,
``"DB_PASSWORD": "``, ``<Password>`` ... ``</Password>``, ``--password``), so
``password=[redacted]`` proposes no AUTH: it says a secret was there, not that
authentication failed (``REDACTED_MARKER_RE``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .fault_categories import AGENT, CODE_RE, DEFAULT_CATEGORY, FAULT_CATEGORIES, INCIDENT
from .redaction import REDACTED

SOURCES: tuple[str, ...] = ("alert", "tool_arguments", "tool_errors", "query", "answer")

SOURCE_LABELS: dict[str, str] = {
    "alert": "alert payload",
    "tool_arguments": "tool-call arguments",
    "tool_errors": "tool-call errors",
    "query": "query",
    "answer": "answer",
}

# The one fault-category vocabulary (domain/fault_categories.py); the proposals below
# are codes of it (a test checks), grouped as the two pages used to list them.
CASE_CATEGORIES: tuple[str, ...] = tuple(c.code for c in FAULT_CATEGORIES if c.group == INCIDENT)
TRIAGE_CATEGORIES: tuple[str, ...] = tuple(c.code for c in FAULT_CATEGORIES if c.group == AGENT)

CATEGORY_CODE_RE = CODE_RE

SERVICE_KEYS: tuple[str, ...] = (
    "service", "service_name", "serviceName", "app", "application", "deployment", "job",
    "container",
)
ERROR_CODE_KEYS: tuple[str, ...] = ("error_code", "errorCode", "code", "errno", "reason")
OTHER_ALERT_KEYS: frozenset[str] = frozenset({
    "other_active_alerts", "other_alerts", "active_alerts", "related_alerts", "firing_alerts",
    "otherActiveAlerts", "relatedAlerts",
})
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,119}$")

# What the redactor leaves where a secret was: the marker (with the digest of a redacted
# key) and an XML closing tag after it; in front of it, a label of ``LABEL_CHARS`` (at
# most 80) and ``LABEL_SEPARATORS`` (at most 8). Walked by hand from each marker, so the
# cost stays linear in the text (a regular expression would retry every word start).
REDACTED_MARKER_RE = re.compile(re.escape(REDACTED) + r"(?:~[0-9a-f]{16})?(?:</[\w.:\-]{1,80}>)?")
LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
LABEL_SEPARATORS = frozenset(" \t\r\n\"':=<>")

SOURCE_WEIGHTS: dict[str, int] = {
    "alert": 3, "tool_arguments": 1, "tool_errors": 3, "query": 2, "answer": 1,
}

# Ordered: a tie goes to the category listed first.
CATEGORY_KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("RESOURCE_EXHAUSTION", (
        "oomkilled", "out of memory", "oom", "memory limit", "disk pressure", "diskpressure",
        "disk full", "no space left", "enospc", "enomem", "cpu throttl", "pool exhaust",
        "exhausted", "too many open files", "quota exceeded",
    )),
    ("DATABASE", (
        "database", "postgres", "postgresql", "mysql", "slow query", "deadlock",
        "replication lag", "failover", "lock wait", "sql", "慢查询", "数据库",
    )),
    ("NETWORK", (
        "timed out", "timeout", "connection refused", "connection reset", "dns",
        "unreachable", "econnrefused", "etimedout", "packet loss", "tls handshake",
        "gateway timeout", "504",
    )),
    ("DEPLOYMENT", (
        "deploy", "deployment", "rollout", "release", "rollback", "roll back", "image tag",
        "发布",
    )),
    ("DEPENDENCY", (
        "upstream", "third-party", "service unavailable", "dependency", "external api",
        "bad gateway", "502", "503",
    )),
    ("AUTH", (
        "permission denied", "unauthorized", "forbidden", "401", "403", "credential",
        "password", "certificate", "token expired", "acl",
    )),
    ("CONFIGURATION", (
        "misconfigur", "config change", "configuration", "feature flag", "env var",
        "配置",
    )),
    ("CAPACITY", (
        "latency", "p99", "saturation", "throttling", "rate limit", "high load", "延迟",
    )),
)

_SERVICE_SUFFIXES = (
    "service", "svc", "api", "gateway", "server", "worker", "exporter", "db", "cache",
    "proxy", "frontend", "backend", "queue", "cluster",
)
SERVICE_TEXT_RE = re.compile(
    r"(?<![\w.\-/])([a-z][a-z0-9]*(?:[-_][a-z0-9]+)*[-_](?:"
    + "|".join(_SERVICE_SUFFIXES) + r"))(?![\w\-])"
)

# (rule name, compiled pattern, how to turn the match into the proposed code)
_ERROR_TEXT_RULES: tuple[tuple[str, re.Pattern[str], Any], ...] = (
    ("vendor_code", re.compile(r"\b([A-Z]{2,5}-\d{3,6}|E\d{3,5})\b"), lambda m: m.group(1)),
    ("errno_name", re.compile(
        r"\b(E(?:CONNREFUSED|CONNRESET|CONNABORTED|TIMEDOUT|HOSTUNREACH|NETUNREACH|NOENT|"
        r"ACCES|PERM|PIPE|ADDRINUSE|NOSPC|NOMEM|MFILE|AGAIN))\b"), lambda m: m.group(1)),
    ("kubernetes_reason", re.compile(
        r"\b(OOMKilled|CrashLoopBackOff|ImagePullBackOff|ErrImagePull|Evicted|"
        r"DeadlineExceeded|CreateContainerConfigError|NodeNotReady)\b"), lambda m: m.group(1)),
    ("exception_name", re.compile(
        r"\b((?:[A-Z][a-z0-9]+){1,5}(?:Error|Exception|Timeout|Denied|Refused|Unavailable|"
        r"Exceeded))\b"), lambda m: m.group(1)),
    ("http_status", re.compile(
        r"(?i:\bhttp[ /:]?|\bstatus(?: code)?[ :=]*|\bcode[ :=]+)([45]\d\d)\b"
        r"|\b([45]\d\d)(?:s\b|\s+(?i:bad gateway|service unavailable|gateway timeout|"
        r"internal server error|not found|forbidden|unauthorized|too many requests|"
        r"permission denied|error)\b)"),
     lambda m: "HTTP_" + (m.group(1) or m.group(2))),
)


@dataclass(frozen=True)
class RunText:
    """What the rules read from a run. All fields optional; ``tool_arguments`` holds each
    call's ``arguments`` JSON value, ``tool_errors`` each failed call's error text."""

    query: str = ""
    answer: str = ""
    alert: Mapping[str, Any] | None = None
    tool_arguments: Sequence[Any] = field(default_factory=tuple)
    tool_errors: Sequence[str] = field(default_factory=tuple)


@dataclass(frozen=True)
class Suggestion:
    """One proposal: ``value`` for ``field``, found by ``rule`` in ``source`` (one of
    ``SOURCES``, or ``""`` for the default), ``matched`` the text that triggered it."""

    field: str
    value: str
    rule: str
    source: str
    matched: str

    @property
    def source_label(self) -> str:
        """Human wording of ``source`` ("alert payload", ...)."""
        return SOURCE_LABELS.get(self.source, "default")


@dataclass(frozen=True)
class Suggestions:
    """The three proposals; ``error_code`` and ``service`` are ``None`` when nothing matched."""

    fault_category: Suggestion
    error_code: Suggestion | None
    service: Suggestion | None

    def as_dict(self) -> dict[str, str | None]:
        """``{field: proposed value or None}``."""
        return {
            "fault_category": self.fault_category.value,
            "error_code": self.error_code.value if self.error_code else None,
            "service": self.service.value if self.service else None,
        }


def suggest(run: RunText) -> Suggestions:
    """Propose fault category, error code and service for ``run`` (rules in the module doc)."""
    return Suggestions(
        fault_category=suggest_fault_category(run),
        error_code=suggest_error_code(run),
        service=suggest_service(run),
    )


def _walk_keys(value: Any, keys: Sequence[str]) -> Iterator[tuple[str, str]]:
    """Depth-first (key, string value) pairs of ``value`` whose key is in ``keys``."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            if key in keys and isinstance(inner, (str, int)) and not isinstance(inner, bool):
                yield key, str(inner)
        for inner in value.values():
            if isinstance(inner, (Mapping, list, tuple)):
                yield from _walk_keys(inner, keys)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            yield from _walk_keys(inner, keys)


def _alert_subject(alert: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The alert payload minus the lists of other alerts."""
    if not alert:
        return None
    return {k: v for k, v in alert.items() if k not in OTHER_ALERT_KEYS}


def _structured_sources(run: RunText) -> Iterator[tuple[str, Any]]:
    alert = _alert_subject(run.alert)
    if alert:
        yield "alert", alert
    for arguments in run.tool_arguments:
        yield "tool_arguments", arguments


def _text_of(value: Any) -> str:
    """All string leaves of a JSON value, joined by newlines (keys included)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "\n".join(f"{k}\n{_text_of(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return "\n".join(_text_of(v) for v in value)
    if value is None or isinstance(value, bool):
        return ""
    return str(value)


def _without_redactions(text: str) -> str:
    """``text`` with each redacted secret and its label replaced by a space (module doc)."""
    if REDACTED not in text:
        return text
    parts: list[str] = []
    done = 0
    for marker in REDACTED_MARKER_RE.finditer(text):
        start = marker.start()
        gap = start
        while gap > done and start - gap < 8 and text[gap - 1] in LABEL_SEPARATORS:
            gap -= 1
        label = gap
        while label > done and gap - label < 80 and text[label - 1] in LABEL_CHARS:
            label -= 1
        parts.append(text[done:label if label < gap else start])
        parts.append(" ")
        done = marker.end()
    parts.append(text[done:])
    return "".join(parts)


def _text_sources(run: RunText, include_structured: bool = True) -> list[tuple[str, str]]:
    """(source, text) in source priority, redacted secrets taken out (module doc)."""
    sources: list[tuple[str, str]] = []
    if include_structured:
        alert = _alert_subject(run.alert)
        sources.append(("alert", _text_of(alert) if alert else ""))
        sources.append(("tool_arguments", "\n".join(_text_of(a) for a in run.tool_arguments)))
    sources.append(("tool_errors", "\n".join(e for e in run.tool_errors if e)))
    sources.append(("query", run.query or ""))
    sources.append(("answer", run.answer or ""))
    return [(source, _without_redactions(text)) for source, text in sources]


def _most_frequent(found: list[str]) -> str:
    counts = Counter(found)
    best = max(counts.values())
    return next(v for v in found if counts[v] == best)  # ties: first seen


def suggest_service(run: RunText) -> Suggestion | None:
    """The ``service_key`` rule, else ``service_name_in_text``; ``None`` when neither matches."""
    for source, value in _structured_sources(run):
        for key in SERVICE_KEYS:
            for found_key, text in _walk_keys(value, (key,)):
                text = text.strip()
                if NAME_RE.match(text):
                    return Suggestion("service", text, "service_key", source, f"{found_key}={text}")
    for source, text in _text_sources(run):
        found = SERVICE_TEXT_RE.findall(text)
        if found:
            name = _most_frequent(found)
            return Suggestion("service", name, "service_name_in_text", source, name)
    return None


def suggest_error_code(run: RunText) -> Suggestion | None:
    """The first matching error-code rule (module doc); ``None`` when none matches."""
    for source, value in _structured_sources(run):
        for found_key, text in _walk_keys(value, ERROR_CODE_KEYS):
            text = text.strip()
            if text and len(text) <= 120 and NAME_RE.match(text):
                return Suggestion("error_code", text, "error_code_key", source,
                                  f"{found_key}={text}")
    sources = _text_sources(run)
    for rule, pattern, to_code in _ERROR_TEXT_RULES:
        for source, text in sources:
            matches = list(pattern.finditer(text))
            if matches:
                codes = [to_code(m) for m in matches]
                code = _most_frequent(codes)
                matched = next(m.group(0) for m, c in zip(matches, codes) if c == code)
                return Suggestion("error_code", code, rule, source, matched.strip())
    return None


def _keyword_in(keyword: str, text: str) -> bool:
    if not keyword.isascii():
        return keyword in text  # CJK has no word boundaries
    # A keyword is a word start ("deploy" matches "deployed"); a status number is a whole
    # number ("502" is not in "5020 ms").
    end = r"(?![0-9])" if keyword.isdigit() else ""
    return re.search(r"(?<![a-z0-9])" + re.escape(keyword) + end, text) is not None


def suggest_fault_category(run: RunText) -> Suggestion:
    """The ``category_keywords`` rule; ``GENERAL`` (rule ``default``) when no keyword is found."""
    lowered = [(source, text.lower()) for source, text in _text_sources(run)]
    best: tuple[int, str, str, str] | None = None  # (score, category, source, keyword)
    for category, keywords in CATEGORY_KEYWORDS:
        score = 0
        first: tuple[str, str] | None = None
        for source, text in lowered:
            for keyword in keywords:
                if _keyword_in(keyword, text):
                    score += SOURCE_WEIGHTS[source]
                    first = first or (source, keyword)
        if first and (best is None or score > best[0]):
            best = (score, category, first[0], first[1])
    if best is None:
        return Suggestion("fault_category", DEFAULT_CATEGORY, "default", "", "")
    return Suggestion("fault_category", best[1], "category_keywords", best[2], best[3])


@dataclass(frozen=True)
class RunFacts:
    """Facts of a run for the triage-category proposal: execution ``status``, tool-call
    counts, the names of its evidence-score factors, the verifier's verdict and the
    reviewers' reason codes on negative ratings (with repeats)."""

    status: str = "SUCCESS"
    tool_call_count: int = 0
    failed_tool_call_count: int = 0
    evidence_factors: Sequence[str] = ()
    verifier_verdict: str | None = None
    reasons: Sequence[str] = ()


# Ordered (name, predicate, category): the first predicate that holds wins.
_TRIAGE_RULES: tuple[tuple[str, Any, str], ...] = (
    ("reviewers_flag_unsafe", lambda f: "unsafe" in f.reasons, "UNSAFE_ADVICE"),
    ("no_tool_call", lambda f: f.tool_call_count == 0, "NO_EVIDENCE"),
    ("all_tool_calls_failed",
     lambda f: f.tool_call_count > 0 and f.failed_tool_call_count == f.tool_call_count,
     "TOOL_FAILURE"),
    ("retrieval_no_hit", lambda f: "retrieval_no_hit" in f.evidence_factors, "RETRIEVAL_MISS"),
    ("reviewers_flag_citations", lambda f: "citation" in f.reasons, "CITATION_PROBLEM"),
    ("verifier_rejected", lambda f: f.verifier_verdict == "REJECT", "UNGROUNDED_CLAIM"),
    ("reviewers_flag_incomplete", lambda f: "incomplete" in f.reasons, "INCOMPLETE_ANSWER"),
    ("reviewers_flag_incorrect", lambda f: "incorrect" in f.reasons, "WRONG_ROOT_CAUSE"),
    ("some_tool_calls_failed", lambda f: f.failed_tool_call_count > 0, "TOOL_FAILURE"),
)


# Why each triage rule proposed its category, in a lead's words (the rule's code stays
# in ``Suggestion.rule`` for tooltips; issue 17).
TRIAGE_RULE_REASONS: dict[str, str] = {
    "reviewers_flag_unsafe": "a reviewer marked the answer unsafe",
    "no_tool_call": "the agent called no tool",
    "all_tool_calls_failed": "every tool call failed",
    "retrieval_no_hit": "the knowledge lookups found nothing",
    "reviewers_flag_citations": "reviewers complained about the citations",
    "verifier_rejected": "the agent's verifier rejected the answer",
    "reviewers_flag_incomplete": "reviewers found the answer incomplete",
    "reviewers_flag_incorrect": "reviewers found the answer incorrect",
    "some_tool_calls_failed": "some tool calls failed",
}


def suggest_triage_category(facts: RunFacts) -> Suggestion:
    """Why a not-useful run was bad, by the first matching rule of ``_TRIAGE_RULES``
    (unsafe advice, no evidence, all tools failed, retrieval miss, citation complaints,
    verifier REJECT, incomplete, incorrect, some tools failed); ``GENERAL`` otherwise."""
    for name, predicate, category in _TRIAGE_RULES:
        if predicate(facts):
            return Suggestion("fault_category", category, name, "", TRIAGE_RULE_REASONS[name])
    return Suggestion("fault_category", DEFAULT_CATEGORY, "default", "", "")


def valid_category(code: str) -> bool:
    """True when ``code`` is an upper-case code (``CATEGORY_CODE_RE``): letters, digits, ``_``."""
    return bool(CATEGORY_CODE_RE.match(code))


# --------------------------------------------------------------------------- remediation

# What a report or answer calls its remediation, lower-case (a heading or a "Label:" line).
REMEDIATION_LABELS: frozenset[str] = frozenset({
    "remediation", "solution", "fix", "resolution", "mitigation", "workaround",
    "action", "actions", "action items", "next step", "next steps", "recommended action",
    "recommended actions", "recommendation", "recommendations", "suggested fix",
    "修复", "解决方案", "处理建议", "建议",
})


def _plain(line: str) -> str:
    """``line`` without emphasis markers and a leading list marker, stripped."""
    text = line.replace("**", "").replace("__", "").strip()
    if text[:2] in ("- ", "* ", "+ "):
        text = text[2:].strip()
    return text


def remediation(text: str) -> str:
    """The remediation an agent's answer / report states, for a new case's *solution*
    (SPEC 7), or ``""`` when it states none — never the root-cause sentence.

    Recognised, first match wins, in text order: a Markdown heading whose title is one
    of ``REMEDIATION_LABELS`` (``## Fix``: the lines up to the next heading), or a line
    ``Label: text`` / ``**Label:** text`` / ``**Label**`` with such a label (that text
    and the lines after it up to a blank line or a heading). Linear in ``len(text)``."""
    lines = (text or "").splitlines()
    for index, line in enumerate(lines):
        plain = _plain(line)
        if plain.startswith("#"):
            if plain.lstrip("#").strip().rstrip(":：").strip().lower() in REMEDIATION_LABELS:
                return _collect(lines, index + 1, stop_at_blank=False)
            continue
        head, sep, rest = plain.replace("：", ":").partition(":")
        bold_label = not sep and line.strip().startswith(("**", "__")) and plain.lower() in REMEDIATION_LABELS
        if (sep and head.strip().lower() in REMEDIATION_LABELS) or bold_label:
            first = [rest.strip()] if sep and rest.strip() else []
            return "\n".join([*first, _collect(lines, index + 1, stop_at_blank=True, started=bool(first))]).strip()
    return ""


def _collect(lines: Sequence[str], start: int, *, stop_at_blank: bool, started: bool = False) -> str:
    """Lines from ``start`` up to the next heading (and, with ``stop_at_blank``, the first
    blank line after some text), stripped as a block."""
    taken: list[str] = []
    for line in lines[start:]:
        if line.lstrip().startswith("#"):
            break
        if stop_at_blank and not line.strip():
            if started or taken:
                break
            continue
        taken.append(line.rstrip())
    return "\n".join(taken).strip()
