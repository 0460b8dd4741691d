"""The triage list of a lead of two workspaces reads one range of the
``(workspace_id, state, created_at, id)`` index per workspace and shown state, in its
order, and merges them (issue 18): the database's own plan of the page statement, on
enough rows (and fresh statistics) that a planner would pick an index. Before, the list
and its counts read and sorted every item of both workspaces.

PostgreSQL: ``ix_triage_item_workspace_state`` scanned, no ``Seq Scan on triage_item``,
one ``Sort`` (the merge). SQLite: the index searched, no ``SCAN triage_item``, one
temporary B-tree (the merge)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert, text

from reviewapp.actors import Role
from reviewapp.models import DiagnosisSession, Membership, Run, TriageItem
from reviewapp.services import triage
from reviewapp.services.triage import TriageFilters
from tests.plans import explain, sent

ITEMS_PER_WORKSPACE = 3_000
STATES = ("new", "new", "triaged", "resolved", "wont_fix")


@pytest.fixture
def lead_of_two(session, make):
    alpha, beta = make.workspace(), make.workspace()
    lead = make.user(alpha, Role.LEAD)
    session.add(Membership(user_id=lead.id, workspace_id=beta.id, role=Role.LEAD.value))
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for ws in (alpha, beta):
        sess = DiagnosisSession(session_id=f"s-{ws.id}", workspace_id=ws.id, kind="chat")
        session.add(sess)
        session.flush()
        first = session.execute(insert(Run.__table__).returning(Run.id), [{
            "run_id": f"r-{ws.id}-{i}", "workspace_id": ws.id, "diagnosis_session_id": sess.id,
            "kind": "chat", "query": f"q {i}", "status": "SUCCESS", "feedback": "not_useful",
            "created_at": start, "updated_at": start} for i in range(ITEMS_PER_WORKSPACE)],
        ).scalars().all()
        session.execute(insert(TriageItem.__table__), [{
            "workspace_id": ws.id, "run_pk": pk, "state": STATES[i % len(STATES)],
            "opened_reason": "not_useful", "version": 1,
            "created_at": start + timedelta(seconds=2 * i + ws.id % 2), "updated_at": start}
            for i, pk in enumerate(first)])
    session.commit()
    session.execute(text("ANALYZE"))
    session.commit()
    return make.actor(lead)


def _page_plan(session, actor, filters):
    page, seen = sent(lambda: triage.list_items(session, actor, filters))
    pages = [(s, p) for s, p in seen if "triage_item.opened_reason" in s]
    assert len(pages) == 1
    statement, parameters = pages[0]
    return page, explain(session, statement, parameters)


@pytest.mark.parametrize("state", ["open", None])
def test_the_triage_list_merges_index_ranges(session, lead_of_two, state):
    page, plan = _page_plan(session, lead_of_two, TriageFilters(state=state))
    assert len(page.rows) == 50
    created = [row.created_at for row in page.rows]
    assert created == sorted(created, reverse=True)
    if session.connection().dialect.name == "postgresql":
        assert "ix_triage_item_workspace_state on triage_item" in plan, plan
        assert "Seq Scan on triage_item" not in plan, plan
        assert plan.count("Sort Key") == 1, plan
    else:
        assert "INDEX ix_triage_item_workspace_state (workspace_id=? AND state=?)" in plan, plan
        assert "SCAN triage_item" not in plan, plan
        assert plan.count("TEMP B-TREE") == 1, plan
