"""The search index's write path (issue 18): a tool call's text goes into its own row
when the call is created or its text changes, so an event costs its own text, never the
run's; re-sent or updated events never duplicate a row or a hit; deleted runs, calls
and workspaces leave no rows behind."""

from __future__ import annotations

import pytest
from sqlalchemy import event, text

from reviewapp import search_index
from reviewapp.actors import Actor
from reviewapp.models import Run
from reviewapp.services import run_text, runs, tool_calls
from reviewapp.services.runs import RunFilters

SYSTEM = Actor.system_actor()
SEP = "\x1f"


def _found(session, actor, q):
    return [r.id for r in runs.list_runs(session, actor, limit=100,
                                         filters=RunFilters.from_params({"q": q})).runs]


def _call_rows(session):
    return sorted(tuple(row) for row in session.execute(text(
        f"SELECT call_id, run_pk, text FROM {search_index.CALL_TABLE}")))


def _run_other(session, pk):
    key = "rowid" if session.get_bind().dialect.name == "sqlite" else "run_pk"
    return session.execute(text(f"SELECT other FROM {search_index.SEARCH_TABLE} WHERE {key} = :pk"),
                           {"pk": pk}).scalar_one()


def _fts_hits(session, term):
    """Entries of the calls' index holding ``term``: the database's own index (FTS5
    MATCH on SQLite, the trigram GIN index's LIKE on PostgreSQL)."""
    if session.get_bind().dialect.name == "sqlite":
        return session.execute(text("SELECT count(*) FROM run_search_call_text WHERE run_search_call_text "
                                    "MATCH :p"), {"p": search_index.fts_phrase(term)}).scalar_one()
    return session.execute(text(f"SELECT count(*) FROM {search_index.CALL_TABLE} WHERE text LIKE :p"),
                           {"p": search_index.like_pattern(term)}).scalar_one()


@pytest.fixture
def running(session, make):
    ws = make.workspace()
    actor = make.actor(make.user(ws))
    run = make.run(ws, "live-1", query="live question", answer=None, status="RUNNING", session_id="S-Live")
    session.commit()
    return ws, actor, run


def test_a_tool_event_writes_its_own_calls_row_and_is_found(session, running):
    ws, actor, run = running
    tool_calls.apply_events(session, SYSTEM, ws.id, [
        {"id": "ev-1", "run_id": "live-1", "event": "started", "tool_name": "Kubectl_Get",
         "arguments": {"pod": "Quokka-7"}}])
    assert _found(session, actor, "quokka-7") == [run.id]
    assert _call_rows(session) == [("ev-1", run.id, 'kubectl_get' + SEP + '{"pod": "quokka-7"}')]
    tool_calls.apply_events(session, SYSTEM, ws.id, [
        {"id": "ev-1", "run_id": "live-1", "event": "failed", "error": "Pod Evicted: disk pressure"}])
    assert _found(session, actor, "evicted: disk") == [run.id]
    assert _call_rows(session) == [
        ("ev-1", run.id, 'kubectl_get' + SEP + '{"pod": "quokka-7"}' + SEP + "pod evicted: disk pressure")]
    # The run's own row holds its ids only; its question is still found.
    assert _run_other(session, run.id) == "live-1" + SEP + "s-live"
    assert _found(session, actor, "live question") == [run.id]


def test_an_event_writes_one_index_row_and_reads_none_of_the_runs_other_calls(session, running):
    ws, _, run = running
    tool_calls.apply_events(session, SYSTEM, ws.id, [
        {"id": f"old-{i}", "run_id": "live-1", "event": "completed", "tool_name": "t",
         "output": f"result {i}"} for i in range(30)])
    statements = []

    def record(conn, cursor, statement, parameters, context, executemany):
        statements.append((statement, parameters))

    engine = session.get_bind()
    event.listen(engine, "before_cursor_execute", record)
    try:
        tool_calls.apply_events(session, SYSTEM, ws.id, [
            {"id": "new-1", "run_id": "live-1", "event": "started", "tool_name": "grep"}])
    finally:
        event.remove(engine, "before_cursor_execute", record)
    writes = [params for sql, params in statements if f"INTO {search_index.CALL_TABLE}" in sql]
    assert len(writes) == 1
    rows = writes[0] if isinstance(writes[0], list) else [writes[0]]
    assert len(rows) == 1
    assert not [sql for sql, _ in statements if "run_search " in sql or "run_pk IN" in sql]
    assert len(_call_rows(session)) == 31 and _run_other(session, run.id) == "live-1" + SEP + "s-live"


def test_resent_and_updated_events_do_not_duplicate_rows_or_hits(session, running, make):
    ws, actor, run = running
    done = [{"id": "dup-1", "run_id": "live-1", "event": "completed", "tool_name": "search_flights",
             "output": "flight ZZX903", "timestamp": "2026-05-01T10:00:05Z"}]
    tool_calls.apply_events(session, SYSTEM, ws.id, done)
    results = tool_calls.apply_events(session, SYSTEM, ws.id, done)  # re-sent: unchanged
    assert [r.result for r in results] == ["unchanged"]
    # A late started event on the compensated row updates it (the call's text stays).
    results = tool_calls.apply_events(session, SYSTEM, ws.id, [
        {"id": "dup-1", "run_id": "live-1", "event": "started", "tool_name": "search_flights",
         "arguments": {"to": "NRT"}, "timestamp": "2026-05-01T10:00:00Z"}])
    assert [r.result for r in results] == ["updated"]
    # Another call of the same run holds the term too: the run is still found once.
    tool_calls.apply_events(session, SYSTEM, ws.id, [
        {"id": "dup-2", "run_id": "live-1", "event": "completed", "tool_name": "t", "output": "zzx903 again"}])
    assert _found(session, actor, "zzx903") == [run.id]
    assert _fts_hits(session, "zzx903") == 2  # one entry per call, no stale or doubled one
    assert [row[0] for row in _call_rows(session)] == ["dup-1", "dup-2"]
    assert _call_rows(session)[0][2] == "search_flights" + SEP + '{"to": "nrt"}' + SEP + "flight zzx903"
    assert search_index.count_matches(session.connection(), "zzx903", 10) == 1
    assert run_text.match_load(session, "zzx903") == (False, False)


def test_a_reingested_document_replaces_a_calls_text_and_an_unchanged_one_writes_nothing(session, make):
    ws = make.workspace()
    actor = make.actor(make.user(ws))
    doc = {"session_id": "S-1", "query": "q", "answer": "a", "status": "SUCCESS", "tool_calls": [
        {"id": "d-1", "tool_name": "lookup", "output": "wombat-1 healthy"},
        {"id": "d-2", "tool_name": "lookup", "output": "other"}]}
    run = runs.upsert_run(session, SYSTEM, ws.id, "doc-1", doc).run
    assert _found(session, actor, "wombat-1") == [run.id]
    statements = []

    def record(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    engine = session.get_bind()
    event.listen(engine, "before_cursor_execute", record)
    try:
        assert runs.upsert_run(session, SYSTEM, ws.id, "doc-1", doc).result == "unchanged"
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert not [s for s in statements if search_index.CALL_TABLE in s]
    doc["tool_calls"][0]["output"] = "wombat-2 degraded"
    runs.upsert_run(session, SYSTEM, ws.id, "doc-1", doc)
    assert _found(session, actor, "wombat-1") == []
    assert _found(session, actor, "wombat-2") == [run.id]
    assert [row[:2] for row in _call_rows(session)] == [("d-1", run.id), ("d-2", run.id)]


def test_a_deleted_run_or_workspace_leaves_no_index_rows(session, make):
    ws, kept = make.workspace(), make.workspace()
    calls = [{"id": "x-1", "tool_name": "t", "output": "numbat"}]
    gone = make.run(ws, "gone-1", tool_calls=calls).id
    in_gone_ws = make.run(ws, "gone-2", tool_calls=[{"id": "x-2", "tool_name": "t", "output": "numbat"}]).id
    stays = make.run(kept, "stays-1", tool_calls=[{"id": "x-1", "tool_name": "t", "output": "numbat"}]).id
    session.commit()
    assert {row[1] for row in _call_rows(session)} == {gone, in_gone_ws, stays}
    session.delete(session.get(Run, gone))
    session.commit()
    assert {row[1] for row in _call_rows(session)} == {in_gone_ws, stays}
    session.execute(text("DELETE FROM workspace WHERE id = :id"), {"id": ws.id})
    session.commit()
    assert _call_rows(session) == [("x-1", stays, "t" + SEP + "numbat")]
    assert _fts_hits(session, "numbat") == 1
