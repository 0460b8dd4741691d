"""The one redaction entry point of every ingest path (SPEC 4): ``domain.redaction``'s
rules run by RE2, a regular-expression engine whose matching time is linear in the input.

Every service that stores what an agent sent calls one of these before anything else
(``runs.upsert_run`` / ``finish_run``, ``tool_calls.apply_events``; the importers, the
demo and the OTLP path reach the store only through those), so the JSON API, the CLI
import and every later ingest path get the same redaction, and exports and the case
library hold no secret by construction.

Why RE2 and no other scanner: Python's ``re`` backtracks, so a pattern as plain as
``authorization:\\s*[:=]`` takes time quadratic in a run of spaces (a 100 KB tool error
pinned a worker for 30 s). The detect-secrets plugins used here before are ``re``
patterns too (``://[^{}\\s]+:([^{}\\s]+)@`` is quadratic in a long token), so they were
dropped and the shapes they knew (Artifactory, Discord, Mailchimp, Square, Telegram,
Twilio, SoftLayer, GitLab's other prefixes ...) became RE2 rules in ``domain.redaction``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import re2

from ..domain import redaction
from ..domain.redaction import Redactor, Summary
from ..errors import ValidationFailed

_OPTIONS = re2.Options()
# RE2 falls back from its DFA to the (still linear, slower) NFA when a DFA outgrows its
# memory; 32 MiB per rule keeps the DFA for every rule on the adversarial inputs of
# tests/unit/test_redaction_linear.py.
_OPTIONS.max_mem = 32 << 20
_UNANCHORED = re2._re2.RE2.Anchor.UNANCHORED


class _Pattern:
    """A pattern compiled by RE2, searched through the binding's ``Match`` itself: the
    module's ``finditer`` wraps every match in two Python objects, and a text made of
    nothing but short secrets has one match every six bytes (see benchmarks/redaction.py).
    ``tests/unit/test_redaction.py`` checks it finds what ``re2.finditer`` finds."""

    __slots__ = ("_match",)

    def __init__(self, pattern: bytes) -> None:
        regexp = re2._re2.RE2(pattern, _OPTIONS)
        if not regexp.ok():
            raise re2.error(regexp.error())
        self._match = regexp.Match

    def search(self, text: bytes, pos: int) -> list[tuple[int, int]] | None:
        """Spans of the leftmost match at or after ``pos`` (``domain.redaction.Compiled``)."""
        spans = self._match(_UNANCHORED, text, pos, len(text))
        return None if spans[0][0] < 0 else spans


_redactor = Redactor(_Pattern)


def configure(config: Mapping[str, Any]) -> None:
    """Key the digests of redacted ids with the app's ``SECRET_KEY`` (``create_app``
    calls this), so a stored digest cannot confirm a guessed secret offline. Processes
    that share an instance folder share the key, so the same id maps to the same key in
    each of them."""
    global _redactor
    secret = config.get("SECRET_KEY") or ""
    _redactor = _redactor.with_id_key(str(secret).encode())


def redact(value: Any) -> Any:
    """Any JSON-like value with every string and object key redacted (SPEC 4)."""
    return _redactor.value(value)


def redact_text(text: str) -> str:
    """One text, redacted."""
    return _redactor.text(text)


def redact_texts(texts: list[str]) -> list[str]:
    """``[redact_text(t) for t in texts]`` in one pass per rule over all of them
    (``Redactor.many``): a batch of stored texts re-scanned at once."""
    return _redactor.many(texts)


def redact_typed(text: str | None, limit: int) -> str | None:
    """Text a person typed (a rating comment or correction, a triage note, a case field),
    redacted like what an agent sends and kept within ``limit`` characters (``[redacted]``
    can be longer than a short secret it replaces; the cut never uncovers one). ``None``
    stays ``None``. Callers validate the length as typed first (SPEC 4, 6.1, 7, 8)."""
    return None if text is None else _redactor.text(text)[:limit]


def redact_key(key: str, limit: int | None = None) -> str:
    """An id or a name, redacted and kept unique (``Redactor.key``)."""
    return _redactor.key(key, limit)


def redact_run_document(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A run document with every text redacted (``Redactor.run_document``), and its
    ``session_id`` redacted as a key (``redact_session_id``). ``run_id`` stays: a run id
    holding a secret is refused instead (``refuse_secret_id``)."""
    out = _redactor.run_document(doc)
    if isinstance(out.get("session_id"), str):
        out["session_id"] = redact_session_id(out["session_id"])
    return out


def redact_session_id(session_id: str) -> str:
    """A session id (SPEC 3: free text that only groups runs) redacted like a tool-call id
    (``redact_key``, at most ``redaction.ID_LIMIT`` characters): unchanged without a
    secret, else e.g. ``password=[redacted]~3f9a…`` (16 hex of a keyed digest of the
    original), so the same session id sent again maps to the same stored one and its runs
    stay grouped; two different ones never merge. Idempotent: the stored form maps to
    itself, so it can be sent back (the verdict API's ``sessionId``)."""
    return _redactor.key(session_id, redaction.ID_LIMIT)


def holds_secret(text: str) -> bool:
    """True when the redaction rules find a secret in ``text`` (it would change)."""
    return _redactor.text(text) != text


SECRET_ID = "looks like a secret; send an opaque id"


def refuse_secret_id(value: str, field: str) -> str:
    """``value`` (a run id, SPEC 3, 9) unless the redaction rules find a secret in it:
    then ``ValidationFailed(field, SECRET_ID)``, whose message never repeats the value. A
    run id is the run's identity and address (URLs, idempotent re-sends): redacting it
    would silently change which run a re-send or a later event names, so it is refused."""
    if holds_secret(value):
        raise ValidationFailed(field, SECRET_ID)
    return value


def redact_tool_event(event: Mapping[str, Any]) -> dict[str, Any]:
    """A tool-call event with every text redacted (``Redactor.tool_event``)."""
    return _redactor.tool_event(event)


def redact_outcome(body: Mapping[str, Any]) -> dict[str, Any]:
    """An outcome body (``run_outcome.schema.json``) with its label and detail redacted
    (the same rules as those fields of a run document)."""
    return _redactor.run_document(body)


def redact_finish(body: Mapping[str, Any]) -> dict[str, Any]:
    """A finish body with its answer redacted."""
    return _redactor.finish(body)


def summarize(value: Any, limit: int = redaction.SUMMARY_LIMIT) -> str | None:
    """Redact, serialise, cut to ``limit`` characters (SPEC 4); ``None`` stays ``None``."""
    return redaction.cut(redact(value), limit).text


def summary(value: Any, limit: int = redaction.SUMMARY_LIMIT) -> Summary:
    """Serialise and cut an already redacted value, keeping its original length."""
    return redaction.cut(value, limit)
