"""Every stored text column, classified for redaction (SPEC 4): the one registry that
``stored_redaction`` (``flask runs redact``) walks, so a column cannot be forgotten.

Each String / Text / JSON column of every table is in exactly one of:

* ``REDACTED``: text that an agent sent (or a person typed, or a copy of either) and that
  is redacted before storage; a re-scan re-applies today's rules to it, with the same
  function ingestion uses for it (``How``);
* ``KEPT``: a column that is not rewritten, with the reason: a code, hash or slug the app
  itself writes; an identity the rest of the data refers to (``IDENTITY``: it is checked
  and a secret found there is counted, never rewritten, since ratings, links and re-sends
  name the row by it); a copy that is rebuilt from its source.

``tests/services/test_stored_redaction.py`` fails when a model gains a text column that
neither names.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..domain.redaction import (
    ID_LIMIT,
    OUTCOME_LIMIT,
    STEP_NAME_LIMIT,
    STEP_STATUS_LIMIT,
    SUMMARY_LIMIT,
    TOOL_NAME_LIMIT,
)
from ..models import DiagnosticReport, DiagnosticStep


class How(str, enum.Enum):
    """How a column is redacted (the ``secret_scan`` function ingestion uses for it)."""

    TEXT = "text"  # redact_text (cut to ``limit`` characters when one is given)
    JSON = "json"  # redact: every string and object key, secret-named keys' values whole
    STRINGS = "strings"  # JSON whose string values are redacted as text, keys kept (records)
    KEY = "key"  # redact_key: an id or name, a digest appended when it changed
    SESSION_ID = "session_id"  # redact_session_id
    MESSAGE_META = "message_meta"  # a message's metadata as a run document's (citations ...)


# Table names that are also rating target codes, taken from their models (the codes are
# written out only in their registry: tests/test_architecture.py).
_STEP, _REPORT = DiagnosticStep.__tablename__, DiagnosticReport.__tablename__


@dataclass(frozen=True)
class Column:
    """``table.column`` redacted ``how``; ``limit``: characters kept after redaction."""

    table: str
    column: str
    how: How
    limit: int | None = None

    @property
    def name(self) -> str:
        return f"{self.table}.{self.column}"


REDACTED: tuple[Column, ...] = (
    # A run and its parts (runs.upsert_run: redact_run_document).
    Column("diagnosis_run", "query", How.TEXT),
    Column("diagnosis_run", "answer", How.TEXT),
    Column("diagnosis_run", "alert", How.JSON),
    Column("diagnosis_run", "self_evaluation", How.JSON),
    Column("diagnosis_run", "orchestration_trace", How.JSON),
    Column("diagnosis_run", "external_outcome", How.TEXT, OUTCOME_LIMIT),
    Column("diagnosis_run", "external_outcome_detail", How.JSON),
    Column("diagnosis_session", "session_id", How.SESSION_ID),
    Column("diagnosis_session", "query", How.TEXT),  # legacy sessions (importers)
    Column("diagnosis_session", "answer", How.TEXT),
    Column("diagnosis_session", "self_evaluation", How.JSON),
    Column("message", "message_id", How.KEY, ID_LIMIT),
    Column("message", "content", How.TEXT),
    Column("message", "metadata", How.MESSAGE_META),
    Column(_STEP, "step_id", How.KEY, ID_LIMIT),
    Column(_STEP, "name", How.TEXT, STEP_NAME_LIMIT),
    Column(_STEP, "status", How.TEXT, STEP_STATUS_LIMIT),
    Column(_STEP, "summary", How.TEXT),
    Column(_REPORT, "content", How.TEXT),
    Column("target_revision", "content", How.TEXT),  # a rated part's earlier text
    # Tool calls (tool_calls.apply_events / upsert_records: redact_tool_event).
    Column("tool_call_audit", "tool_name", How.KEY, TOOL_NAME_LIMIT),
    Column("tool_call_audit", "arguments", How.JSON),
    Column("tool_call_audit", "result_summary", How.TEXT, SUMMARY_LIMIT),
    Column("tool_call_audit", "error_message", How.TEXT, SUMMARY_LIMIT),
    Column("tool_call_audit", "evidence_refs", How.JSON),
    # OTLP spans a trace's run is rebuilt from (otel: redact).
    Column("otel_span", "data", How.JSON),
    # Copies of run text and text people type (redact_typed, cut to the column's width).
    Column("case_library", "title", How.TEXT, 200),
    Column("case_library", "root_cause", How.TEXT),
    Column("case_library", "solution", How.TEXT),
    Column("case_library", "error_code", How.TEXT, 120),
    Column("case_library", "service", How.TEXT, 120),
    Column("user_feedback", "comment", How.TEXT),
    Column("user_feedback", "correction", How.TEXT),
    Column("feedback_event", "before", How.STRINGS),
    Column("feedback_event", "after", How.STRINGS),
    Column("triage_item", "note", How.TEXT),
    Column("triage_event", "detail", How.TEXT),
    Column("verdict_decision", "note", How.TEXT),
    Column("ingest_token", "name", How.TEXT, 120),
    Column("audit_event", "target_label", How.TEXT, 200),
    Column("audit_event", "before", How.STRINGS),
    Column("audit_event", "after", How.STRINGS),
)

IDENTITY = "identity: checked and counted, never rewritten (ratings, links and re-sends name the row by it)"
_CODE = "a code the app writes from its own vocabulary"
_COPY = "a copy of an identity (checked at its source)"
_ADMIN = "typed by an admin; not agent text"

KEPT: dict[str, str] = {
    "diagnosis_run.run_id": IDENTITY + "; a run id holding a secret is refused at ingest",
    "tool_call_audit.id": IDENTITY,
    "message.metadata.citations.id": IDENTITY,  # inside MESSAGE_META, restored as stored
    "message.metadata.tool_call_ids": IDENTITY,
    "user_feedback.subject_key": _COPY,
    "feedback_event.subject_key": _COPY,
    "case_library.diagnosis_id": _COPY,
    "case_library.case_id": "a UUID the app makes",
    "case_library.source_type": _CODE,
    "case_library.fault_category": _CODE,
    "case_library.created_by": "a username or 'system'",
    "diagnosis_run.kind": _CODE, "diagnosis_run.status": _CODE, "diagnosis_run.feedback": _CODE,
    "diagnosis_run.verifier_verdict": _CODE,
    "diagnosis_session.kind": _CODE, "diagnosis_session.status": _CODE,
    "diagnosis_session.feedback": _CODE,
    "message.role": _CODE,
    "tool_call_audit.status": _CODE, "tool_call_audit.match_level": _CODE,
    "otel_span.trace_id": "hex id (schema)", "otel_span.span_id": "hex id (schema)",
    "otel_span.parent_span_id": "hex id (schema)",
    "user_feedback.target_type": _CODE, "user_feedback.rating": _CODE, "user_feedback.reason": _CODE,
    "feedback_event.target_type": _CODE, "feedback_event.action": _CODE,
    "target_revision.target_type": _CODE,
    "triage_item.state": _CODE, "triage_item.opened_reason": _CODE, "triage_item.fault_category": _CODE,
    "triage_event.action": _CODE,
    "verdict_decision.verdict": _CODE,
    "membership.role": _CODE,
    "ingest_token.prefix": "the first characters of the app's own token (shown to tell tokens apart)",
    "ingest_token.secret_hash": "a hash",
    "user_account.username": _ADMIN, "user_account.password_hash": "a hash",
    "user_account.session_token": "the app's own random value",
    "workspace.slug": _ADMIN, "workspace.name": _ADMIN, "workspace.settings": _ADMIN,
    "review_queue.name": "typed by a lead; not agent text", "review_queue.rule": "runs-list filters",
    "review_queue.dispute_rule": _CODE, "review_queue.reviewers": _CODE,
    "review_queue.assignment": _CODE, "review_queue_item.source": _CODE,
    "audit_event.actor_label": "a username, token:<name> or 'system' when recorded",
    "audit_event.action": _CODE, "audit_event.target_type": _CODE,
    "audit_event.target_id": "a row id",
    "dashboard_run_day.dimension": _CODE, "dashboard_run_day.value": _CODE,
    "dashboard_tool_day.tool_name": "a copy of tool_call_audit.tool_name: rebuilt when a name changes",
    "dashboard_triage_day.state": _CODE,
}


def tables() -> list[str]:
    """The tables that hold ``REDACTED`` columns, in registry order."""
    return list(dict.fromkeys(column.table for column in REDACTED))


def columns_of(table: str) -> list[Column]:
    """The ``REDACTED`` columns of ``table``."""
    return [column for column in REDACTED if column.table == table]
