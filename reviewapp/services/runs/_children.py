"""Package-private: how a re-ingest syncs a run's messages, steps, report and answer
message with the document while keeping every part that carries feedback (SPEC 10)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ...domain.feedback import has_answer_text
from ...models import (
    DiagnosticReport,
    Feedback,
    Message,
    MessageRole,
    Run,
    RunStatus,
    TargetRevision,
    TargetType,
)


def assign_changed(obj: Any, values: Mapping[str, Any]) -> bool:
    changed = False
    for key, value in values.items():
        if getattr(obj, key) != value:
            setattr(obj, key, value)
            changed = True
    return changed


def targets_with_feedback(session: Session, run_pk: int, *types: str) -> set[int]:
    """The ``target_id`` of every rating of run ``run_pk`` whose type is one of ``types``
    (codes of ``domain/target_types.py``)."""
    return set(
        session.scalars(
            select(Feedback.target_id).where(
                Feedback.run_pk == run_pk, Feedback.target_type.in_(list(types))
            )
        )
    )


def keep_earlier_text(session: Session, run: Run, target_type: str, target_id: int,
                      earlier: str | None) -> None:
    """A rated part's text is about to change (SPEC 10): keep the ``earlier`` text in its
    history (``TargetRevision``); ratings submitted before now read as "given on an
    earlier version" (``runs.detail.earlier_version_ratings``). No commit."""
    session.add(TargetRevision(workspace_id=run.workspace_id, run_pk=run.id,
                               target_type=target_type, target_id=target_id, content=earlier))


def _rated(session: Session, run_pk: int, target_type: str, target_id: int) -> bool:
    return session.scalar(select(Feedback.id).where(
        Feedback.run_pk == run_pk, Feedback.target_type == target_type,
        Feedback.target_id == target_id).limit(1)) is not None


def sync_children(
    session: Session,
    existing: Sequence[Any],
    incoming: Sequence[tuple[str | None, dict[str, Any]]],
    key_attr: str,
    make: Callable[..., Any],
    keep: set[int],
    text: tuple[Run, tuple[str, ...], str] | None = None,
) -> bool:
    """Upsert ordered children by the agent's id (else by position) (SPEC 10).

    ``incoming``: (agent id or None, column values) in document order. Children missing
    from ``incoming`` are deleted unless their pk is in ``keep`` (they carry feedback):
    those stay, moved after the incoming ones, never deleted or re-keyed. ``text``: (run,
    target types, text column): a kept (rated) child whose text changes keeps the earlier
    text in its history (``keep_earlier_text``), for each of those target types. Writes only what changed; ordinals are parked out of the way only when children really move, so
    ``UNIQUE(run, ordinal)`` never trips. Returns whether anything changed.
    """
    by_key: dict[str, Any] = {}
    for child in existing:
        by_key.setdefault(getattr(child, key_attr) or f"#{child.ordinal}", child)
    plan: list[tuple[Any, int, str | None, dict[str, Any]]] = []
    final: dict[int, int] = {}
    for position, (agent_id, values) in enumerate(incoming, start=1):
        child = by_key.get(agent_id or f"#{position}")
        if child is not None and child.id in final:
            child = None
        if child is not None:
            final[child.id] = position
        plan.append((child, position, agent_id, values))
    position = len(plan)
    doomed = []
    for child in sorted(existing, key=lambda c: c.ordinal):
        if child.id in final:
            continue
        if child.id in keep:
            position += 1
            final[child.id] = position
        else:
            doomed.append(child)
    moving = [c for c in existing if c.id in final and c.ordinal != final[c.id]]
    for child in doomed:
        session.delete(child)
    if doomed or moving:
        session.flush()
    if moving:
        for child in moving:
            child.ordinal = -child.id
        session.flush()
        for child in moving:
            child.ordinal = final[child.id]
    changed = bool(doomed or moving)
    for child, position, agent_id, values in plan:
        if child is None:
            session.add(make(key=agent_id, ordinal=position, **values))
            changed = True
        else:
            if text is not None and child.id in keep and text[2] in values \
                    and values[text[2]] != getattr(child, text[2]):
                for target_type in text[1]:
                    keep_earlier_text(session, text[0], target_type, child.id,
                                      getattr(child, text[2]))
            changed |= assign_changed(child, values)
    session.flush()
    return changed



def keep_rated_citations(
    session: Session, run: Run, incoming: list[tuple[str | None, dict[str, Any]]]
) -> None:
    """A citation that carries feedback is never dropped from its message (SPEC 10): if a
    re-ingested message no longer lists it, it is appended back."""
    rated: dict[int, set[str]] = {}
    for target_id, subject in session.execute(
        select(Feedback.target_id, Feedback.subject_key).where(
            Feedback.run_pk == run.id, Feedback.target_type == TargetType.CITATION.value)
    ):
        rated.setdefault(target_id, set()).add(subject)
    if not rated:
        return
    by_key = {m.message_id or f"#{m.ordinal}": m for m in run.messages}
    for position, (agent_id, values) in enumerate(incoming, start=1):
        message = by_key.get(agent_id or f"#{position}")
        if message is None or message.id not in rated:
            continue
        citations = list(values["meta"].get("citations") or [])
        present = {c.get("id") for c in citations}
        for old in message.citations:
            if old.get("id") in rated[message.id] and old.get("id") not in present:
                citations.append(old)
        if citations:
            values["meta"] = {**values["meta"], "citations": citations}

# The message that carries a run's answer when the agent sent the answer only as the
# run's ``answer`` field (typically with ``finish``), so that it can be rated (SPEC 6.1).
ANSWER_MESSAGE_ID = "run-answer"


def ensure_answer_message(session: Session, run: Run) -> bool:
    """Give a finished run whose answer exists only as ``run.answer`` an assistant message
    with that text (``message_id`` ``run-answer``, ``metadata.source`` ``run.answer``),
    appended after the agent's messages, so its answer thumbs exist and set the verdict
    (SPEC 6.1, 6.2, 8). Nothing is added while RUNNING, without answer text, or when an
    assistant message already has text; an earlier ``run-answer`` message follows a changed
    answer. Returns whether anything changed."""
    if run.status == RunStatus.RUNNING.value or not has_answer_text(run.answer):
        return False
    messages = list(session.scalars(select(Message).where(Message.run_pk == run.id)))
    own = next((m for m in messages if m.message_id == ANSWER_MESSAGE_ID
                and (m.meta or {}).get("source") == "run.answer"), None)
    if own is not None:
        if own.content != run.answer and _rated(session, run.id, TargetType.CHAT_MESSAGE.value, own.id):
            keep_earlier_text(session, run, TargetType.CHAT_MESSAGE.value, own.id, own.content)
        return assign_changed(own, {"content": run.answer})
    if any(m.role == MessageRole.ASSISTANT.value and has_answer_text(m.content) for m in messages):
        return False
    ordinal = max((m.ordinal for m in messages), default=0) + 1
    session.add(Message(run_pk=run.id, message_id=ANSWER_MESSAGE_ID, ordinal=ordinal,
                        role=MessageRole.ASSISTANT.value, content=run.answer,
                        meta={"source": "run.answer"}))
    session.flush()
    session.expire(run, ["messages"])
    return True



def sync_report(session: Session, run: Run, report: Any) -> bool:
    content = report.get("content") if isinstance(report, Mapping) else report
    if content is None:
        return False  # a report with feedback is never deleted; absence removes nothing
    if run.report is None:
        run.report = DiagnosticReport(run_pk=run.id, content=content)
        return True
    if run.report.content != content:
        if _rated(session, run.id, TargetType.DIAGNOSTIC_REPORT.value, run.report.id):
            keep_earlier_text(session, run, TargetType.DIAGNOSTIC_REPORT.value, run.report.id,
                              run.report.content)
        run.report.content = content
        return True
    return False


