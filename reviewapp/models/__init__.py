"""Every model, imported so Alembic autogenerate and ``create_all`` see them all."""

from typing import Any

from ..domain.target_types import TARGET_TYPES
from ..extensions import db
from ..search_index import install as _install_search_index
from .accounts import IngestToken, Membership, User, Workspace
from .audit import AuditEvent
from .cases import Case, SourceType
from .decisions import VerdictDecision
from .feedback import Feedback, FeedbackEvent, Rating, TargetType
from .otel import OtelSpan
from .queues import (
    ItemSource,
    QueueAssignment,
    QueueFormerRater,
    QueueItem,
    QueueRemoval,
    QueueReviewer,
    ReviewQueue,
)
from .rollups import RatedRun, RatedRunCount, RunDayCount, ToolDayCount, TriageDayCount
from .runs import (
    DiagnosisSession,
    DiagnosticReport,
    DiagnosticStep,
    Message,
    MessageRole,
    Run,
    RunKind,
    RunStatus,
    TargetRevision,
    Verdict,
)
from .tool_calls import MatchLevel, ToolCall, ToolCallStatus
from .triage import TriageEvent, TriageItem, TriageState

# The full-text index of run text is no model (a virtual table on SQLite): ``create_all``
# makes it through this hook, migrations through their own DDL.
_install_search_index(db.metadata)


def target_model(target_type: str) -> Any:
    """The model class whose rows ``target_type`` rates: the registry row's ``model``
    (domain/target_types.py). Raises ``UnknownValue`` for a type the registry lacks."""
    return globals()[TARGET_TYPES.get(target_type).model]


__all__ = [
    "AuditEvent", "Case", "DiagnosisSession", "DiagnosticReport", "DiagnosticStep", "Feedback",
    "FeedbackEvent", "IngestToken", "ItemSource", "MatchLevel", "Membership", "Message",
    "MessageRole", "OtelSpan", "QueueAssignment", "QueueFormerRater", "QueueItem", "QueueRemoval", "QueueReviewer", "RatedRun", "RatedRunCount", "Rating", "ReviewQueue", "Run", "RunKind",
    "RunDayCount", "RunStatus", "SourceType", "TargetRevision", "TargetType", "ToolCall",
    "ToolCallStatus", "ToolDayCount", "TriageDayCount",
    "TriageEvent", "TriageItem", "TriageState", "User", "Verdict", "VerdictDecision",
    "Workspace",
    "target_model",
]
