"""A search term made of a word every run holds and a rare one (a run id: ``run-1234``)
asks the trigram index for the rare word only (issue 18). pg_trgm indexes the trigrams
of each word (letters and digits; ``-`` splits words) and PostgreSQL's GIN reads the
whole posting list of every trigram of the pattern: ``run`` and ``un`` of ``run-``,
held by every run id, cost a posting list as long as the table (206 index pages for one
run at 200,000 runs, 6 for ``%100000%``). The rows the rare word finds are then checked
for the whole term, so the runs found are the same.

PostgreSQL: the ``EXPLAIN`` of the statement that asks the index (sequential scans off:
3,000 rows are read whole otherwise) shows the GIN scan of the runs' rows asked for the rare
word only (the calls' rows, where no row holds ``run``, for the whole term). Both databases: the runs found are exactly the runs
holding the whole term."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert, text

from reviewapp.models import DiagnosisSession, Run
from reviewapp.services import run_text, runs
from reviewapp.services.runs import RunFilters
from tests.plans import explain, sent

RUNS = 3_000


@pytest.fixture
def world(session, make):
    """``RUNS`` runs ``run-0`` ... bulk inserted and indexed, every question naming a
    service and a deploy; a run whose question names ``run-1234``; one holding ``run``
    and ``1234`` apart (not the term)."""
    ws = make.workspace()
    actor = make.actor(make.user(ws))
    sess = DiagnosisSession(session_id="bulk", workspace_id=ws.id, kind="chat")
    session.add(sess)
    session.flush()
    start = datetime(2026, 1, 1, tzinfo=UTC)
    session.execute(insert(Run.__table__), [{
        "run_id": f"run-{i}", "workspace_id": ws.id, "diagnosis_session_id": sess.id,
        "kind": "chat", "query": f"Why is service {i % 97} slow after deploy {i}?",
        "answer": f"Deploy {i} exhausted the pool.", "status": "SUCCESS",
        "created_at": start + timedelta(seconds=i), "updated_at": start} for i in range(RUNS)])
    mention = make.run(ws, "other-a", query="Same fault as RUN-1234 yesterday", answer="yes")
    apart = make.run(ws, "other-b", query="run-7 took 1234 ms", answer="no")
    session.flush()
    pks = list(session.execute(text("SELECT id FROM diagnosis_run")).scalars())
    run_text.reindex_runs(session, pks)
    session.commit()
    session.execute(text("ANALYZE"))
    session.commit()
    target = session.execute(text("SELECT id FROM diagnosis_run WHERE run_id = 'run-1234'")).scalar_one()
    return {"actor": actor, "target": target, "mention": mention.id, "apart": apart.id}


def test_a_run_id_is_found_with_the_runs_that_mention_it(session, world):
    page = runs.list_runs(session, world["actor"], filters=RunFilters.from_params({"q": "Run-1234"}))
    assert sorted(r.id for r in page.runs) == sorted([world["target"], world["mention"]])
    assert world["apart"] not in [r.id for r in page.runs]


def test_the_index_is_asked_for_the_rare_word_only(session, world):
    if session.get_bind().dialect.name != "postgresql":
        pytest.skip("pg_trgm's word splitting: SQLite's FTS5 trigrams keep the '-'")
    _, seen = sent(lambda: runs.list_runs(session, world["actor"],
                                          filters=RunFilters.from_params({"q": "run-1234"})))
    asks = [(s, p) for s, p in seen if "run_search_call" in s and " LIKE " in s]
    assert len(asks) == 1, [s for s, _ in seen]
    # A table this small is read whole; the plan with the index shows what it is asked.
    session.execute(text("SET LOCAL enable_seqscan = off"))
    plan = explain(session, *asks[0])
    runs_cond, calls_cond = [line.split("~~")[1] for line in plan.splitlines() if "Index Cond" in line]
    assert "'%1234%'" in runs_cond, plan  # every run's row holds "run": left out
    # No call row holds "run" (there are none): nothing to leave out, the whole term.
    assert "'%run-1234%'" in calls_cond, plan


def test_a_common_term_is_probed_run_by_run_not_by_reading_every_row(session, world, monkeypatch):
    """A term very many runs hold is tested run by run in the list's order (``probe``).
    PostgreSQL turned the probe's ``EXISTS (...) OR EXISTS (...)`` into hashed subplans:
    every row of the index holding the term read (a sequential scan of ``run_search``)
    before the first run of the page — 2.2 s at 200,000 runs where the page needs 51."""
    if session.get_bind().dialect.name != "postgresql":
        pytest.skip("PostgreSQL's hashed subplans")
    monkeypatch.setattr(run_text, "RANKED_MATCHES", 100)
    monkeypatch.setattr(run_text, "PROBED_MATCHES", 1_000)  # every run's answer holds "pool"
    page, seen = sent(lambda: runs.list_runs(session, world["actor"],
                                             filters=RunFilters.from_params({"q": "pool"})))
    assert page.filters.probe and len(page.runs) == 50
    pages = [(s, p) for s, p in seen if "diagnosis_run.query" in s and "LIMIT" in s]
    assert len(pages) == 1, [s for s, _ in seen]
    plan = explain(session, *pages[0])
    assert "hashed SubPlan" not in plan and "Seq Scan on run_search " not in plan, plan
    assert "Index Scan using run_search_pkey on run_search" in plan, plan  # by the run's key
