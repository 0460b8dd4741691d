"""Runs, the text-search side: keeping the full-text index in step with the runs, the
search condition and rank of the runs list, the snippets a page shows (SPEC 8).

Every path that writes a run's text calls ``store_run_text`` before it commits:
``upsert_run`` (the ingest API, importers, OTLP traces, the LangChain handler and the
demo all go through it), ``finish_run`` (may replace the answer) and
``tool_calls.apply_events`` (a call's name, arguments, result, error). A deleted run's row
goes with it (``search_index``: trigger on SQLite, foreign key on PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from .. import search_index
from ..domain.search_text import (
    PROBED_MATCHES,
    RANKED_MATCHES,
    SHORT_TERM_RUNS,
    Snippet,
    fold,
    is_short,
    other_text,
    snippet,
)
from ..models import DiagnosisSession, Run, ToolCall


def store_run_text(session: Session, run_pks: Iterable[int]) -> None:
    """Rewrite the index rows of the runs ``run_pks`` from what the session holds now
    (pending changes are flushed first): folded query, answer and other text
    (``domain.search_text.other_text``). Three queries whatever the number of runs
    (runs, their calls, the write) plus the delete; nothing for an empty set."""
    pks = sorted(set(run_pks))
    if not pks:
        return
    session.flush()
    runs = session.execute(
        select(Run.id, Run.query, Run.answer, Run.run_id, DiagnosisSession.session_id)
        .join(DiagnosisSession, DiagnosisSession.id == Run.diagnosis_session_id)
        .where(Run.id.in_(pks))).all()
    calls: dict[int, list[tuple[Any, ...]]] = {}
    for run_pk, *call in session.execute(
            select(ToolCall.run_pk, ToolCall.tool_name, ToolCall.arguments,
                   ToolCall.result_summary, ToolCall.error_message)
            .where(ToolCall.run_pk.in_(pks)).order_by(ToolCall.run_pk, ToolCall.ordinal, ToolCall.id)):
        calls.setdefault(run_pk, []).append(tuple(call))
    search_index.write(session.connection(), [
        {"run_pk": pk, "query": fold(query), "answer": fold(answer),
         "other": other_text(run_id, session_id, calls.get(pk, ()))}
        for pk, query, answer, run_id, session_id in runs])


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
