"""Issue 14: messages that carry their own timestamp give each tool call its start (the
requesting assistant message) and end (the tool message), so the timeline has a real
axis; a clock that cannot be right leaves the time empty with a warning, never refuses
the run."""

from __future__ import annotations

import json

from sqlalchemy import select

from reviewapp.actors import Actor
from reviewapp.models import ToolCall
from reviewapp.services import importers

SYSTEM = Actor.system_actor()


def _messages(end_b: str = "2026-05-01T12:00:09Z", start_b: object = "2026-05-01T12:00:05Z") -> list[dict]:
    return [
        {"role": "user", "content": "q", "timestamp": "2026-05-01T12:00:00Z"},
        {"role": "assistant", "content": None, "timestamp": "2026-05-01T12:00:01Z", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "logs", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "ok", "timestamp": "2026-05-01T12:00:03.500Z"},
        {"role": "assistant", "content": None, "created_at": start_b, "tool_calls": [
            {"id": "b", "type": "function", "function": {"name": "metrics", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "b", "content": "Error: timeout", "created_at": end_b},
        {"role": "assistant", "content": "done", "timestamp": "2026-05-01T12:00:10Z"},
    ]


def test_message_times_become_call_times_and_durations(session, make, tmp_path):
    path = tmp_path / "timed.json"
    path.write_text(json.dumps([{"id": "timed", "messages": _messages()}]))
    summary = importers.import_files(session, SYSTEM, make.workspace().id, [path])
    assert (summary.created, summary.warnings) == (1, [])
    calls = session.scalars(select(ToolCall).order_by(ToolCall.ordinal)).all()
    assert [(c.tool_name, c.status, c.duration_ms) for c in calls] == [
        ("logs", "completed", 2500), ("metrics", "failed", 4000)]
    assert calls[0].started_at.isoformat() == "2026-05-01T12:00:01+00:00"


def test_epoch_times_are_read_and_a_backwards_or_bad_clock_is_left_empty_with_a_warning():
    epoch = importers.adapt_openai_record({"id": "e", "messages": _messages(end_b=1777636809, start_b=1777636805)},
                                          0, "f")
    assert [c.get("completed_at") for c in epoch.doc["tool_calls"]] == ["2026-05-01T12:00:03.500Z", 1777636809]
    backwards = importers.adapt_openai_record({"id": "b", "messages": _messages(end_b="2026-05-01T12:00:04Z")}, 0, "f")
    call = backwards.doc["tool_calls"][1]
    assert "completed_at" not in call and call["status"] == "failed"
    assert [w.kind for w in backwards.warnings] == ["clock_order"]
    bad = importers.adapt_openai_record({"id": "x", "messages": _messages(start_b="yesterday")}, 0, "f")
    assert "started_at" not in bad.doc["tool_calls"][1] and [w.kind for w in bad.warnings] == ["bad_time"]
