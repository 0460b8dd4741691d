"""Which rating is a rating of the run's answer — the one SQL form of the rule
(SPEC 6.1 / 6.2), for every service that counts answer ratings: the verdict
(``feedback/verdict``), agreement, alignment's neighbours, review queues and their
completion, blind review and adjudication.

The answer-level target of a run (``answer_level`` rows of ``domain/target_types.py``):

- a chat run's **answer message**: its last assistant message with text, where "text"
  is ``domain.feedback.has_answer_text`` (something left after trimming
  ``ANSWER_BLANKS``, exactly what Python's ``str.strip()`` removes) — the run page's
  ``answer_message_index`` and the feedback service's target check follow the same
  Python rule, so page, rating and counts name the same message;
- an AIOps run's diagnostic report, or its answer message when it has no report (the
  conclusion then exists only as the answer text);

always with subject "" (a citation of the answer is not the answer).

The answer's **text** (what the run page shows, a case holds and the eval-set export
carries) is ``domain.feedback.answer_text``: the run's ``answer`` field, else its answer
message's text; ``answer_texts`` reads it for many runs at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import and_, exists, func, not_, or_, select
from sqlalchemy.orm import Session, aliased

from ..domain.feedback import ANSWER_BLANKS, answer_message_index, answer_text, has_answer_text
from ..models import (
    DiagnosisSession,
    DiagnosticReport,
    Feedback,
    Message,
    MessageRole,
    Run,
    RunKind,
    TargetType,
)


def has_text(content: Any) -> Any:
    """SQL: ``content`` (a message's text column) counts as answer text
    (``domain.feedback.has_answer_text``)."""
    return func.trim(func.coalesce(content, ""), ANSWER_BLANKS) != ""


def answer_rating_condition() -> Any:
    """SQL condition on ``Feedback`` joined to its ``Run`` (``Run`` must be in the
    statement: joined, or the outer run of a correlated subquery): the row rates the
    run's answer-level target (module docstring)."""
    later = aliased(Message)
    assistant = MessageRole.ASSISTANT.value
    answer_message = exists().where(
        Message.id == Feedback.target_id, Message.run_pk == Feedback.run_pk,
        Message.role == assistant, has_text(Message.content),
        not_(exists().where(later.run_pk == Message.run_pk, later.role == assistant,
                            later.ordinal > Message.ordinal, has_text(later.content))),
    )
    # Keyed by the rating's own run, not ``Run.id``: nested in a correlated subquery (the
    # blind rule's "rated it"), a reference to ``Run`` would not reach the outer run.
    has_report = exists().where(DiagnosticReport.run_pk == Feedback.run_pk)
    return and_(Feedback.subject_key == "", or_(
        and_(Feedback.target_type == TargetType.CHAT_MESSAGE.value, answer_message,
             or_(Run.kind == RunKind.CHAT.value, not_(has_report))),
        and_(Feedback.target_type == TargetType.DIAGNOSTIC_REPORT.value,
             Run.kind == RunKind.AIOPS.value),
    ))


def has_answer_target() -> Any:
    """SQL condition on ``Run`` (in the statement, or the outer run of a correlated
    subquery): the run has an answer-level target (module docstring; ``answer_target``'s
    rule): an AIOps run with a report, or any run with an assistant message with text.
    What a review queue asks of a run (``runs.queue_fill``)."""
    return or_(
        and_(Run.kind == RunKind.AIOPS.value, exists().where(DiagnosticReport.run_pk == Run.id)),
        exists().where(Message.run_pk == Run.id, Message.role == MessageRole.ASSISTANT.value,
                       has_text(Message.content)),
    )


def answer_target(kind: str, answer_message_id: int | None, report_id: int | None
                  ) -> tuple[str, int] | None:
    """The run's answer-level target as ``(target_type, target_id)`` (module docstring),
    in Python for a page that has the run's parts: ``kind`` the run's kind,
    ``answer_message_id`` its answer message (``answer_message_index``; ``None`` when it
    has none), ``report_id`` its diagnostic report (``None`` when none). ``None`` when
    the run has no answer-level target."""
    if kind == RunKind.AIOPS.value and report_id is not None:
        return TargetType.DIAGNOSTIC_REPORT.value, report_id
    if answer_message_id is not None:
        return TargetType.CHAT_MESSAGE.value, answer_message_id
    return None


def run_answer_target(session: Session, run_pk: int, kind: str) -> tuple[str, int] | None:
    """``answer_target`` of run ``run_pk`` (of kind ``kind``) read from the database: its
    report's id and its messages in order (``answer_message_index``), two queries. For a
    reader that has not the run's parts at hand (a thumbs fragment); no access check."""
    report_id = session.scalar(select(DiagnosticReport.id).where(DiagnosticReport.run_pk == run_pk))
    messages = session.execute(select(Message.id, Message.role, Message.content)
                               .where(Message.run_pk == run_pk).order_by(Message.ordinal)).all()
    index = answer_message_index([(role, content) for _, role, content in messages])
    return answer_target(kind, messages[index].id if index is not None else None, report_id)


def answer_texts(session: Session, answers: Mapping[int, str | None]) -> dict[int, str]:
    """The answer text (``domain.feedback.answer_text``) of each run, keyed by run pk:
    ``answers`` maps a run's pk to its ``answer`` field. Only runs whose field has no text
    read their messages: one query for all of them (their assistant messages with text,
    in order). "" for a run with no answer at all."""
    texts = {pk: answer or "" for pk, answer in answers.items() if has_answer_text(answer)}
    missing = [pk for pk in answers if pk not in texts]
    if not missing:
        return texts
    messages: dict[int, list[tuple[str, str | None]]] = {pk: [] for pk in missing}
    for run_pk, role, content in session.execute(
        select(Message.run_pk, Message.role, Message.content)
        .where(Message.run_pk.in_(missing), Message.role == MessageRole.ASSISTANT.value,
               has_text(Message.content))
        .order_by(Message.run_pk, Message.ordinal)
    ):
        messages[run_pk].append((role, content))
    return texts | {pk: answer_text(answers[pk], messages[pk]) for pk in missing}


def answer_text_of(session: Session, target: Run | DiagnosisSession) -> str:
    """The answer text of one run (``answer_texts``), or of a legacy session: its own
    ``answer`` field (it has no messages). "" when it has none."""
    if isinstance(target, DiagnosisSession):
        return (target.answer or "") if has_answer_text(target.answer) else ""
    return answer_texts(session, {target.id: target.answer})[target.id]
