"""Runs, where a search matched: the places ("query", "answer", "arguments of search" …)
a runs list shows under each run of a page (SPEC 8)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Text, cast, or_, select
from sqlalchemy.orm import Session

from ...models import DiagnosisSession, Run, ToolCall

# Where a search can match inside a tool call (``match_places``), in the order shown.
TOOL_CALL_PLACES = ("tool name", "arguments", "result", "error")
MAX_MATCH_PLACES = 4


def _tool_call_matches(text: str) -> list[Any]:
    """One condition per searched field of a tool call: name, arguments (their JSON
    text), result, error — in ``TOOL_CALL_PLACES`` order. LIKE (no regular expression):
    linear in the stored text."""
    return [ToolCall.tool_name.icontains(text, autoescape=True),
            cast(ToolCall.arguments, Text).icontains(text, autoescape=True),
            ToolCall.result_summary.icontains(text, autoescape=True),
            ToolCall.error_message.icontains(text, autoescape=True)]


def match_places(session: Session, runs: list[Run], q: str | None) -> dict[int, tuple[str, ...]]:
    """Where ``q`` (case-insensitive) occurs in each of ``runs`` (a page the actor was
    just shown, so already access-checked): "query", "answer", "run id", "session id",
    then per tool call "<place> of <tool name>" with place one of ``TOOL_CALL_PLACES``
    — at most ``MAX_MATCH_PLACES`` per run, in that order. Two queries at most (session
    ids, matching tool calls), whatever the page size; ``{}`` without ``q``."""
    text = (q or "").strip()
    if not text or not runs:
        return {}
    needle = text.casefold()
    sessions = dict(session.execute(
        select(DiagnosisSession.id, DiagnosisSession.session_id)
        .where(DiagnosisSession.id.in_({r.diagnosis_session_id for r in runs}))).all())
    conditions = _tool_call_matches(text)
    calls: dict[int, list[str]] = {}
    for row in session.execute(
        select(ToolCall.run_pk, ToolCall.tool_name, *conditions)
        .where(ToolCall.run_pk.in_([r.id for r in runs]), or_(*conditions))
        .order_by(ToolCall.run_pk, ToolCall.ordinal, ToolCall.id)
    ):
        run_pk, tool_name, *hits = row
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
