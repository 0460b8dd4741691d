"""Runs, the page side: the run page's read model, loaded in a fixed number of queries
(SPEC 8, STYLE 3); its rating targets are ``targets``, its timeline ``timeline``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from ...actors import Actor
from ...domain.feedback import answer_message_index, answer_text
from ...domain.outcome import OutcomeView, outcome_view
from ...domain.target_types import answer_noun
from ...domain.workspace_settings import time_zone_of
from ...errors import Forbidden
from ...models import (
    Case,
    DiagnosisSession,
    DiagnosticReport,
    DiagnosticStep,
    Message,
    MessageRole,
    Run,
    RunKind,
    Workspace,
)
from ...prepared import Prepared
from ...queries import get_run_for
from ..answer import answer_target
from ._loading import Decided, Dispute, decision_shown, load_run, ratings_of
from .filters import RunFilters
from .listing import neighbours
from .targets import TargetState, reason_choices, workspace_reasons
from .timeline import Shown, Timeline, build_timeline


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
class RunDetail:
    """Everything the run page shows, loaded up front: templates trigger no lazy load.

    ``messages`` are ``MessageView``s, ``steps`` and ``report`` rows of
    ``DiagnosticStep`` / ``DiagnosticReport``'s columns (read-only, no ORM objects);
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
    messages: list[MessageView]
    answer_message: Message | None
    citations: list[CitationView]
    steps: list[Any]
    report: Any
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

    @property
    def time_zone(self) -> str:
        """The IANA zone the page shows times in: the workspace's setting (UTC default)."""
        return time_zone_of(self.workspace.settings)
    # Blind review (services/blind.py): the viewer has not rated the answer of a run in a
    # blind queue yet; ``summary`` then holds nothing, ``verdict`` and ``case_id`` None.
    blind: bool = False
    # How many reviewers' answer-level ratings make the verdict: N of a team-review queue
    # holding the run (their majority, ties to a lead), else 1 (the rating is the verdict).
    verdict_reviewers: int = 1
    # The lead's decision that set the verdict (reviewers were split, issue 16); None
    # when no lead decided, and while blind. The page says who decided what.
    decision: Decided | None = None
    # The run is disputed: its governing queue's reviewers split and no lead decided yet
    # (queue_governing.disputed_queue_id, adjudication's rule); None otherwise and while
    # blind. The header's badge says so instead of "No verdict yet".
    dispute: Dispute | None = None
    # The viewer leads or administers the run's workspace (its own role there, not the
    # highest anywhere): the page offers what only they may do, e.g. "Create a case".
    viewer_leads: bool = False

    @property
    def verdict_view(self) -> VerdictView:
        """The header's verdict badge (``runs/_verdict.html``), as ``get_verdict`` gives
        it when it refreshes."""
        return VerdictView(self.run.id, self.verdict, self.blind, self.dispute)

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
    def answer_text(self) -> str:
        """The answer the page shows (``domain.feedback.answer_text``: the ``answer``
        field, else the answer message), the same text the run's case holds (SPEC 7)."""
        return answer_text(self.run.answer, [(m.role, m.content) for m in self.messages])

    @property
    def answer_noun(self) -> str:
        """What the page calls the run's answer: "conclusion" for AIOps, else "answer"
        (``domain.target_types.answer_noun``, as the triage and disputes pages)."""
        return answer_noun(self.run.kind)

    def target(self, target_type: str, target_id: int, subject_key: str = "",
               name: str | None = None) -> TargetState:
        """The thumbs state of one target of this run; ``name`` as ``TargetState.name``."""
        key = (target_type, target_id, subject_key or "")
        mine = self.my_feedback.get(key)
        negative, positive = self._reason_choices
        return TargetState(target_type, target_id, subject_key or "", self.run.id,
                           mine, self.summary.get(key), self.reasons, negative, positive,
                           mine is not None and mine.id in self.earlier_ids, name=name,
                           run_kind=self.run.kind,
                           decided=decision_shown(self.decision, self._verdict_target,
                                                  target_type, target_id))

    @cached_property
    def _reason_choices(self) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
        """The workspace's negative and positive reason choices, read once per page (a
        control per part)."""
        return reason_choices(self.workspace), reason_choices(self.workspace, "positive")

    @cached_property
    def _verdict_target(self) -> tuple[str, int] | None:
        """The target whose ratings make the run's verdict (its answer-level target,
        ``answer.answer_target``)."""
        return answer_target(
            self.run.kind, self.answer_message.id if self.answer_message else None,
            self.report.id if self.report else None)

    @property
    def multi_turn(self) -> bool:
        """A chat run with more than one user message (a conversation, e.g. a benchmark
        dialogue): the page reads it as its conversation first (issue 17 item 5)."""
        return self.run.kind == RunKind.CHAT.value and sum(
            1 for m in self.messages if m.role == MessageRole.USER.value) > 1

    @property
    def call_names(self) -> dict[str, str]:
        """Tool name by call id, for the conversation's links to the timeline rows (the
        calls its messages name, shown or not)."""
        return self.timeline.names

    @property
    def shown_calls(self) -> frozenset[str]:
        """The ids of the calls the timeline shows (a link to another one reloads the
        page down to it)."""
        return frozenset(row.call.id for row in self.timeline.rows)


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


def _citations(messages: Sequence[MessageView], evaluation: dict[str, Any] | None) -> list[CitationView]:
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


@dataclass(frozen=True, slots=True)
class MessageView:
    """A run's message as the run page reads it (``Message``'s columns, no ORM object):
    ``meta`` is the message's ``metadata`` ({} when none); ``citations`` as
    ``Message.citations``."""

    id: int
    message_id: str | None
    ordinal: int
    role: str
    content: str | None
    meta: dict[str, Any]

    @property
    def citations(self) -> list[dict[str, Any]]:
        """The ``citations`` list of ``meta`` (a copy; [] when none)."""
        return list((self.meta or {}).get("citations") or [])


@cache
def _parts_statements() -> dict[str, Prepared]:
    """The run page's reads of a run's (``:run_pk``) messages, steps and report and of its
    case (``:workspace_id``, ``:run_id``), built once with bound parameters and run on the
    DBAPI cursor (``prepared.Prepared``): the ORM's per-statement work (identity map,
    entity loading) cost more than these reads themselves (issue 18). Plain rows: the page
    only reads them."""
    run_pk = bindparam("run_pk")
    m, s, r, case = (t.__table__.c for t in (Message, DiagnosticStep, DiagnosticReport, Case))
    return {
        "messages": Prepared(select(m.id, m.message_id, m.ordinal, m.role, m.content,
                                    m.metadata.label("meta"))
                             .where(m.run_pk == run_pk).order_by(m.ordinal)),
        "steps": Prepared(select(s.id, s.step_id, s.ordinal, s.name, s.status, s.summary,
                                 s.started_at, s.finished_at)
                          .where(s.run_pk == run_pk).order_by(s.ordinal)),
        "report": Prepared(select(r.id, r.content).where(r.run_pk == run_pk)),
        "case": Prepared(select(case.case_id).where(
            case.workspace_id == bindparam("workspace_id"),
            case.diagnosis_id == bindparam("run_id"), case.withdrawn_at.is_(None))),
    }


def _named_calls(messages: Sequence[MessageView]) -> set[str]:
    """The call ids the messages name (``meta.tool_call_ids``), for their links."""
    named = (m.meta.get("tool_call_ids") for m in messages if isinstance(m.meta, Mapping))
    return {cid for ids in named if isinstance(ids, list) for cid in ids if isinstance(cid, str)}


def get_run_detail(session: Session, actor: Actor, run_pk: int,
                   filters: RunFilters | None = None, shown: Shown | None = None) -> RunDetail:
    """The run page's read model for run ``run_pk`` (SPEC 8).

    Access: the actor must be a member of the run's workspace; a missing run and a
    foreign one both raise ``Forbidden`` (SPEC 2). ``filters`` (the list the reviewer
    came from) decide the previous / next links; ``shown`` which tool calls the timeline
    shows (``timeline.Shown``: the first 50 unless it says more). A fixed number of queries, whatever the
    number of messages, citations, steps or tool calls. Raises ``ValidationFailed`` for
    bad filters.
    """
    filters = (filters or RunFilters()).validated()
    run, diagnosis_session, workspace, blind, verdict_reviewers, decision, dispute, leads = \
        load_run(session, actor, run_pk)
    parts = _parts_statements()
    by_run = {"run_pk": run.id}
    connection = session.connection()
    messages = [MessageView(*row) for row in parts["messages"].rows(connection, by_run)]
    steps = parts["steps"].rows(connection, by_run)
    report = parts["report"].one_or_none(connection, by_run)
    case_row = parts["case"].rows(connection, {"workspace_id": run.workspace_id,
                                               "run_id": run.run_id})
    case_id = case_row[0].case_id if case_row else None
    evaluation = evaluation_view(run.self_evaluation)
    answer_index = answer_message_index([(m.role, m.content) for m in messages])
    answer_message = messages[answer_index] if answer_index is not None else None
    mine, summary, earlier = ratings_of(session, actor, run, blind)  # Forbidden for a token
    reasons = workspace_reasons(workspace)
    prev_pk, next_pk = neighbours(session, actor, run, filters, None)
    return RunDetail(
        run=run, workspace=workspace, diagnosis_session=diagnosis_session, messages=messages,
        answer_message=answer_message, citations=_citations(messages, evaluation), steps=steps,
        report=report, timeline=build_timeline(session, run, steps, workspace, mine, summary, shown,
                                               _named_calls(messages)),
        evaluation=evaluation,
        my_feedback=mine, summary=summary, reasons=list(reasons), filters=filters,
        prev_pk=prev_pk, next_pk=next_pk, case_id=None if blind else case_id,
        earlier_ids=earlier,
        outcome=outcome_view(run.external_outcome, run.external_outcome_detail), blind=blind,
        verdict_reviewers=verdict_reviewers, decision=decision, dispute=dispute,
        viewer_leads=leads,
    )


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
    run is ``blind`` for them, services/blind.py); ``dispute`` while its reviewers'
    split waits for a lead (``Dispute``: the queue, whether the viewer may decide;
    ``None`` otherwise and while blind)."""

    run_pk: int
    verdict: str | None
    blind: bool
    dispute: Dispute | None = None


def get_verdict(session: Session, actor: Actor, run_pk: int) -> VerdictView:
    """The verdict badge of run ``run_pk`` (refreshed after an answer-level rating), with
    blind review applied, in one query (``load_run``: access, blind state, dispute).
    Raises ``Forbidden`` for a missing or foreign run."""
    loaded = load_run(session, actor, run_pk)
    return VerdictView(loaded.run.id, None if loaded.blind else loaded.run.feedback,
                       loaded.blind, loaded.dispute)
