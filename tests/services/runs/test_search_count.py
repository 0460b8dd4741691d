"""The search's match count (``search_index.count_matches``, issue 18): a run counts
once however many of its rows hold the term, the count is exact below the cap and the
cap above it, and reaching the cap stops reading the index — a term held by very many
tool calls of few runs costs the cap, not every call (SQLite and PostgreSQL)."""

from __future__ import annotations

from sqlalchemy import event, text

from reviewapp import search_index
from reviewapp.actors import Actor
from reviewapp.services import runs

SYSTEM = Actor.system_actor()
TERM = "kestrel"


def _calls(prefix, n, output):
    return [{"id": f"{prefix}-{k}", "tool_name": "grep", "output": output} for k in range(n)]


def _doc(query, calls):
    return {"session_id": "S-1", "query": query, "answer": "a", "status": "SUCCESS", "tool_calls": calls}


def _runs(session, make):
    """Run 1: its question and 3 calls hold the term; run 2: 200 of its calls; run 3: its
    question only; run 4: nothing. Three runs hold it."""
    ws = make.workspace()
    runs.upsert_run(session, SYSTEM, ws.id, "r-1", _doc("a Kestrel nest", _calls("a", 3, "kestrel seen")))
    runs.upsert_run(session, SYSTEM, ws.id, "r-2", _doc("q", _calls("b", 200, "KESTREL again")
                                                        + _calls("c", 2, "none")))
    runs.upsert_run(session, SYSTEM, ws.id, "r-3", _doc("kestrel only here", []))
    runs.upsert_run(session, SYSTEM, ws.id, "r-4", _doc("no bird", _calls("d", 2, "sparrow")))
    session.commit()


def test_the_count_is_exact_below_the_cap_and_the_cap_above_it(session, make):
    _runs(session, make)
    connection = session.connection()
    assert [search_index.count_matches(connection, TERM, cap) for cap in (1, 2, 3, 4, 10)] == [1, 2, 3, 3, 3]
    assert search_index.count_matches(connection, "sparrow", 10) == 1
    assert search_index.count_matches(connection, "no such word", 10) == 0


def _call_rows_read(session, cap):
    """How much of the calls' index the count reads with ``cap``: PostgreSQL, the rows
    the scans of ``run_search_call`` returned (EXPLAIN ANALYZE); SQLite, the virtual
    machine steps of the statement (a progress handler called every 10 steps)."""
    connection = session.connection()
    if connection.dialect.name == "postgresql":
        seen = []

        def record(conn, cursor, statement, parameters, context, executemany):
            seen.append((statement, parameters))
        event.listen(connection.engine, "before_cursor_execute", record)
        try:
            search_index.count_matches(connection, TERM, cap)
        finally:
            event.remove(connection.engine, "before_cursor_execute", record)
        (statement, parameters), = seen
        cursor = connection.connection.driver_connection.cursor()
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + statement, parameters)
        plan = cursor.fetchone()[0]

        def rows(node):
            own = node.get("Actual Rows", 0) if node.get("Relation Name") == search_index.CALL_TABLE else 0
            return own + sum(rows(child) for child in node.get("Plans", []))
        return rows(plan[0]["Plan"])
    raw = connection.connection.driver_connection
    steps = [0]

    def tick():
        steps[0] += 1
        return 0
    raw.set_progress_handler(tick, 10)
    try:
        search_index.count_matches(connection, TERM, cap)
    finally:
        raw.set_progress_handler(None, 10)
    return steps[0]


def test_reaching_the_cap_stops_reading_the_calls_index(session, make):
    _runs(session, make)
    session.execute(text("ANALYZE"))
    # Cap 3: runs 1 and 3 (their own rows) and run 2 (its first matching call) reach it;
    # the rest of run 2's 200 matching call rows need not be read. Above the cap the
    # count reads all 203 matching call rows (run 1's three too).
    capped, full = _call_rows_read(session, 3), _call_rows_read(session, 10)
    assert capped * 2 < full, (capped, full)
