"""The case a verdict makes, withdraws or restores (SPEC 7): the building blocks of
``verdict`` (split from it by concern). No access check, no commit: the caller
resolved the run through the actor's scope and commits."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from ...models import (
    Case,
    DiagnosisSession,
    Run,
    SourceType,
)
from ...models.base import utcnow
from ...models.cases import new_case_id
from ...queries import insert_for
from ..answer import answer_text_of

AUTO_CASE_AUTHOR = "system"
AUTO_CASE_CATEGORY = "GENERAL"
TITLE_MAX_CHARS = 100


def get_or_create_auto_case(session: Session, run_or_legacy_session: Run | DiagnosisSession,
                            author: str = AUTO_CASE_AUTHOR, answer: str | None = None) -> Case:
    """The case of a useful run, created on first use (SPEC 7). No access check, no commit.

    ``diagnosis_id`` is the run's ``run_id``, or the ``session_id`` of a legacy session
    (which has no runs). A new case gets ``source_type`` AUTO, ``fault_category`` GENERAL,
    ``title`` = the first 100 characters of the query, ``root_cause`` = ``solution`` = the
    answer the run page shows (``answer.answer_text_of``: the ``answer`` field, else the
    answer message; ``None`` when it has none) and ``created_by`` ``author`` ("system" unless a lead's decision made it:
    then the lead's username, at most 80 characters). An existing case for the same (workspace,
    diagnosis_id), automatic or manual, is returned unchanged: curated edits survive
    further ``useful`` verdicts. ``answer``: that text when the caller has read it already
    (``promote_useful``), so the run's messages are read once.

    Idempotent under concurrent submits: the row is written with ``INSERT … ON CONFLICT
    DO NOTHING`` on the unique (workspace_id, diagnosis_id), then read back, so racing
    callers end with the same case and none of them sees an error.
    """
    if isinstance(run_or_legacy_session, Run):
        run_pk: int | None = run_or_legacy_session.id
        diagnosis_id = run_or_legacy_session.run_id
    else:
        run_pk = None
        diagnosis_id = run_or_legacy_session.session_id
    workspace_id = run_or_legacy_session.workspace_id
    query = run_or_legacy_session.query or ""
    if answer is None:
        answer = answer_text_of(session, run_or_legacy_session)
    answer = answer or None

    session.flush()
    now = utcnow()
    session.execute(
        insert_for(session, Case.__table__)
        .values(
            case_id=new_case_id(),
            workspace_id=workspace_id,
            diagnosis_id=diagnosis_id,
            run_pk=run_pk,
            source_type=SourceType.AUTO.value,
            fault_category=AUTO_CASE_CATEGORY,
            title=query[:TITLE_MAX_CHARS],
            root_cause=answer,
            solution=answer,
            created_by=author[:80],
            version=1,
            created_at=now,
            updated_at=now,
        )
        .on_conflict_do_nothing(index_elements=["workspace_id", "diagnosis_id"])
    )
    return session.scalars(
        select(Case).where(Case.workspace_id == workspace_id, Case.diagnosis_id == diagnosis_id)
    ).one()


def promotion_blocker(session: Session, target: Run | DiagnosisSession) -> str | None:
    """Why a ``useful`` run (or legacy session) cannot become a case yet, or ``None``.

    A case is the run's query and answer (SPEC 7), so only a finished run with an
    answer is promoted: a RUNNING run or one with no answer text (``answer.answer_text_of``,
    the answer the run page shows) would make an empty case in the library. Reasons:
    "the run is still RUNNING", "the run has no answer", or both together. Reads the
    run's messages when its ``answer`` field is empty; no write.
    """
    return _blocker(target, answer_text_of(session, target))


def _blocker(target: Run | DiagnosisSession, answer: str) -> str | None:
    running = target.status == "RUNNING"
    no_answer = not answer
    if running and no_answer:
        return "the run is still RUNNING and has no answer yet"
    if running:
        return "the run is still RUNNING"
    if no_answer:
        return "the run has no answer"
    return None


def promote_useful(session: Session, target: Run | DiagnosisSession,
                   author: str = AUTO_CASE_AUTHOR) -> Case | None:
    """The case of a ``useful`` run or legacy session (SPEC 6.2, 7): created when
    ``promotion_blocker`` finds nothing in the way (``get_or_create_auto_case``),
    otherwise the run's existing case if it has one (e.g. a MANUAL one), else ``None``
    (the verdict is kept; the run is promoted once it finishes with an answer). No
    access check, no commit."""
    answer = answer_text_of(session, target)
    if _blocker(target, answer) is None:
        return get_or_create_auto_case(session, target, author, answer)
    diagnosis_id = target.run_id if isinstance(target, Run) else target.session_id
    return session.scalars(select(Case).where(
        Case.workspace_id == target.workspace_id, Case.diagnosis_id == diagnosis_id)).one_or_none()


def _case_of(session: Session, run: Run) -> Case | None:
    return session.scalars(select(Case).where(
        Case.workspace_id == run.workspace_id, Case.diagnosis_id == run.run_id)).one_or_none()


def case_edited(case: Case) -> bool:
    """Whether a person made or edited ``case``: a MANUAL case, or any saved edit
    (``version`` > 1; the app never bumps it)."""
    return case.source_type != SourceType.AUTO.value or case.version > 1


def case_left_useful(session: Session, run: Run) -> Case | None:
    """The run's verdict left ``useful`` (to not_useful or none; SPEC 7): an AUTO case no
    person has edited is withdrawn (``withdrawn_at``: kept, gone from the library and
    the exports); any other case stays, flagged "run no longer judged useful"
    (``run_not_useful_at``). Returns the case, or ``None``. No access check, no commit."""
    case = _case_of(session, run)
    if case is None:
        return None
    now = utcnow()
    if case_edited(case):
        case.run_not_useful_at = case.run_not_useful_at or now
    else:
        case.withdrawn_at = case.withdrawn_at or now
    return case


def restore_case(session: Session, run: Run) -> Case | None:
    """The run is judged ``useful`` again: its withdrawn case is back in the library and
    the flag is cleared (SPEC 7). Returns the case, or ``None``. No commit."""
    case = _case_of(session, run)
    if case is not None and (case.withdrawn_at is not None or case.run_not_useful_at is not None):
        case.withdrawn_at = None
        case.run_not_useful_at = None
    return case
