"""Where a search matched (``runs.match_places``, issue 18): a run whose many tool calls
hold the term costs what the page shows — at most ``MAX_MATCH_PLACES`` calls per run are
read and fetched — not every matching call (a run with 50,000 of them took 847 ms on
PostgreSQL). The statement is read back and run again: the rows it returns, and on
PostgreSQL the rows its scans of the calls produced (EXPLAIN ANALYZE); on SQLite the
virtual machine steps, which stay flat when the run's matching calls grow tenfold."""

from __future__ import annotations

import pytest
from sqlalchemy import event, text

from reviewapp.actors import Actor
from reviewapp.extensions import db
from reviewapp.models import Run
from reviewapp.services import runs
from reviewapp.services.runs.matches import MAX_MATCH_PLACES

SYSTEM = Actor.system_actor()
TERM = "kestrel"


def _calls(prefix: str, n: int, output: str, tool: str = "grep") -> list[dict]:
    return [{"id": f"{prefix}-{k}", "tool_name": tool, "status": "completed", "output": output}
            for k in range(n)]


def _run(session, ws, run_id: str, calls: list[dict]) -> Run:
    result = runs.upsert_run(session, SYSTEM, ws.id, run_id, {
        "session_id": f"s-{run_id}", "query": "where is the bird", "answer": "a",
        "status": "SUCCESS", "tool_calls": calls})
    session.commit()
    return result.run


def _statement(session, page: list[Run]) -> tuple[str, object, dict]:
    """The one calls statement ``match_places`` sends for ``page`` (after the sessions'
    one), its parameters, and what it answered."""
    seen = []

    def record(conn, cursor, statement, parameters, context, executemany):  # noqa: ANN001
        seen.append((statement, parameters))

    event.listen(db.engine, "before_cursor_execute", record)
    try:
        places = runs.match_places(session, page, TERM)
    finally:
        event.remove(db.engine, "before_cursor_execute", record)
    calls = [s for s in seen if "tool_call_audit" in s[0]]
    assert len(calls) == 1, seen
    return calls[0][0], calls[0][1], places


def _calls_read(session, statement: str, parameters) -> int:
    """How much the statement reads of the calls: PostgreSQL, the rows its scans of
    ``tool_call_audit`` produced or filtered out (EXPLAIN ANALYZE); SQLite, its virtual
    machine steps (a progress handler called every 10 steps)."""
    connection = session.connection()
    raw = connection.connection.driver_connection
    if connection.dialect.name == "postgresql":
        cursor = raw.cursor()
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + statement, parameters)
        plan = cursor.fetchone()[0]

        def rows(node):
            own = 0
            if node.get("Relation Name") == "tool_call_audit":  # produced and filtered out
                own = (node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)) \
                    * node.get("Actual Loops", 1)
            return own + sum(rows(child) for child in node.get("Plans", []))
        return rows(plan[0]["Plan"])
    steps = [0]

    def tick():
        steps[0] += 1
        return 0
    raw.set_progress_handler(tick, 10)
    try:
        connection.exec_driver_sql(statement, parameters).all()
    finally:
        raw.set_progress_handler(None, 10)
    return steps[0]


@pytest.fixture
def page(session, make):
    """Run 1: 300 calls hold the term (then one more tool's error); run 2: 3000 do; run
    3: two calls, the second holds it; run 4: none does (its question does not either)."""
    ws = make.workspace()
    return [
        _run(session, ws, "r-1", _calls("a", 300, "a kestrel")
             + [{"id": "a-err", "tool_name": "fetch", "status": "failed", "error": "no kestrel"}]),
        _run(session, ws, "r-2", _calls("b", 3000, "KESTREL again")),
        _run(session, ws, "r-3", _calls("c", 1, "sparrow") + _calls("d", 1, "kestrel", "look")),
        _run(session, ws, "r-4", _calls("e", 2, "sparrow")),
    ]


def test_the_places_are_those_of_the_first_matching_calls(session, page):
    one, two, three, four = page
    _, _, places = _statement(session, page)
    # The first MAX_MATCH_PLACES matching calls decide: run 1's 301st call (fetch's
    # error) comes after 300 grep results and is not read.
    assert places == {one.id: ("result of grep",), two.id: ("result of grep",),
                      three.id: ("result of look",)}
    assert four.id not in places


def test_the_calls_statement_returns_and_reads_at_most_the_cap_per_run(session, page):
    session.execute(text("ANALYZE"))  # the planner knows the runs' calls are many
    statement, parameters, _ = _statement(session, page)
    rows = session.connection().exec_driver_sql(statement, parameters).all()
    # Runs 1 and 2 at the cap, run 3 its one matching call, run 4 none.
    assert len(rows) == 2 * MAX_MATCH_PLACES + 1, rows
    small = _calls_read(session, *_statement(session, page[:1])[:2])  # 300 matching calls
    large = _calls_read(session, *_statement(session, page[1:2])[:2])  # 3000
    if session.connection().dialect.name == "postgresql":
        # The index of (run_pk, ordinal) in order, sorted by id within an ordinal: the
        # sort reads one row past the cap to see that the ordinal changed.
        assert small <= MAX_MATCH_PLACES + 1 and large <= MAX_MATCH_PLACES + 1, (small, large)
    else:  # flat, where reading every match would cost ten times as much
        assert large < small * 1.5, (small, large)
