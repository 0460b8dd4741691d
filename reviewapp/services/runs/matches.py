"""Runs, where a search matched: the places ("query", "answer", "arguments of search" …)
a runs list shows under each run of a page (SPEC 8)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from sqlalchemy import Integer, Text, bindparam, cast, column, or_, select, true, union_all, values
from sqlalchemy.orm import Session

from ...models import DiagnosisSession, Run, ToolCall

# Where a search can match inside a tool call (``match_places``), in the order shown.
TOOL_CALL_PLACES = ("tool name", "arguments", "result", "error")
MAX_MATCH_PLACES = 4
# Runs per calls statement: SQLite allows 500 terms in a compound SELECT.
_RUNS_PER_STATEMENT = 100


# The searched text, bound at execution: ``_NEEDLE`` with LIKE's wildcards escaped by
# ``_escaped`` (``/`` the escape character), so a statement is built once per page size.
_NEEDLE = bindparam("needle")


def _escaped(text: str) -> str:
    return text.replace("/", "//").replace("%", "/%").replace("_", "/_")


def _tool_call_matches() -> list[Any]:
    """One condition per searched field of a tool call: name, arguments (their JSON
    text), result, error — in ``TOOL_CALL_PLACES`` order — holding ``_NEEDLE``, case
    ignored. LIKE (no regular expression): linear in the stored text."""
    return [field.icontains(_NEEDLE, escape="/") for field in (
        ToolCall.tool_name, cast(ToolCall.arguments, Text), ToolCall.result_summary,
        ToolCall.error_message)]


def _first_calls(run_pk: Any) -> Any:
    """The first ``MAX_MATCH_PLACES`` calls of the run ``run_pk`` (in call order) holding
    ``_NEEDLE``: run pk, ordinal, id, tool name, one flag per ``TOOL_CALL_PLACES``."""
    conditions = _tool_call_matches()
    return (select(ToolCall.run_pk, ToolCall.ordinal, ToolCall.id, ToolCall.tool_name,
                   *(c.label(f"hit{k}") for k, c in enumerate(conditions)))
            .where(ToolCall.run_pk == run_pk, or_(*conditions))
            .order_by(ToolCall.ordinal, ToolCall.id).limit(MAX_MATCH_PLACES))


def _ordered(merged: Any) -> Any:
    return (select(merged.c.run_pk, merged.c.tool_name,
                   *(merged.c[f"hit{k}"] for k in range(len(TOOL_CALL_PLACES))))
            .order_by(merged.c.run_pk, merged.c.ordinal, merged.c.id))


@lru_cache(maxsize=8)
def _first_calls_sqlite(runs: int) -> Any:
    """SQLite (no LATERAL): ``_first_calls`` of ``runs`` runs (bound ``pk0`` ...) joined by
    UNION ALL. Built once per number of runs: building it costs ~23 ms for 50 runs."""
    return _ordered(union_all(*(select(_first_calls(bindparam(f"pk{i}")).subquery())
                                for i in range(runs))).subquery())


def _first_matching_calls(run_pks: list[int], dialect: str) -> tuple[Any, dict[str, Any]]:
    """SQL and its parameters (but ``needle``): per run of ``run_pks``, its first
    ``MAX_MATCH_PLACES`` calls (in call order) holding the text. One limited range of the
    ``(run_pk, ordinal)`` index per run, so the scan of a run stops at its cap, however
    many of its calls hold the text: on PostgreSQL a LATERAL subquery over the page's
    pks (planned once: a UNION of 50 such subqueries took 46 ms to plan on a busy
    machine), on SQLite (no LATERAL) joined by UNION ALL."""
    if dialect != "postgresql":
        return _first_calls_sqlite(len(run_pks)), {f"pk{i}": pk for i, pk in enumerate(run_pks)}
    page = values(column("pk", Integer), name="page").data([(pk,) for pk in run_pks])
    merged = _first_calls(page.c.pk).lateral("first_calls")
    return _ordered(select(merged).select_from(page).join(merged, true()).subquery()), {}


def match_places(session: Session, runs: list[Run], q: str | None) -> dict[int, tuple[str, ...]]:
    """Where ``q`` (case-insensitive) occurs in each of ``runs`` (a page the actor was
    just shown, so already access-checked): "query", "answer", "run id", "session id",
    then per tool call "<place> of <tool name>" with place one of ``TOOL_CALL_PLACES``
    — at most ``MAX_MATCH_PLACES`` per run, in that order. The calls looked at are the
    run's first ``MAX_MATCH_PLACES`` calls holding ``q`` (in call order): a run with
    50,000 such calls costs four, not all of them (issue 18), and a place that only a
    later call has is not named. Queries: the session ids, then the matching calls (one
    per ``_RUNS_PER_STATEMENT`` runs: 1 for a page of 50); ``{}`` without ``q``."""
    text = (q or "").strip()
    if not text or not runs:
        return {}
    needle = text.casefold()
    sessions = dict(session.execute(
        select(DiagnosisSession.id, DiagnosisSession.session_id)
        .where(DiagnosisSession.id.in_({r.diagnosis_session_id for r in runs}))).all())
    calls: dict[int, list[str]] = {}
    dialect = session.get_bind().dialect.name
    pks = sorted({r.id for r in runs})
    for start in range(0, len(pks), _RUNS_PER_STATEMENT):
        chunk = pks[start:start + _RUNS_PER_STATEMENT]
        stmt, params = _first_matching_calls(chunk, dialect)
        for run_pk, tool_name, *hits in session.execute(stmt, {**params, "needle": _escaped(text)}):
            for place, hit in zip(TOOL_CALL_PLACES, hits, strict=True):
                label = f"{place} of {tool_name}" if place != "tool name" else f"tool {tool_name}"
                if hit and label not in calls.setdefault(run_pk, []):
                    calls[run_pk].append(label)
    places: dict[int, tuple[str, ...]] = {}
    for run in runs:
        found = [name for name, value in (
            ("query", run.query), ("answer", run.answer), ("run id", run.run_id),
            ("session id", sessions.get(run.diagnosis_session_id)),
        ) if value and needle in value.casefold()]
        found += calls.get(run.id, [])
        if found:
            places[run.id] = tuple(found[:MAX_MATCH_PLACES])
    return places
