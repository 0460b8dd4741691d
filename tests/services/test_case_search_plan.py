"""The case search reads the ``(workspace_id, created_at, case_id)`` index in its order
and stops at the page (issue 18): the database's own plan of the page statement, on
enough rows (and fresh statistics) that a planner would pick an index. A substring
filter used to be estimated by PostgreSQL as a few rows (``LIKE '%deploy%'``), so it
fetched every case of the workspace, joined its run and sorted them (50 ms at 10,000
cases); ``HoldsText`` gets the default estimate and the ordered index scan.

PostgreSQL: an ``Index Scan`` of that index on ``case_library``, no ``Bitmap Heap
Scan`` / ``Seq Scan`` of it, no ``Sort`` under the page's LIMIT but the merge of the
workspaces. SQLite: the index searched, no temporary B-tree but the merge's."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert, text

from reviewapp.actors import Role
from reviewapp.models import Case, Membership
from reviewapp.services import cases
from reviewapp.services.cases import CaseFilters
from tests.plans import explain, sent

CASES_PER_WORKSPACE = 4_000


@pytest.fixture
def two_workspaces(session, make):
    """Two workspaces of 4,000 cases each (bulk inserted, every one matching "deploy"),
    a reviewer of the first who leads the second, and a reviewer of the first only."""
    alpha, beta = make.workspace(), make.workspace()
    both = make.user(alpha, Role.REVIEWER)
    session.add(Membership(user_id=both.id, workspace_id=beta.id, role=Role.LEAD.value))
    one = make.user(alpha, Role.REVIEWER)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for ws in (alpha, beta):
        session.execute(insert(Case.__table__), [{
            "case_id": str(uuid.UUID(int=ws.id * 10**6 + i)), "workspace_id": ws.id,
            "diagnosis_id": f"d-{ws.id}-{i}", "source_type": "AUTO", "fault_category": "GENERAL",
            "title": f"Connection pool exhausted by deploy {i}", "root_cause": "Leak.",
            "solution": "Roll back.", "service": f"service-{i % 50}", "created_by": "system",
            "version": 1, "created_at": start + timedelta(seconds=2 * i + ws.id % 2),
            "updated_at": start} for i in range(CASES_PER_WORKSPACE)])
    session.commit()
    session.execute(text("ANALYZE"))
    session.commit()
    return make.actor(both), make.actor(one)


def _page_statement(session, actor):
    page, seen = sent(lambda: cases.list_cases(session, actor, CaseFilters(q="Deploy")))
    pages = [(s, p) for s, p in seen if "case_library.title" in s and "count(" not in s]
    assert len(pages) == 1
    return pages[0], page


_plan = explain


@pytest.mark.parametrize("who", ["two workspaces", "one workspace"])
def test_the_case_search_walks_the_index_in_its_order(session, two_workspaces, who):
    actor = two_workspaces[0 if who == "two workspaces" else 1]
    (statement, parameters), page = _page_statement(session, actor)
    assert len(page.rows) == 50 and page.total_capped  # 4,000 matches, counted to 1,000
    plan = _plan(session, statement, parameters)
    if session.connection().dialect.name == "postgresql":
        assert "ix_case_library_workspace_created on case_library" in plan, plan
        assert "Seq Scan on case_library" not in plan and "Bitmap" not in plan, plan
        sorts = plan.count("Sort Key")
        assert sorts == (1 if who == "two workspaces" else 0), plan
    else:
        assert "USING INDEX ix_case_library_workspace_created" in plan, plan
        assert "SCAN case_library" not in plan, plan
        sorts = plan.count("TEMP B-TREE")
        assert sorts == (1 if who == "two workspaces" else 0), plan
