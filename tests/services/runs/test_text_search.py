"""The runs list's text search through the full-text index (issue 18, SPEC 8): exact
results on hand-written runs (ASCII, CJK, punctuation, LIKE wildcards, case folding, a
word in no run), the rank, the index kept in step by every writing path, short terms,
the excerpt, and that the database answers from the index (its plan)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, text

from reviewapp import search_index
from reviewapp.actors import Actor
from reviewapp.models import Run
from reviewapp.services import run_text, runs, tool_calls
from reviewapp.services.runs import RunFilters

SYSTEM = Actor.system_actor()


def _index_rows(session):
    key = "rowid" if session.get_bind().dialect.name == "sqlite" else "run_pk"
    return {pk: (query, answer, other) for pk, query, answer, other in session.execute(
        text(f"SELECT {key}, query, answer, other FROM run_search"))}


def _found(session, actor, q, **kw):
    return [r.id for r in runs.list_runs(session, actor, limit=100,
                                         filters=RunFilters.from_params({"q": q, **kw})).runs]


@pytest.fixture
def world(session, make):
    ws, foreign = make.workspace(), make.workspace()
    actor = make.actor(make.user(ws))
    made = {
        "disk": make.run(ws, "r-disk", query="Why is the disk 100% full on db-1?",
                         answer="Log rotation stopped; /var/log grew."),
        "cjk": make.run(ws, "r-cjk", query="订单服务为什么超时？", answer="数据库连接池耗尽。"),
        "punct": make.run(ws, "r-punct", query="Error: E_CONN_RESET (code=104)",
                          answer="Retry with back-off."),
        "strasse": make.run(ws, "r-strasse", query="Lieferadresse Hauptstraße 5",
                            answer="ÉCHEC de la livraison"),
        "calls": make.run(ws, "r-calls", query="Change flight", answer="Changed.", tool_calls=[
            {"id": "call-1", "tool_name": "search_flights", "status": "completed",
             "arguments": {"city": "東京"}, "output": "flight ZZX903"},
            {"id": "call-2", "tool_name": "book", "status": "failed",
             "error": "seat map unavailable"}]),
    }
    make.run(foreign, "f-disk", query="foreign disk 100% full", answer="foreign")
    session.commit()
    return {"actor": actor, "ws": ws, **{k: v.id for k, v in made.items()}}


@pytest.mark.parametrize("q, expected", [
    ("disk 100%", ["disk"]),               # ASCII with a LIKE wildcard, taken literally
    ("100%", ["disk"]),
    ("E_CONN", ["punct"]),                 # "_" is a character, not "any one"
    ("(code=104)", ["punct"]),             # punctuation only matters as itself
    ("/var/log", ["disk"]),
    ("为什么超时", ["cjk"]),                 # CJK, no spaces between words
    ("连接池", ["cjk"]),                     # in the answer
    ("STRASSE", ["strasse"]),              # full case folding: ß is ss
    ("hauptstrasse", ["strasse"]),
    ("échec", ["strasse"]),                # É folds to é
    ("zzx903", ["calls"]),                 # a tool call's result, any case
    ("seat map", ["calls"]),               # a tool call's error
    ("r-punc", ["punct"]),                 # part of a run id
    ("quantum entanglement", []),          # a word in no run
    ("%%%", []),
    ("___", []),
])
def test_search_finds_exactly_the_runs_holding_the_term(session, world, q, expected):
    assert _found(session, world["actor"], q) == [world[name] for name in expected]


def test_a_two_character_cjk_word_is_found_and_the_page_says_how(session, world):
    # "東京" is in a tool call's arguments: two characters, too few for a trigram, so
    # looked for without the index in the newest runs.
    page = runs.list_runs(session, world["actor"], filters=RunFilters.from_params({"q": "東京"}))
    assert [r.id for r in page.runs] == [world["calls"]]
    assert page.search_note is not None and "3 characters" in page.search_note


def test_a_term_in_the_question_ranks_before_one_in_the_answer_then_elsewhere(session, make):
    ws = make.workspace()
    actor = make.actor(make.user(ws))
    # Made in this order, so "newest first" would list them reversed: other, answer, query.
    in_query = make.run(ws, "a", query="the checkout pods restart", answer="see logs")
    in_answer = make.run(ws, "b", query="why 500s?", answer="checkout pods were OOM-killed")
    elsewhere = make.run(ws, "c-checkout", query="q", answer="a")
    in_query_too = make.run(ws, "d", query="Checkout latency", answer="the checkout cache")
    session.commit()
    ids = _found(session, actor, "checkout")
    # Rank 3 (question), newest first within it; then rank 2 (answer); then 1 (run id).
    assert ids == [in_query_too.id, in_query.id, in_answer.id, elsewhere.id]
    # Keyset pages of one run give the same order, each run once, in both directions.
    seen, cursor = [], None
    for _ in range(10):
        page = runs.list_runs(session, actor, limit=1, cursor=cursor,
                              filters=RunFilters.from_params({"q": "checkout"}))
        seen += [r.id for r in page.runs]
        if page.next_cursor is None:
            break
        last, cursor = page, page.next_cursor
    assert seen == ids
    assert last.has_previous
    # Another order asked for wins over the rank.
    assert _found(session, actor, "checkout", sort="oldest") == \
        [in_query.id, in_answer.id, elsewhere.id, in_query_too.id]


def test_relevance_without_a_term_is_newest_first(session, make):
    ws = make.workspace()
    actor = make.actor(make.user(ws))
    first, second = make.run(ws, "one"), make.run(ws, "two")
    session.commit()
    filters = RunFilters.from_params({"sort": "relevance"})
    assert [r.id for r in runs.list_runs(session, actor, filters=filters).runs] == [second.id, first.id]
    assert RunFilters.from_params({"q": "x y z"}).sort == "relevance"
    assert "sort" not in RunFilters.from_params({"q": "abc"}).as_params()
    assert RunFilters.from_params({"q": "abc", "sort": "newest"}).as_params()["sort"] == "newest"


def test_the_index_follows_reingest_finish_events_and_delete(session, make):
    ws = make.workspace()
    actor = make.actor(make.user(ws))
    run = make.run(ws, "sync-1", query="original wording", answer="first answer",
                   status="RUNNING")
    session.commit()
    assert _found(session, actor, "original wording") == [run.id]
    # Re-ingest with another question: the old words are gone, the new ones found.
    runs.upsert_run(session, SYSTEM, ws.id, "sync-1", {
        "query": "rewritten question", "answer": "first answer", "status": "RUNNING"})
    assert _found(session, actor, "original wording") == []
    assert _found(session, actor, "rewritten") == [run.id]
    # A tool-call event on the running run: its result is searchable at once.
    tool_calls.apply_events(session, SYSTEM, ws.id, [
        {"id": "ev-1", "run_id": "sync-1", "event": "started", "tool_name": "kubectl_get"},
        {"id": "ev-1", "run_id": "sync-1", "event": "completed", "output": "pod quokka-7 Ready"}])
    assert _found(session, actor, "quokka-7") == [run.id]
    assert _found(session, actor, "kubectl_get") == [run.id]
    # Finishing with an answer replaces the answer's text in the index.
    runs.finish_run(session, SYSTEM, ws.id, "sync-1", {"status": "SUCCESS", "answer": "final verdict"})
    assert _found(session, actor, "first answer") == []
    assert _found(session, actor, "final verdict") == [run.id]
    assert _found(session, actor, "quokka-7") == [run.id]  # the calls stay
    # What the index holds is the folded text of each field.
    assert _index_rows(session)[run.id][:2] == ("rewritten question", "final verdict")
    # A deleted run leaves no row behind (trigger on SQLite, foreign key on PostgreSQL).
    session.delete(session.get(Run, run.id))
    session.commit()
    assert run.id not in _index_rows(session)


def test_a_deleted_workspace_takes_its_runs_rows_along(session, make):
    ws, kept = make.workspace(), make.workspace()
    gone, stays = make.run(ws, "gone-1").id, make.run(kept, "stays-1").id
    session.commit()
    assert set(_index_rows(session)) == {gone, stays}
    session.execute(text("DELETE FROM workspace WHERE id = :id"), {"id": ws.id})
    session.commit()
    assert set(_index_rows(session)) == {stays}


def test_a_short_term_searches_only_the_newest_runs(session, make, monkeypatch):
    ws = make.workspace()
    actor = make.actor(make.user(ws))
    old = make.run(ws, "old", query="abc old")
    newer = make.run(ws, "newer", query="abc newer")
    newest = make.run(ws, "newest", query="no match")
    base = datetime(2026, 11, 1, tzinfo=UTC)
    for offset, made in enumerate((old, newer, newest)):
        made.created_at = base + timedelta(minutes=offset)
    session.commit()
    assert _found(session, actor, "ab") == [newer.id, old.id]
    monkeypatch.setattr(run_text, "SHORT_TERM_RUNS", 2)  # the newest two: newer, newest
    page = runs.list_runs(session, actor, filters=RunFilters.from_params({"q": "ab"}))
    assert [r.id for r in page.runs] == [newer.id]
    assert page.search_note.startswith("Terms shorter than 3 characters")
    # Three characters go through the index and find the old run too.
    assert _found(session, actor, "abc") == [newer.id, old.id]
    assert runs.list_runs(session, actor, filters=RunFilters.from_params(
        {"q": "abc"})).search_note is None


def test_the_page_shows_an_excerpt_around_the_match(session, make):
    ws = make.workspace()
    actor = make.actor(make.user(ws))
    long_answer = "x " * 200 + "the <b>Quokka</b> pod " + "y " * 200
    run = make.run(ws, "ex-1", query="nothing here", answer=long_answer)
    session.commit()
    page = runs.list_runs(session, actor, filters=RunFilters.from_params({"q": "quokka"}))
    excerpt = page.snippets[run.id]
    assert (excerpt.field, excerpt.match) == ("answer", "Quokka")
    assert excerpt.before.endswith("the <b>") and excerpt.after.startswith("</b> pod")
    assert excerpt.cut_before and excerpt.cut_after
    assert len(excerpt.before) <= 60 and len(excerpt.after) <= 60


def _plan(session, stmt):
    compiled = stmt.compile(session.get_bind(), compile_kwargs={"render_postcompile": True})
    connection = session.connection()
    if connection.dialect.name == "sqlite":
        params = tuple(compiled.params[name] for name in compiled.positiontup)
        return " ".join(str(row[-1]) for row in connection.exec_driver_sql(
            "EXPLAIN QUERY PLAN " + str(compiled), params))
    connection.exec_driver_sql("SET LOCAL enable_seqscan = off")
    return " ".join(row[0] for row in connection.exec_driver_sql(
        "EXPLAIN " + str(compiled), compiled.params))


def test_the_database_answers_from_the_index(session, world):
    """The text condition is one the full-text index answers: SQLite reads the FTS5
    table by its index; PostgreSQL's trigram GIN index covers the very expression (a
    differing expression would silently scan every row)."""
    stmt = runs.filtered_runs(world["actor"], RunFilters(q="disk 100%"), world["ws"].id)
    if session.get_bind().dialect.name == "sqlite":
        plan = _plan(session, stmt)
        assert "VIRTUAL TABLE INDEX" in plan, plan
    else:
        plan = _plan(session, select(Run.id).where(search_index.TextMatch(Run.id, "disk 100%")))
        assert "Bitmap Index Scan on ix_run_search_text" in plan, plan
    session.rollback()


def test_a_queue_rule_with_text_takes_a_new_run_that_holds_it(session, make):
    """The queue rules read the index when a run arrives (runs/queue_fill.offer_run): the
    run's row must be written before, or a new run would never match a text rule."""
    from reviewapp.models import QueueItem
    from reviewapp.services import review_queues

    ws = make.workspace()
    lead = make.actor(make.user(ws, role="lead"))
    queue, added = review_queues.create_queue(session, lead, ws.id, "Checkout", {"q": "checkout"})
    assert added == 0
    holds = make.run(ws, "new-1", query="Why is checkout slow?")
    make.run(ws, "new-2", query="Why is search slow?")
    later = make.run(ws, "new-3", query="q", status="RUNNING")
    runs.finish_run(session, SYSTEM, ws.id, "new-3", {"status": "SUCCESS", "answer": "the Checkout pods"})
    session.commit()
    assert sorted(session.scalars(select(QueueItem.run_pk).where(QueueItem.queue_id == queue.id))) == \
        [holds.id, later.id]


def test_a_term_many_runs_hold_is_listed_newest_first_and_found_run_by_run(session, make, monkeypatch):
    """Above ``RANKED_MATCHES`` runs the rank would be computed for every match: such a
    term is listed newest first (the page says so) and still finds exactly its runs."""
    ws = make.workspace()
    actor = make.actor(make.user(ws))
    in_query = make.run(ws, "m1", query="checkout down", answer="a")
    in_answer = make.run(ws, "m2", query="q", answer="checkout again")
    make.run(ws, "m3", query="nothing", answer="nothing")
    in_call = make.run(ws, "m4", query="q", answer="a", tool_calls=[
        {"id": "mc-1", "tool_name": "checkout_status", "status": "completed"}])
    session.commit()
    assert _found(session, actor, "checkout") == [in_query.id, in_answer.id, in_call.id]
    monkeypatch.setattr(run_text, "RANKED_MATCHES", 2)
    for probed in (20_000, 2):  # the matches read first, then the index asked run by run
        monkeypatch.setattr(run_text, "PROBED_MATCHES", probed)
        page = runs.list_runs(session, actor, limit=2, filters=RunFilters.from_params({"q": "checkout"}))
        assert [r.id for r in page.runs] == [in_call.id, in_answer.id]
        assert page.filters.probe == (probed == 2)
        assert page.search_note == "More than 2 runs hold this term: newest first instead of best match."
        rest = runs.list_runs(session, actor, limit=2, cursor=page.next_cursor,
                              filters=RunFilters.from_params({"q": "checkout"}))
        assert [r.id for r in rest.runs] == [in_query.id] and rest.next_cursor is None
    monkeypatch.setattr(run_text, "PROBED_MATCHES", 20_000)
    monkeypatch.setattr(run_text, "RANKED_MATCHES", 3)  # exactly 3 holders: still ranked
    assert _found(session, actor, "checkout") == [in_query.id, in_answer.id, in_call.id]


def test_several_words_are_one_phrase_and_the_page_says_so(session, make):
    """The text filter matches its whole text as one substring (SPEC 8's text search; a
    new user expected "OOMKilled pods" to find a run holding both words apart): until
    words are matched separately, the page says the words are searched together."""
    ws = make.workspace()
    actor = make.actor(make.user(ws))
    apart = make.run(ws, answer="The pods were OOMKilled twice.")
    together = make.run(ws, answer="Saw OOMKilled pods in the namespace.")
    assert _found(session, actor, "OOMKilled pods") == [together.id]
    page = runs.list_runs(session, actor, filters=RunFilters.from_params({"q": "OOMKilled pods"}))
    assert page.search_note == ("Searched for “OOMKilled pods” as written: its words together, "
                                "in this order.")
    assert apart.id not in [r.id for r in page.runs]
    assert runs.list_runs(session, actor, filters=RunFilters.from_params(
        {"q": "OOMKilled"})).search_note is None
