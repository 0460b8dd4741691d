"""Secret redaction, then JSON serialisation, then truncation (SPEC 4).

Order matters: redacting after the cut would let a secret that straddles the cut slip
through half-visible, so ``summarize`` redacts first and cuts last.

Two layers find secrets:

1. The span patterns below (stdlib ``re``). Each matches a secret's **whole** span, so
   nothing of it stays visible: provider API keys, cloud keys, bearer / basic
   credentials, JWTs, PEM private keys (a block cut before its END line is redacted to
   the end of the text), passwords in URLs and ``key=value`` / ``"key": "value"`` secrets.
   A string value stored under a secret-looking JSON key (``password``, ``api_key``,
   ``*_token`` ...) is redacted whole.
2. Optional ``detectors``: callables ``text -> iterable of secret values`` (the
   detect-secrets plugins, wired in ``services/secret_scan.py``), run on the output of
   layer 1; every occurrence of a value they return is replaced. They widen the net to
   shapes layer 1 does not know; they cannot be the only layer because they report
   values, not spans, and several report only part of a secret (see ``secret_scan``).

This module stays pure (standard library only); the library is injected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

REDACTED = "[redacted]"
SUMMARY_LIMIT = 2000  # characters

Detector = Callable[[str], Iterable[str]]

# Shortest value a detector may make us replace everywhere: replacing a 3-letter
# "password" (e.g. from a basic-auth URL) in every place it occurs would shred the text.
MIN_DETECTED_LENGTH = 8

# (triggers, pattern): a pattern runs only when one of its literal triggers is in the text
# (checked with ``in``, which is far cheaper than a regex scan); ``None`` = always run.
# Span patterns redact their whole match.
_SPAN_PATTERNS: tuple[tuple[tuple[str, ...] | None, re.Pattern[str]], ...] = tuple(
    (triggers, re.compile(p))
    for triggers, p in (
        # PEM private keys; a block cut before its END line is redacted to the end.
        (("PRIVATE KEY",), r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
                           r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"),
        (("PuTTY-User-Key-File",), r"PuTTY-User-Key-File-\d+:[\s\S]*?(?:Private-MAC: [0-9a-f]+|\Z)"),
        # JWT: base64url JSON header and payload (both start with '{"' = eyJ), signature.
        (("eyJ",), r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}(?:\.[A-Za-z0-9_-]*)?"),
        # OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-) and Anthropic (sk-ant-api03-...).
        (("sk-",), r"\bsk-(?=[A-Za-z_-]*\d)[A-Za-z0-9_-]{20,}"),
        # AWS access key ids; Tencent Cloud SecretId.
        (("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
         r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b"),
        (("AKID",), r"\bAKID[A-Za-z0-9]{13,40}\b"),
        # GitHub classic and fine-grained tokens; GitLab.
        (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"),
        (("github_pat_",), r"\bgithub_pat_[A-Za-z0-9_]{22,255}"),
        (("glpat-",), r"\bglpat-[A-Za-z0-9_-]{20,}"),
        # Slack tokens and incoming webhooks.
        (("xox",), r"\bxox[abposre]-[A-Za-z0-9-]{10,}"),
        (("xapp-",), r"\bxapp-\d-[A-Za-z0-9-]{10,}"),
        (("hooks.slack.com",), r"https://hooks\.slack\.com/services/[A-Za-z0-9_/]+"),
        # Google: API keys, OAuth access tokens, OAuth client secrets.
        (("AIza",), r"\bAIza[0-9A-Za-z_-]{35}"),
        (("ya29.",), r"\bya29\.[0-9A-Za-z_-]{20,}"),
        (("GOCSPX-",), r"\bGOCSPX-[0-9A-Za-z_-]{20,}"),
        # Stripe secret / restricted keys and webhook secrets (any length: no half keys).
        (("k_live_", "k_test_"), r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}"),
        (("whsec_",), r"\bwhsec_[0-9A-Za-z]{24,}"),
        # SendGrid, Hugging Face, npm, PyPI, DigitalOcean, Shopify.
        (("SG.",), r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
        (("hf_",), r"\bhf_[A-Za-z0-9]{30,}"),
        (("npm_",), r"\bnpm_[A-Za-z0-9]{36}\b"),
        (("pypi-",), r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
        (("dop_v1_",), r"\bdop_v1_[a-f0-9]{64}\b"),
        (("shpat_", "shpss_", "shpca_", "shppa_"), r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b"),
        # Azure storage connection strings.
        (("AccountKey=",), r"AccountKey=[A-Za-z0-9+/=]{40,}"),
    )
)

# Secrets after a label: group 1 (the label) stays, group 2 (the secret) goes. Triggers
# are checked against the lower-cased text.
_KEYED_PATTERNS: tuple[tuple[tuple[str, ...] | None, re.Pattern[str]], ...] = tuple(
    (triggers, re.compile(p))
    for triggers, p in (
        # user:password@ in URLs (RFC 3986 userinfo holds no unescaped / ? # @).
        (("://",), r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@]*:)([^\s/?#@]+)(?=@)"),
        # Authorization headers and bare bearer tokens.
        (("authorization",),
         r"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?(?:basic|bearer|token|digest)?\s*)"
         r"([A-Za-z0-9._~+/=-]{8,})"),
        (("bearer",), r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/=-]{16,})"),
        # AWS secret access key next to its name.
        (("aws",),
         r"(?i)(\baws_?secret(?:_?access)?(?:_?key)?[\"']?\s*[:=]\s*[\"']?)([A-Za-z0-9/+=]{40})"),
        # key=value / "key": "value" for secret-looking keys.
        (("pass", "secret", "key", "token"),
         r"(?i)(\b(?:password|passwd|passphrase|secret|client_secret|secret_key|api[_-]?key|"
         r"apikey|access[_-]?token|auth[_-]?token|refresh[_-]?token|token|private[_-]?key)"
         r"[\"']?\s*[:=]\s*[\"']?)([^\s\"',;&<>]{6,})"),
    )
)

# One scan that tells whether any pattern above could match: most text has no trigger
# at all and leaves after this single regex search.
_ANY_TRIGGER = re.compile(
    "|".join(re.escape(t) for triggers, _ in _SPAN_PATTERNS for t in triggers or ())
    + "|(?i:" + "|".join(re.escape(t) for triggers, _ in _KEYED_PATTERNS for t in triggers or ()) + ")"
)

# JSON keys whose string values are secrets whatever they look like.
_SECRET_KEY = re.compile(
    r"(?i)^(?:.*[_-])?(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|"
    r"access[_-]?key|private[_-]?key|client[_-]?secret|authorization|credentials?|cookie)$"
)


def _keep_label(match: re.Match[str]) -> str:
    return match.group(1) + REDACTED


def redact_text(text: str, detectors: Sequence[Detector] = ()) -> str:
    """``text`` with every recognised secret replaced by ``[redacted]`` (SPEC 4).

    Span and keyed patterns first, then each detector's values. Pure; never raises.
    """
    if len(text) < MIN_DETECTED_LENGTH:
        return text
    if _ANY_TRIGGER.search(text) is not None:
        text = _redact_patterns(text)
    for detector in detectors:
        for value in set(detector(text)):
            value = value.strip()
            if len(value) >= MIN_DETECTED_LENGTH and REDACTED not in value:
                text = text.replace(value, REDACTED)
    return text


def _redact_patterns(text: str) -> str:
    for triggers, pattern in _SPAN_PATTERNS:
        if triggers is None or any(t in text for t in triggers):
            text = pattern.sub(REDACTED, text)
    lowered = text.lower()
    for triggers, pattern in _KEYED_PATTERNS:
        if triggers is None or any(t in lowered for t in triggers):
            text = pattern.sub(_keep_label, text)
    return text


def redact(value: Any, detectors: Sequence[Detector] = ()) -> Any:
    """Deep copy of a JSON-like ``value`` with secrets redacted in every string, keys too.

    A non-empty string stored under a secret-looking key (``password``, ``api_key``,
    ``github_token`` ...) is replaced whole. Numbers, booleans and ``None`` pass unchanged.
    """
    if isinstance(value, str):
        return redact_text(value, detectors)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            key_text = str(key)
            if isinstance(item, str) and item and _SECRET_KEY.match(key_text):
                out[redact_text(key_text, detectors)] = REDACTED
            else:
                out[redact_text(key_text, detectors)] = redact(item, detectors)
        return out
    if isinstance(value, (list, tuple)):
        return [redact(v, detectors) for v in value]
    return value


def summarize(
    value: Any, limit: int = SUMMARY_LIMIT, detectors: Sequence[Detector] = ()
) -> str | None:
    """Redact, then serialise (strings as they are, anything else as JSON), then cut to
    ``limit`` characters (SPEC 4). ``None`` stays ``None``."""
    if value is None:
        return None
    clean = redact(value, detectors)
    text = clean if isinstance(clean, str) else json.dumps(clean, ensure_ascii=False, default=str)
    return text[:limit]
