"""Derived facts of a run, recomputed whenever its tool calls or status change (SPEC 5)."""

from __future__ import annotations

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from ..models import Run, ToolCall


def refresh_run(session: Session, run: Run) -> None:
    """Recompute ``run``'s tool-call counts (used by the run list). No commit."""
    session.flush()
    total, failed = session.execute(
        select(
            func.count(),
            func.coalesce(func.sum(case((ToolCall.status == "failed", 1), else_=0)), 0),
        ).where(ToolCall.run_pk == run.id)
    ).one()
    run.tool_call_count = int(total)
    run.failed_tool_call_count = int(failed)
