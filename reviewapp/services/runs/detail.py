"""Runs, the page side: the run page's read model, loaded in a fixed number of queries
(SPEC 8, STYLE 3), its timeline and one tool call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ...actors import Actor, Role
from ...domain.feedback import answer_message_index
from ...domain.outcome import OutcomeView, outcome_view
from ...domain.reasons import workspace_reasons as reason_registry
from ...domain.target_types import TARGET_TYPES
from ...domain.timeline import Bar, CallTiming, Layout
from ...domain.timeline import layout as timeline_layout
from ...errors import Forbidden
from ...models import (
    Case,
    DiagnosisSession,
    DiagnosticReport,
    DiagnosticStep,
    Message,
    MessageRole,
    QueueItem,
    ReviewQueue,
    Run,
    RunKind,
    RunStatus,
    TargetType,
    ToolCall,
    Workspace,
)
from ...queries import (
    get_run_for,
    scope_to_actor,
)
from .. import feedback as feedback_service
from ..blind import blind_condition, is_blind
from .listing import RunFilters, neighbours

TOOL_CALL = TargetType.TOOL_CALL.value

# The timeline reads only these columns; arguments, results and errors (up to 2,000
# characters each) are read one call at a time, when a reviewer opens it (get_tool_call).
_TIMELINE_COLUMNS = ("id", "tool_name", "status", "started_at", "completed_at", "duration_ms",
                     "compensated", "match_level", "hit_count", "step_pk", "updated_at")
# A failed row shows the first line of its error without being opened (issue 19): only
# the error's head is read, so the timeline's query stays small.
_ERROR_HEAD_CHARS = 400
ERROR_LINE_CHARS = 160


@dataclass(frozen=True, slots=True)
class TimelineCall:
    """The facts of one tool call the timeline shows (no arguments / result / error)."""

    id: str
    tool_name: str
    status: str
    started_at: datetime | None
    completed_at: datetime | None
    duration_ms: int | None
    compensated: bool
    match_level: str | None
    hit_count: int | None
    step_pk: int | None
    updated_at: datetime
    error_head: str | None = None

    @property
    def error_line(self) -> str | None:
        """The first non-blank line of the error, at most ``ERROR_LINE_CHARS``
        characters (then "…"), or None. Escaped where it is rendered."""
        for line in (self.error_head or "").splitlines():
            if line.strip():
                line = line.strip()
                return line if len(line) <= ERROR_LINE_CHARS else line[:ERROR_LINE_CHARS - 1] + "…"
        return None


@dataclass(frozen=True)
class CitationView:
    """One citation of an assistant message with the gatekeeper's finding (SPEC 5.4).

    ``gate`` is {status verified | unverified, reason, evidence_ref} or ``None`` when the
    gatekeeper has not looked at it yet.
    """

    message_id: int
    citation_id: str
    title: str
    source: str
    excerpt: str
    evidence_ref: str | None
    gate: dict[str, Any] | None


@dataclass(frozen=True)
class TimelineRow:
    """One call on the timeline: its facts, its bar, the label of its step."""

    call: TimelineCall
    bar: Bar
    step_label: str | None


@dataclass(frozen=True)
class Timeline:
    """The tool-call timeline of one run. ``live`` while the run is RUNNING (the fragment
    then polls itself); ``version`` changes whenever a call or the run status changes.
    ``my_feedback`` / ``summary`` map a call id to the viewer's own rating of it and
    to every reviewer's counts; ``reasons`` / ``reason_choices`` as ``TargetState``."""

    run_pk: int
    status: str
    live: bool
    rows: list[TimelineRow]
    layout: Layout
    version: str
    my_feedback: Mapping[str, Any] = field(default_factory=dict)
    summary: Mapping[str, Any] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    reason_choices: tuple[tuple[str, str], ...] = ()
    positive_reason_choices: tuple[tuple[str, str], ...] = ()

    def target(self, row: TimelineRow) -> TargetState:
        """The thumbs state of the call of ``row``."""
        call = row.call
        return TargetState(TOOL_CALL, self.run_pk, call.id, self.run_pk,
                           self.my_feedback.get(call.id), self.summary.get(call.id),
                           self.reasons, self.reason_choices, self.positive_reason_choices,
                           name=tool_call_name(call.tool_name))


@dataclass(frozen=True)
class TargetState:
    """What one thumbs control shows: the target, the actor's own rating (``mine``, a
    Feedback or ``None``), every reviewer's ``summary`` (TargetSummary or ``None``), the
    workspace's reason codes and the (code, label) pairs a negative rating may carry
    (``reason_choices``, SPEC 6.1)."""

    target_type: str
    target_id: int
    subject_key: str
    run_pk: int
    mine: Any
    summary: Any
    reasons: list[str]
    reason_choices: tuple[tuple[str, str], ...] = ()
    positive_reason_choices: tuple[tuple[str, str], ...] = ()
    # ``mine`` was given before the target's text changed (SPEC 10).
    earlier_version: bool = False
    name: str | None = None

    def choices_for(self, rating: str) -> tuple[tuple[str, str], ...]:
        """The reason (code, label) pairs a ``rating`` may carry (SPEC 6.1 polarity)."""
        return self.positive_reason_choices if rating == "positive" else self.reason_choices

    def reason_label(self, code: str) -> str:
        """How a saved reason ``code`` reads: the workspace's label for it (its reason
        list, SPEC 6.1), or the code with ``_`` as spaces once the workspace retired it."""
        for known, text in (*self.reason_choices, *self.positive_reason_choices):
            if known == code:
                return text
        return code.replace("_", " ")

    @property
    def label(self) -> str:
        """How the control names its target ("the answer"): ``name`` when one of many
        targets of one type needs its own ("tool call 3 (search)"), else the
        registry's label."""
        return self.name or TARGET_TYPES.label(self.target_type)


@dataclass(frozen=True)
class RunDetail:
    """Everything the run page shows, loaded up front: templates trigger no lazy load.

    ``answer_message`` is the final assistant message (the chat answer's thumbs target);
    ``my_feedback`` maps (target_type, target_id, subject_key) to the actor's own rating;
    ``summary`` maps the same keys to every reviewer's counts (feedback_summary);
    ``evaluation`` is ``run.self_evaluation`` with a legacy flat root wrapped (SPEC 5) or
    ``None`` when not scored yet; ``prev_pk`` / ``next_pk`` are the neighbours in the
    list ``filters`` describe; ``case_id`` the run's case in the case library, if any;
    ``outcome`` the external outcome and its detail (``domain/outcome.py``), if any.
    """

    run: Run
    workspace: Workspace
    diagnosis_session: DiagnosisSession
    messages: list[Message]
    answer_message: Message | None
    citations: list[CitationView]
    steps: list[DiagnosticStep]
    report: DiagnosticReport | None
    timeline: Timeline
    evaluation: dict[str, Any] | None
    my_feedback: dict[tuple[str, int, str], Any]
    summary: dict[tuple[str, int, str], Any]
    reasons: list[str]
    filters: RunFilters
    prev_pk: int | None
    next_pk: int | None
    case_id: str | None = None
    earlier_ids: frozenset[int] = frozenset()
    outcome: OutcomeView | None = None
    # Blind review (services/blind.py): the viewer has not rated the answer of a run in a
    # blind queue yet; ``summary`` then holds nothing, ``verdict`` and ``case_id`` None.
    blind: bool = False
    # How many reviewers' answer-level ratings make the verdict: N of a team-review queue
    # holding the run (their majority, ties to a lead), else 1 (the rating is the verdict).
    verdict_reviewers: int = 1

    @property
    def verdict(self) -> str | None:
        """The run's verdict as this viewer may see it (``None`` while blind)."""
        return None if self.blind else self.run.feedback

    @property
    def answer_rateable(self) -> bool:
        """Whether the answer's thumbs show and set the run's verdict (SPEC 6.2): there is
        an answer message, and the run is a chat run or an AIOps run without a report
        (whose conclusion then exists only as the answer text; with a report, the
        report's rating is the verdict)."""
        return self.answer_message is not None and (
            self.run.kind == RunKind.CHAT.value or self.report is None)

    @property
    def answer_noun(self) -> str:
        """What the page calls the run's answer: "conclusion" for AIOps, else "answer"."""
        return "conclusion" if self.run.kind == RunKind.AIOPS.value else "answer"

    def target(self, target_type: str, target_id: int, subject_key: str = "",
               name: str | None = None) -> TargetState:
        """The thumbs state of one target of this run; ``name`` as ``TargetState.name``."""
        key = (target_type, target_id, subject_key or "")
        mine = self.my_feedback.get(key)
        return TargetState(target_type, target_id, subject_key or "", self.run.id,
                           mine, self.summary.get(key), self.reasons,
                           reason_choices(self.workspace),
                           reason_choices(self.workspace, "positive"),
                           mine is not None and mine.id in self.earlier_ids, name=name)

    @property
    def multi_turn(self) -> bool:
        """A chat run with more than one user message (a conversation, e.g. a benchmark
        dialogue): the page reads it as its conversation first (issue 17 item 5)."""
        return self.run.kind == RunKind.CHAT.value and sum(
            1 for m in self.messages if m.role == MessageRole.USER.value) > 1

    @property
    def call_names(self) -> dict[str, str]:
        """Tool name by call id, for the conversation's links to the timeline rows."""
        return {row.call.id: row.call.tool_name for row in self.timeline.rows}


def tool_call_name(tool_name: str) -> str:
    """How a thumbs control names one tool call ("tool call search_flights")."""
    return f"tool call {tool_name}"


def workspace_reasons(workspace: Workspace) -> list[str]:
    """The workspace's feedback reason codes (``domain.reasons.workspace_reasons``: its
    own list, or the default one; SPEC 6.1)."""
    return list(reason_registry(workspace.settings).codes())


def reason_choices(workspace: Workspace, rating: str = "negative") -> tuple[tuple[str, str], ...]:
    """(code, label) of the workspace's reasons a ``rating`` (default negative) may carry
    (the thumbs' reason select), in the workspace's order."""
    return tuple((row.code, row.label) for row in reason_registry(workspace.settings)
                 if row.allows(rating))


def _load_run(session: Session, actor: Actor, run_pk: int
              ) -> tuple[Run, DiagnosisSession, Workspace, bool, int]:
    """The run, its session and workspace, whether the run is blind for the actor
    (``blind.blind_condition``) and how many reviewers' answer ratings make its verdict
    (the most ``reviewers_per_run`` of the queues holding it, 1 when none; issue 16), in
    one query. Raises ``Forbidden``."""
    reviewers = (select(func.max(ReviewQueue.reviewers_per_run))
                 .join(QueueItem, QueueItem.queue_id == ReviewQueue.id)
                 .where(QueueItem.run_pk == Run.id,
                        ReviewQueue.workspace_id == Run.workspace_id)
                 .scalar_subquery())
    stmt = scope_to_actor(
        select(Run, DiagnosisSession, Workspace, blind_condition(actor), reviewers)
        .join(DiagnosisSession, DiagnosisSession.id == Run.diagnosis_session_id)
        .join(Workspace, Workspace.id == Run.workspace_id)
        .where(Run.id == run_pk),
        actor, Run.workspace_id, Role.REVIEWER,
    )
    row = session.execute(stmt).one_or_none()
    if row is None:
        raise Forbidden()
    return row[0], row[1], row[2], bool(row[3]), max(1, row[4] or 1)


def evaluation_view(raw: Any) -> dict[str, Any] | None:
    """``self_evaluation`` keyed by source, a legacy flat root wrapped (SPEC 5); ``None``
    when absent or empty (the page says "not scored yet")."""
    if not isinstance(raw, Mapping) or not raw:
        return None
    if "evidence_score" in raw:
        return {"rule_evaluation": dict(raw)}
    if "verdict" in raw or "groundedness_score" in raw:
        return {"verifier_evaluation": dict(raw)}
    return {k: v for k, v in raw.items() if isinstance(v, Mapping)} or None


def _gate_findings(evaluation: dict[str, Any] | None) -> dict[tuple[str, str], dict[str, Any]]:
    gate = (evaluation or {}).get("citation_gatekeeper") or {}
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for item in gate.get("citations") or []:
        if isinstance(item, Mapping) and item.get("citation_id") is not None:
            found[(str(item.get("message_id")), str(item["citation_id"]))] = dict(item)
    return found


def _citations(messages: Sequence[Message], evaluation: dict[str, Any] | None) -> list[CitationView]:
    findings = _gate_findings(evaluation)
    views = []
    for message in messages:
        if message.role != MessageRole.ASSISTANT.value:
            continue
        for raw in message.citations:
            if not isinstance(raw, Mapping) or raw.get("id") in (None, ""):
                continue
            cid = str(raw["id"])
            gate = findings.get((str(message.id), cid)) or findings.get((str(message.message_id), cid))
            views.append(CitationView(
                message_id=message.id, citation_id=cid, title=str(raw.get("title") or cid),
                source=str(raw.get("source") or raw.get("url") or ""),
                excerpt=str(raw.get("excerpt") or ""),
                evidence_ref=raw.get("evidence_ref") if isinstance(raw.get("evidence_ref"), str) else None,
                gate=gate,
            ))
    return views


def _timeline(session: Session, run: Run, steps: Sequence[DiagnosticStep], workspace: Workspace,
              mine: Mapping[tuple[str, int, str], Any],
              summary: Mapping[tuple[str, int, str], Any]) -> Timeline:
    # Plain column rows, not ORM objects: a 500-call run hydrates ten times faster.
    calls = [TimelineCall(*row) for row in session.execute(
        select(*(getattr(ToolCall, c) for c in _TIMELINE_COLUMNS),
               func.substr(ToolCall.error_message, 1, _ERROR_HEAD_CHARS))
        .where(ToolCall.run_pk == run.id, ToolCall.workspace_id == run.workspace_id)
        .order_by(ToolCall.started_at.is_(None), ToolCall.started_at, ToolCall.ordinal, ToolCall.id)
    )]
    step_labels = {s.id: f"{s.ordinal}. {s.name}" for s in steps}
    placed = timeline_layout([CallTiming(c.started_at, c.completed_at) for c in calls],
                             until=run.finished_at)
    rows = [TimelineRow(c, bar, step_labels.get(c.step_pk) if c.step_pk else None)
            for c, bar in zip(calls, placed.bars)]
    latest = max((c.updated_at for c in calls), default=None)
    version = f"{run.status}-{len(calls)}-{latest.timestamp() if latest else 0}"
    return Timeline(
        run.id, run.status, run.status == RunStatus.RUNNING.value, rows, placed, version,
        my_feedback={key[2]: f for key, f in mine.items() if key[0] == TOOL_CALL},
        summary={key[2]: s for key, s in summary.items() if key[0] == TOOL_CALL},
        reasons=workspace_reasons(workspace), reason_choices=reason_choices(workspace),
        positive_reason_choices=reason_choices(workspace, "positive"))


def get_run_detail(session: Session, actor: Actor, run_pk: int,
                   filters: RunFilters | None = None) -> RunDetail:
    """The run page's read model for run ``run_pk`` (SPEC 8).

    Access: the actor must be a member of the run's workspace; a missing run and a
    foreign one both raise ``Forbidden`` (SPEC 2). ``filters`` (the list the reviewer
    came from) decide the previous / next links. A fixed number of queries, whatever the
    number of messages, citations, steps or tool calls. Raises ``ValidationFailed`` for
    bad filters.
    """
    filters = (filters or RunFilters()).validated()
    run, diagnosis_session, workspace, blind, verdict_reviewers = _load_run(session, actor, run_pk)
    messages = list(session.scalars(
        select(Message).where(Message.run_pk == run.id).order_by(Message.ordinal)))
    steps = list(session.scalars(
        select(DiagnosticStep).where(DiagnosticStep.run_pk == run.id)
        .order_by(DiagnosticStep.ordinal)))
    report = session.scalars(
        select(DiagnosticReport).where(DiagnosticReport.run_pk == run.id)).one_or_none()
    case_id = session.scalar(select(Case.case_id).where(
        Case.workspace_id == run.workspace_id, Case.diagnosis_id == run.run_id,
        Case.withdrawn_at.is_(None)))
    evaluation = evaluation_view(run.self_evaluation)
    answer_index = answer_message_index([(m.role, m.content) for m in messages])
    answer_message = messages[answer_index] if answer_index is not None else None
    if actor.user_id is None:  # ratings belong to people (as list_my_feedback says)
        raise Forbidden()
    # The run was access-checked by _load_run above: no second and third check.
    mine = {(f.target_type, f.target_id, f.subject_key or ""): f
            for f in feedback_service.my_feedback_of_visible_run(session, actor.user_id, run.id)}
    summary = {} if blind else feedback_service.summary_of_visible_run(session, run.id)
    reasons = workspace_reasons(workspace)
    prev_pk, next_pk = neighbours(session, actor, run, filters, None)
    return RunDetail(
        run=run, workspace=workspace, diagnosis_session=diagnosis_session, messages=messages,
        answer_message=answer_message, citations=_citations(messages, evaluation), steps=steps,
        report=report, timeline=_timeline(session, run, steps, workspace, mine, summary),
        evaluation=evaluation,
        my_feedback=mine, summary=summary, reasons=list(reasons), filters=filters,
        prev_pk=prev_pk, next_pk=next_pk, case_id=None if blind else case_id,
        earlier_ids=frozenset(feedback_service.earlier_version_ids(session, run.id)),
        outcome=outcome_view(run.external_outcome, run.external_outcome_detail), blind=blind,
        verdict_reviewers=verdict_reviewers,
    )


def get_timeline(session: Session, actor: Actor, run_pk: int) -> Timeline:
    """The tool-call timeline of run ``run_pk`` alone (the live fragment polls it).

    Raises ``Forbidden`` for a missing or foreign run, or an actor that is not a user.
    """
    run, _, workspace, blind, _ = _load_run(session, actor, run_pk)
    if actor.user_id is None:
        raise Forbidden()
    steps = list(session.scalars(
        select(DiagnosticStep).where(DiagnosticStep.run_pk == run.id)
        .order_by(DiagnosticStep.ordinal)))
    # The run was access-checked by _load_run above.
    mine = {(f.target_type, f.target_id, f.subject_key or ""): f
            for f in feedback_service.my_feedback_of_visible_run(session, actor.user_id, run.id)}
    summary = {} if blind else feedback_service.summary_of_visible_run(session, run.id)
    return _timeline(session, run, steps, workspace, mine, summary)


def get_run(session: Session, actor: Actor, run_pk: int) -> Run:
    """The run ``run_pk`` if the actor may see it.

    Raises ``Forbidden`` for a missing or foreign run.
    """
    run = get_run_for(session, actor, run_pk)
    if run is None:
        raise Forbidden()
    return run


@dataclass(frozen=True)
class VerdictView:
    """The run's verdict badge: ``verdict`` as the viewer may see it (``None`` while the
    run is ``blind`` for them, services/blind.py)."""

    run_pk: int
    verdict: str | None
    blind: bool


def get_verdict(session: Session, actor: Actor, run_pk: int) -> VerdictView:
    """The verdict badge of run ``run_pk`` (refreshed after an answer-level rating), with
    blind review applied. Raises ``Forbidden`` for a missing or foreign run."""
    run = get_run(session, actor, run_pk)
    blind = is_blind(session, actor, run.id)
    return VerdictView(run.id, None if blind else run.feedback, blind)


def get_tool_call(session: Session, actor: Actor, run_pk: int, call_id: str) -> ToolCall:
    """One tool call of run ``run_pk`` with its arguments, result and error (the
    timeline loads these only when a call is opened). Raises ``Forbidden`` for a missing
    or foreign run or call."""
    stmt = scope_to_actor(
        select(ToolCall).join(Run, Run.id == ToolCall.run_pk)
        .where(ToolCall.run_pk == run_pk, ToolCall.id == call_id,
               ToolCall.workspace_id == Run.workspace_id),
        actor, Run.workspace_id, Role.REVIEWER,
    )
    call = session.scalars(stmt).one_or_none()
    if call is None:
        raise Forbidden()
    return call
