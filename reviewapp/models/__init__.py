"""Every model, imported so Alembic autogenerate and ``create_all`` see them all."""

from .accounts import IngestToken, Membership, User, Workspace
from .cases import Case, SourceType
from .feedback import Feedback, FeedbackEvent, Rating, TargetType
from .runs import (
    DiagnosisSession,
    DiagnosticReport,
    DiagnosticStep,
    Message,
    MessageRole,
    Run,
    RunKind,
    RunStatus,
    Verdict,
)
from .tool_calls import MatchLevel, ToolCall, ToolCallStatus
from .triage import TriageItem, TriageState

__all__ = [
    "Case", "DiagnosisSession", "DiagnosticReport", "DiagnosticStep", "Feedback",
    "FeedbackEvent", "IngestToken", "MatchLevel", "Membership", "Message", "MessageRole",
    "Rating", "Run", "RunKind", "RunStatus", "SourceType", "TargetType", "ToolCall",
    "ToolCallStatus", "TriageItem", "TriageState", "User", "Verdict", "Workspace",
]
