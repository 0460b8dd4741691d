"""A run page's tool-call timeline and one tool call opened from it (SPEC 2, 8)."""

from __future__ import annotations

import pytest

from reviewapp.errors import Forbidden
from reviewapp.services import runs, tool_calls


def test_timeline_orders_calls_and_changes_version_when_a_call_arrives(session, make):
    ws = make.workspace()
    run = make.run(ws, status="RUNNING", tool_calls=[
        {"id": "late", "tool_name": "b", "status": "completed",
         "started_at": "2026-01-01T00:00:05Z", "completed_at": "2026-01-01T00:00:06Z"},
        {"id": "early", "tool_name": "a", "status": "completed",
         "started_at": "2026-01-01T00:00:01Z", "completed_at": "2026-01-01T00:00:02Z"},
        {"id": "untimed", "tool_name": "c", "status": "completed"},
    ])
    actor = make.actor(make.user(ws))
    before = runs.get_timeline(session, actor, run.id)
    assert [r.call.id for r in before.rows] == ["early", "late", "untimed"]
    assert before.live and before.layout.has_axis
    tool_calls.apply_events(session, make.system, ws.id, [
        {"id": "new", "run_id": run.run_id, "event": "started", "tool_name": "d",
         "timestamp": "2026-01-01T00:00:07Z"}])
    after = runs.get_timeline(session, actor, run.id)
    assert after.version != before.version
    assert after.rows[-2].call.id == "new" and after.rows[-2].bar.open_ended


def test_get_tool_call_is_scoped_to_the_run_and_the_workspace(session, make):
    ws, other = make.workspace(), make.workspace()
    run = make.run(ws, tool_calls=[{"id": "c-1", "tool_name": "t", "status": "completed",
                                    "arguments": {"q": "x"}, "output": {"ok": True}}])
    sibling = make.run(ws)
    actor = make.actor(make.user(ws))
    call = runs.get_tool_call(session, actor, run.id, "c-1")
    assert call.arguments == {"q": "x"}
    with pytest.raises(Forbidden):
        runs.get_tool_call(session, actor, sibling.id, "c-1")
    with pytest.raises(Forbidden):
        runs.get_tool_call(session, make.actor(make.user(other)), run.id, "c-1")
