"""Runs, the text-search side: keeping the full-text index in step with the runs, the
search condition and rank of the runs list, the snippets a page shows (SPEC 8).

The index holds a row per run (question, answer, run id, session id) and a row per tool
call (name, arguments, result, error: ``search_index``). Every path that writes a run's
own text calls ``store_run_text`` before it commits: ``upsert_run`` (the ingest API,
importers, OTLP traces, the LangChain handler and the demo all go through it) and
``finish_run`` (may replace the answer). Every path that creates a tool call or changes
its text calls ``store_call_text`` for that call only: ``tool_calls.apply_events`` and
``tool_calls.upsert_records``; an event costs its own text, never the run's. A deleted
run's or call's rows go with it (``search_index``: triggers on SQLite, foreign keys on
PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from .. import search_index
from ..domain.search_text import (
    PROBED_MATCHES,
    RANKED_MATCHES,
    SHORT_TERM_RUNS,
    Snippet,
    call_text,
    fold,
    is_short,
    other_text,
    snippet,
)
from ..models import DiagnosisSession, Run, ToolCall

# The columns of a tool call the index holds (``domain.search_text.call_text``).
CALL_TEXT_COLUMNS = ("tool_name", "arguments", "result_summary", "error_message")


def store_run_text(session: Session, run_pks: Iterable[int]) -> None:
    """Rewrite the runs' own index rows (``run_pks``) from what the session holds now
    (pending changes are flushed first): folded query, answer, and run id + session id
    (``domain.search_text.other_text`` without calls). Their calls' rows are not read or
    touched (``store_call_text``). Two queries whatever the number of runs (the runs, the
    write) plus the delete; nothing for an empty set."""
    pks = sorted(set(run_pks))
    if not pks:
        return
    session.flush()
    runs = session.execute(
        select(Run.id, Run.query, Run.answer, Run.run_id, DiagnosisSession.session_id)
        .join(DiagnosisSession, DiagnosisSession.id == Run.diagnosis_session_id)
        .where(Run.id.in_(pks))).all()
    search_index.write(session.connection(), [
        {"run_pk": pk, "query": fold(query), "answer": fold(answer),
         "other": other_text(run_id, session_id, ())}
        for pk, query, answer, run_id, session_id in runs])


def _value(call: Mapping[str, Any] | Any, name: str) -> Any:
    return call[name] if isinstance(call, Mapping) else getattr(call, name)


def call_text_of(call: Mapping[str, Any] | Any) -> tuple[Any, ...]:
    """The values of ``CALL_TEXT_COLUMNS`` of a call (a column mapping or a ``ToolCall``):
    two calls with equal values have the same index text."""
    return tuple(_value(call, name) for name in CALL_TEXT_COLUMNS)


def store_call_text(session: Session, calls: Iterable[Mapping[str, Any] | Any]) -> None:
    """Insert or replace the index rows of the tool calls ``calls`` (column mappings or
    ``ToolCall`` rows, already written to the database: each carries workspace_id, id,
    run_pk and ``CALL_TEXT_COLUMNS``); their folded text is ``domain.search_text.
    call_text``. One statement; the cost is the calls' own text, not their runs'.
    Nothing for an empty set. Callers pass only calls created or whose text changed (a
    re-sent event leaves the row as it is; re-writing it would not add a hit either)."""
    search_index.write_calls(session.connection(), [
        {"workspace_id": _value(call, "workspace_id"), "call_id": _value(call, "id"),
         "run_pk": _value(call, "run_pk"), "text": call_text(*call_text_of(call))}
        for call in calls])


def reindex_runs(session: Session, run_pks: Iterable[int]) -> None:
    """Rewrite every index row of the runs ``run_pks``: their own rows
    (``store_run_text``) and all their calls' rows, read from the database. For bulk
    loads that write rows around the services (``benchmarks/scale_data.py``); a service
    writes what it changed instead. Three queries and the writes."""
    pks = sorted(set(run_pks))
    if not pks:
        return
    store_run_text(session, pks)
    store_call_text(session, session.execute(
        select(ToolCall.workspace_id, ToolCall.id, ToolCall.run_pk,
               *(getattr(ToolCall, name) for name in CALL_TEXT_COLUMNS))
        .where(ToolCall.run_pk.in_(pks))).mappings())


def match_load(session: Session, term: str) -> tuple[bool, bool]:
    """(more than ``RANKED_MATCHES`` runs hold the folded ``term``, more than
    ``PROBED_MATCHES`` do), counted in the index of all workspaces by one query that reads
    at most ``PROBED_MATCHES`` + 1 entries; (False, False) for a blank or short term. The
    first: listed newest first, not ranked (ranking reads every match); the second: also
    tested run by run in the list's order (``probe``) instead of reading every match."""
    if not term or is_short(term):
        return False, False
    found = search_index.count_matches(session.connection(), term, PROBED_MATCHES + 1)
    return found > RANKED_MATCHES, found > PROBED_MATCHES


def few_matches(session: Session, term: str) -> tuple[int, ...] | None:
    """The pks of the runs (of every workspace, ascending) that hold the folded ``term``
    when at most ``RANKED_MATCHES`` do, else ``None`` (also for a blank or short term):
    one query reading at most ``RANKED_MATCHES`` + 1 index entries. A list then finds
    its runs by key (``Run.id IN (...)``) in its counts and pages instead of asking the
    index again for each: every ask costs the term's whole posting lists (a run id held
    by one run, whose trigrams every run id shares: ~22 ms on PostgreSQL at a million
    runs, asked five times a page), where the key lookups cost the matches (issue 18)."""
    if not term or is_short(term):
        return None
    found = search_index.matching_runs(session.connection(), term, RANKED_MATCHES + 1)
    return tuple(sorted(found)) if len(found) <= RANKED_MATCHES else None


def text_condition(term: str, base: Any, *, probe: bool = False) -> Any:
    """The condition of the runs list for the folded ``term``: answered by the index for
    a term of ``MIN_INDEXED_CHARS`` or more — the matching runs read first, or with
    ``probe`` (a term ``many_matches`` found common) the index asked run by run in the
    list's order; a shorter term is looked for only in the newest ``SHORT_TERM_RUNS``
    runs of ``base`` (the list's statement without the text filter), so its cost stays
    bounded whatever the number of runs."""
    if not is_short(term):
        return (search_index.TextProbe if probe else search_index.TextMatch)(Run.id, term)
    newest = (base.with_only_columns(Run.id, maintain_column_froms=True)
              .order_by(Run.created_at.desc(), Run.id.desc()).limit(SHORT_TERM_RUNS))
    return Run.id.in_(newest.scalar_subquery()) & search_index.TextContains(Run.id, term)


def text_rank(term: str) -> Any:
    """SQL: the rank of a run for the folded ``term`` (``domain.search_text.rank``)."""
    return search_index.TextRank(Run.id, term)


def snippets(runs: Iterable[Run], term: str) -> dict[int, Snippet]:
    """Per run of a page, the excerpt around the first match of ``term`` in its question,
    else its answer (a match elsewhere has none: ``match_places`` names it). Pure Python
    over text already loaded; linear in the text's length."""
    found: dict[int, Snippet] = {}
    if not term:
        return found
    for run in runs:
        excerpt = snippet("query", run.query, term) or snippet("answer", run.answer, term)
        if excerpt is not None:
            found[run.id] = excerpt
    return found
