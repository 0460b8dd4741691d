"""The runs list of a user in two workspaces reads the ``(workspace_id, created_at, id)``
index instead of scanning every run (issue 18): the database's own plan of the page
statement, on enough rows (and fresh statistics) that a planner would pick an index.

PostgreSQL: no ``Seq Scan on diagnosis_run`` in ``EXPLAIN``. SQLite: no ``SCAN
diagnosis_run`` without an index in ``EXPLAIN QUERY PLAN``, and no sort (temporary
B-tree) but the outer one that merges the per-workspace ranges.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import insert, text

from reviewapp.actors import Actor, Role
from reviewapp.extensions import db
from reviewapp.models import DiagnosisSession, Membership, Run
from reviewapp.queries import runs_visible_to
from reviewapp.services import runs
from reviewapp.services.runs import RunFilters
from reviewapp.services.runs.filters import SORT_TABLE
from tests.plans import explain_rows, sent

RUNS_PER_WORKSPACE = 6_000


@pytest.fixture
def two_workspaces(session, make):
    """Two workspaces of 6,000 runs each (bulk inserted), a user who belongs to both.
    Scores 0-100 (every 10th run unscored), 0-5 tool calls, 1 in 7 runs with a failed
    one."""
    alpha, beta = make.workspace(), make.workspace()
    user = make.user(alpha, Role.REVIEWER)
    session.add(Membership(user_id=user.id, workspace_id=beta.id, role=Role.LEAD.value))
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for ws in (alpha, beta):
        sess = DiagnosisSession(session_id=f"s-{ws.id}", workspace_id=ws.id, kind="chat")
        session.add(sess)
        session.flush()
        session.execute(insert(Run.__table__), [{
            "run_id": f"r-{ws.id}-{i}", "workspace_id": ws.id, "diagnosis_session_id": sess.id,
            "kind": "chat" if i % 2 else "aiops", "query": f"q {i}", "status": "SUCCESS",
            # Values for the other orders, with ties and unscored runs (every 10th).
            "evidence_score": None if i % 10 == 0 else (i * 37) % 101,
            "tool_call_count": i % 6, "failed_tool_call_count": int(i % 7 == 0),
            "created_at": start + timedelta(seconds=2 * i + (ws.id % 2)),
            "updated_at": start} for i in range(RUNS_PER_WORKSPACE)])
    session.commit()
    session.execute(text("ANALYZE"))
    session.commit()
    return make.actor(user)


def _page_statements(session, actor: Actor, filters: RunFilters, cursor: str | None = None
                     ) -> tuple[list[tuple[str, Any]], Any]:
    """The statements ``list_runs`` sends (SQL text and parameters) and the page."""
    page, seen = sent(lambda: runs.list_runs(session, actor, limit=50, cursor=cursor, filters=filters))
    return seen, page


def _plan(session, statement: str, parameters: Any) -> str:
    rows = explain_rows(session, statement, parameters)
    if session.connection().dialect.name == "postgresql":
        return "\n".join(r[0] for r in rows)
    return "\n".join(f"{r[0]}|{r[1]}|{r[3]}" for r in rows)


# The page's marks (rated by me, blind, disputed), read by the page's run ids: the
# disputed mark counts each run's ratings and finds its governing queue (ORDER BY).
_MARKS = "SELECT diagnosis_run.id, EXISTS"


def _assert_indexed(plan: str, dialect: str) -> None:
    if dialect == "postgresql":
        assert "Seq Scan on diagnosis_run" not in plan, plan
        return
    for line in plan.splitlines():
        _, parent, detail = line.split("|", 2)
        assert not (detail.startswith("SCAN diagnosis_run") and "INDEX" not in detail), plan
        # Sorting is for the merge of the ranges (the outer query, parent 0) only.
        assert not ("TEMP B-TREE" in detail and parent != "0"), plan


def _page_statement(statements: list[tuple[str, Any]]) -> tuple[str, Any]:
    pages = [(s, p) for s, p in statements
             if "diagnosis_run" in s and "ORDER BY" in s and "count(" not in s.lower()]
    assert pages, statements
    return pages[0]


@pytest.mark.parametrize("filters", [RunFilters(), RunFilters(kind="aiops"),
                                     RunFilters(sort="oldest")], ids=["newest", "kind", "oldest"])
def test_two_workspace_runs_list_reads_the_workspace_index(session, two_workspaces, filters):
    actor = two_workspaces
    statements, page = _page_statements(session, actor, filters)
    # The page itself: the 50 newest (oldest) runs of both workspaces, interleaved —
    # workspace beta's runs are one second after alpha's of the same number.
    expected_count = 50
    assert len(page.runs) == expected_count
    created = [r.created_at for r in page.runs]
    assert created == sorted(created, reverse=filters.sort != "oldest")
    assert len({r.workspace_id for r in page.runs}) == 2
    statement, parameters = _page_statement(statements)
    _assert_indexed(_plan(session, statement, parameters), db.engine.dialect.name)


def test_second_page_and_counts_stay_on_the_index(session, two_workspaces):
    actor = two_workspaces
    first = runs.list_runs(session, actor, limit=50)
    assert (first.total_count.value, first.total_count.capped) == (10_000, True)  # 12,000
    statements, page = _page_statements(session, actor, RunFilters(), cursor=first.next_cursor)
    assert [r.id for r in page.runs][:1] != [r.id for r in first.runs][:1]
    # The page, the way back and the counts (not the per-page marks, read by run id).
    listing = [(s, p) for s, p in statements if "diagnosis_run" in s
               and ("ORDER BY" in s or "count(" in s.lower())
               and not s.startswith(_MARKS)]
    assert len(listing) == 4  # total count, page, previous page, runs before this page
    for statement, parameters in listing:
        _assert_indexed(_plan(session, statement, parameters), db.engine.dialect.name)


def test_a_later_page_seeks_to_its_cursor(session, two_workspaces):
    """The keyset condition carries the first key's own bound, so each workspace's range
    starts at the cursor instead of walking every newer run (an OR alone is a filter)."""
    first = runs.list_runs(session, two_workspaces, limit=50)
    statements, page = _page_statements(session, two_workspaces, RunFilters(),
                                        cursor=first.next_cursor)
    assert page.runs[0].created_at < first.runs[-1].created_at
    plan = _plan(session, *_page_statement(statements))
    if db.engine.dialect.name == "postgresql":
        conds = [line for line in plan.splitlines() if "Index Cond: ((workspace_id" in line]
        assert len(conds) == 2 and all("created_at <=" in line for line in conds), plan
    else:
        ranges = [line for line in plan.splitlines() if "ix_diagnosis_run_workspace_created" in line]
        assert len(ranges) == 2 and all("created_at<?" in line for line in ranges), plan


def _sorted_by_hand(runs_: list[Run], sort: str) -> list[int]:
    """Run ids in ``sort``'s order, computed in Python: unscored runs last either way,
    the id breaking ties in the key's direction."""
    def score(run: Run, missing: int) -> int:
        return missing if run.evidence_score is None else run.evidence_score
    keys = {
        "score_desc": lambda r: (-score(r, -1), -r.id),
        "score_asc": lambda r: (score(r, 101), r.id),
        "failed_desc": lambda r: (-r.failed_tool_call_count, -r.id),
        "calls_desc": lambda r: (-r.tool_call_count, -r.id),
    }
    return [r.id for r in sorted(runs_, key=keys[sort])]


# Each order besides time and the index that gives it (models/runs.py).
SORTS_BESIDES_TIME = {"score_desc": "ix_diagnosis_run_workspace_score_high",
                      "score_asc": "ix_diagnosis_run_workspace_score_low",
                      "failed_desc": "ix_diagnosis_run_workspace_failed",
                      "calls_desc": "ix_diagnosis_run_workspace_calls"}


def test_every_order_has_a_case_here():
    """A new order of the runs list needs its index, and its case in these tests."""
    assert set(SORT_TABLE) == {"newest", "oldest", *SORTS_BESIDES_TIME}


@pytest.mark.parametrize("sort", list(SORTS_BESIDES_TIME))
def test_two_workspace_sorts_read_their_index(session, two_workspaces, sort):
    """Sorted by score (either way), failed calls or calls, a two-workspace list reads
    one range of the order's own index per workspace (no scan, no sort but the merge's),
    on the first page, a later one, and its counts."""
    actor = two_workspaces
    everything = list(session.scalars(runs_visible_to(actor)))
    assert len(everything) == 2 * RUNS_PER_WORKSPACE
    expected = _sorted_by_hand(everything, sort)
    statements, first = _page_statements(session, actor, RunFilters(sort=sort))
    assert [r.id for r in first.runs] == expected[:50]
    plan = _plan(session, *_page_statement(statements))
    _assert_indexed(plan, db.engine.dialect.name)
    # One range of the order's index per workspace (PostgreSQL read another index and
    # sorted each workspace's runs: no scan, but every run read).
    assert plan.count(f" {SORTS_BESIDES_TIME[sort]} ") == 2, plan
    statements, second = _page_statements(session, actor, RunFilters(sort=sort),
                                          cursor=first.next_cursor)
    assert [r.id for r in second.runs] == expected[50:100]
    listing = [(s, p) for s, p in statements if "diagnosis_run" in s
               and ("ORDER BY" in s or "count(" in s.lower())
               and not s.startswith(_MARKS)]
    assert len(listing) == 4  # total count, page, previous page, runs before this page
    for statement, parameters in listing:
        _assert_indexed(_plan(session, statement, parameters), db.engine.dialect.name)

