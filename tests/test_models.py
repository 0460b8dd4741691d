"""Model-level storage rules."""

from __future__ import annotations

from sqlalchemy import func, select

from reviewapp.models import Run


def test_absent_json_values_are_stored_as_sql_null(session, make):
    """A JSON column given None holds SQL NULL, so ``IS NULL`` finds it (not JSON 'null')."""
    ws = make.workspace()
    run = make.run(ws, status="RUNNING", answer=None)
    assert run.alert is None
    found = session.scalar(
        select(func.count()).select_from(Run).where(Run.id == run.id, Run.alert.is_(None),
                                                    Run.orchestration_trace.is_(None)))
    assert found == 1
