"""Secret redaction, then JSON serialisation, then truncation (SPEC 4).

Order matters: redacting after the cut would let a secret that straddles the cut slip
through half-visible, so ``summarize`` redacts first.
"""

from __future__ import annotations

import json
import re
from typing import Any

REDACTED = "[redacted]"
SUMMARY_LIMIT = 2000  # characters

_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|$)",
        r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # JWT
        r"\bsk-(?:proj-|ant-(?:api\d{2}-)?)?[A-Za-z0-9_-]{16,}",  # OpenAI / Anthropic
        r"\b(?:AKIA|ASIA|AKID)[A-Z0-9]{12,}",  # AWS / Tencent access key ids
        r"\bgh[pousr]_[A-Za-z0-9]{30,}",  # GitHub
        r"\bgithub_pat_[A-Za-z0-9_]{40,}",
        r"\bxox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
        r"\bAIza[0-9A-Za-z_-]{35}",  # Google API key
        r"\b[rs]k_live_[0-9A-Za-z]{16,}",  # Stripe
        r"\bglpat-[0-9A-Za-z_-]{20}",  # GitLab
        r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",  # SendGrid
        r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}",
    )
)
# Secrets after a key: keep the key (group 1), redact the value.
_KEYED_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        r"(://[^\s:/@]+:)[^\s@/]+(?=@)",  # user:password@ in URLs
        r"(?i)(\baws_secret_access_key[\"']?\s*[:=]\s*[\"']?)[A-Za-z0-9/+=]{40}",
        r"(?i)((?:password|passwd|secret|api_key|apikey|token)[\"']?\s*[:=]\s*[\"']?)[^\s\"',;]{6,}",
    )
)


def redact_text(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[redacted]``."""
    for pattern in _PATTERNS:
        text = pattern.sub(REDACTED, text)
    for pattern in _KEYED_PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
    return text


def redact(value: Any) -> Any:
    """Deep copy of a JSON-like ``value`` with secrets redacted in every string (keys too)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {redact_text(str(k)): redact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    return value


def summarize(value: Any, limit: int = SUMMARY_LIMIT) -> str | None:
    """Redact, then serialise (strings as they are, anything else as JSON), then cut to
    ``limit`` characters. ``None`` stays ``None``."""
    if value is None:
        return None
    clean = redact(value)
    text = clean if isinstance(clean, str) else json.dumps(clean, ensure_ascii=False, default=str)
    return text[:limit]
