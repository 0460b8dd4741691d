"""Redact, then cut (SPEC 4): a key at every offset around the 2,000-character cut of a
stored result or error leaves no fragment of itself, through the services that store
them (tool-call events and run documents), not only through the domain's functions.

A secret cut before redaction would leave its first characters visible: ``sk-proj-Q1w2``
at the end of a summary is a key no rule recognises any more."""

from __future__ import annotations

from sqlalchemy import select

from reviewapp.actors import Actor
from reviewapp.models import ToolCall
from reviewapp.services.tool_calls import apply_events

SUMMARY_LIMIT = 2000  # SPEC 4: results and errors are stored cut to 2,000 characters
SECRET = "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8L9"
KEY = "sk-proj-" + SECRET
# From the key wholly before the cut to the key wholly after it.
OFFSETS = range(SUMMARY_LIMIT - len(KEY) - 1, SUMMARY_LIMIT + 2)
PIECES = {SECRET[start:start + 6] for start in range(len(SECRET) - 5)}  # every 6-character piece


def _text(offset: int) -> str:
    return "x" * offset + KEY + " tail"


def _leaked(stored: str | None) -> list[str]:
    return sorted(piece for piece in PIECES if piece in (stored or ""))


def _calls(session, run_pk: int) -> list[ToolCall]:
    session.expire_all()
    return list(session.scalars(select(ToolCall).where(ToolCall.run_pk == run_pk)))


def test_tool_events_store_no_fragment_of_a_key_at_any_offset(session, make):
    ws = make.workspace()
    run = make.run(ws, "cut-events", status="RUNNING", messages=[])
    events = []
    for offset in OFFSETS:
        events.append({"id": f"ok-{offset}", "run_id": "cut-events", "event": "completed",
                       "tool_name": "cat", "output": _text(offset)})
        events.append({"id": f"err-{offset}", "run_id": "cut-events", "event": "failed",
                       "tool_name": "cat", "error": _text(offset)})
    results = apply_events(session, Actor.system_actor(), ws.id, events)
    assert [r.result for r in results] == ["created"] * len(events)
    calls = _calls(session, run.id)
    assert len(calls) == 2 * len(OFFSETS)
    for call in calls:
        stored = call.result_summary if call.id.startswith("ok-") else call.error_message
        offset = int(call.id.split("-")[1])
        assert len(stored) <= SUMMARY_LIMIT and stored.startswith("x" * min(offset, 100))
        assert _leaked(stored) == [], (call.id, stored[-60:])
        assert (call.result_length or call.error_length) == offset + len("[redacted] tail")


def test_run_documents_store_no_fragment_of_a_key_at_any_offset(session, make):
    ws = make.workspace()
    tool_calls = []
    for offset in OFFSETS:
        tool_calls.append({"id": f"ok-{offset}", "tool_name": "cat", "output": _text(offset)})
        tool_calls.append({"id": f"err-{offset}", "tool_name": "cat", "status": "failed",
                           "error": _text(offset)})
    run = make.run(ws, "cut-document", tool_calls=tool_calls)
    calls = _calls(session, run.id)
    assert len(calls) == 2 * len(OFFSETS)
    for call in calls:
        stored = call.result_summary if call.id.startswith("ok-") else call.error_message
        assert len(stored) <= SUMMARY_LIMIT
        assert _leaked(stored) == [], (call.id, stored[-60:])
