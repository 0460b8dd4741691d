"""The case library (SPEC 7): useful runs become cases.

``get_or_create_auto_case`` is a building block of the verdict use case in
``services/feedback.py``: it neither checks access (its caller already resolved the run
through the actor's scope) nor commits (the caller's transaction does).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..models import Case, DiagnosisSession, Run, SourceType
from ..models.base import utcnow
from ..models.cases import new_case_id
from ..queries import insert_for

AUTO_CASE_AUTHOR = "system"
AUTO_CASE_CATEGORY = "GENERAL"
TITLE_MAX_CHARS = 100


def get_or_create_auto_case(session: Session, run_or_legacy_session: Run | DiagnosisSession) -> Case:
    """The case of a useful run, created on first use (SPEC 7). No access check, no commit.

    ``diagnosis_id`` is the run's ``run_id``, or the ``session_id`` of a legacy session
    (which has no runs). A new case gets ``source_type`` AUTO, ``fault_category`` GENERAL,
    ``title`` = the first 100 characters of the query, ``root_cause`` = ``solution`` = the
    answer and ``created_by`` "system". An existing case for the same (workspace,
    diagnosis_id), automatic or manual, is returned unchanged: curated edits survive
    further ``useful`` verdicts.

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
    answer = run_or_legacy_session.answer

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
            created_by=AUTO_CASE_AUTHOR,
            version=1,
            created_at=now,
            updated_at=now,
        )
        .on_conflict_do_nothing(index_elements=["workspace_id", "diagnosis_id"])
    )
    return session.scalars(
        select(Case).where(Case.workspace_id == workspace_id, Case.diagnosis_id == diagnosis_id)
    ).one()
