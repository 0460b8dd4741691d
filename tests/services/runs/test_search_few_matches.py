"""A term few runs hold (at most ``RANKED_MATCHES``) is looked up in the full-text index
once per list page: the runs it finds are then found by key in the counts and the page
(issue 18). Each ask of the index costs the term's posting lists — a run id held by one
run, whose trigrams every run id shares, cost ~22 ms a time on PostgreSQL at a million
runs, and a page of a two-workspace user asked five times. Same runs as before, in the
same order; a common term keeps the index's own conditions."""

from __future__ import annotations

from sqlalchemy import event

from reviewapp.extensions import db
from reviewapp.models import Membership
from reviewapp.services import run_text, runs
from reviewapp.services.runs import RunFilters
from reviewapp.services.runs.listing import neighbours


def _index_asks(statements: list[str]) -> int:
    """How many statements search the index for a term (the calls' index by MATCH on
    SQLite, by LIKE on PostgreSQL), not those that read one run's row by key."""
    return sum("run_search_call" in s and (" MATCH " in s or " LIKE " in s) for s in statements)


def _listed(session, actor, q: str, **kw):
    seen: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):  # noqa: ANN001
        seen.append(statement)

    event.listen(db.engine, "before_cursor_execute", record)
    try:
        page = runs.list_runs(session, actor, limit=2, filters=RunFilters.from_params({"q": q}), **kw)
    finally:
        event.remove(db.engine, "before_cursor_execute", record)
    return page, _index_asks(seen)


def test_a_term_few_runs_hold_is_asked_of_the_index_once(session, make, monkeypatch):
    alpha, beta, foreign = make.workspace(), make.workspace(), make.workspace()
    user = make.user(alpha)
    session.add(Membership(user_id=user.id, workspace_id=beta.id, role="reviewer"))
    actor = make.actor(user)
    in_query = make.run(alpha, "k-1", query="kestrel at the gate", answer="a")
    in_call = make.run(beta, "k-2", query="q", answer="a", tool_calls=[
        {"id": "kc-1", "tool_name": "look", "status": "completed", "output": "a kestrel"}])
    in_answer = make.run(alpha, "k-3", query="q", answer="kestrel again")
    make.run(foreign, "k-4", query="kestrel elsewhere", answer="a")  # not the user's
    make.run(alpha, "k-5", query="sparrow", answer="a")
    session.commit()

    page, asks = _listed(session, actor, "KESTREL")
    # Ranked: the question, then the answer, then a call; counts of the visible ones.
    assert [r.id for r in page.runs] == [in_query.id, in_answer.id]
    assert (page.filtered.value, page.filtered.capped) == (3, False)
    assert page.matches == {in_query.id: ("query",), in_answer.id: ("answer",)}
    assert asks == 1
    assert page.filters.matched is not None and len(page.filters.matched) == 4
    rest, asks = _listed(session, actor, "KESTREL", cursor=page.next_cursor)
    assert [r.id for r in rest.runs] == [in_call.id] and rest.next_cursor is None
    assert rest.matches == {in_call.id: ("result of look",)}
    assert asks == 1
    # The run page's previous / next in the same list: the same one lookup.
    assert neighbours(session, actor, in_answer, RunFilters.from_params({"q": "kestrel"}), None) == (
        in_query.id, in_call.id)

    # More holders than RANKED_MATCHES: the index's own conditions, the same runs.
    monkeypatch.setattr(run_text, "RANKED_MATCHES", 3)
    page, asks = _listed(session, actor, "kestrel")
    assert page.filters.matched is None and page.filters.many_matches
    assert [r.id for r in page.runs] == [in_answer.id, in_call.id]  # newest first
    assert (page.filtered.value, page.filtered.capped) == (3, False)
    assert asks > 2
