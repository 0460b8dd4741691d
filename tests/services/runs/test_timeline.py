"""A run page's tool-call timeline and one tool call opened from it (SPEC 2, 8)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import update

from reviewapp.domain.timeline import CallTiming, layout
from reviewapp.errors import Forbidden, ValidationFailed
from reviewapp.models import ToolCall
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
    opened = runs.get_tool_call(session, actor, run.id, "c-1")
    assert opened.call.arguments == {"q": "x"} and opened.time_zone == "UTC"
    ws.settings = {"time_zone": "Asia/Tokyo"}
    session.commit()
    assert runs.get_tool_call(session, actor, run.id, "c-1").time_zone == "Asia/Tokyo"
    with pytest.raises(Forbidden):
        runs.get_tool_call(session, actor, sibling.id, "c-1")
    with pytest.raises(Forbidden):
        runs.get_tool_call(session, make.actor(make.user(other)), run.id, "c-1")


def _spread_calls(n: int) -> list[dict]:
    """``n`` calls whose times make the axis rules matter: untimed ones (listed last),
    open-ended ones (no end: they do not stretch the axis), and the latest end far from
    the latest start."""
    calls = []
    for i in range(n):
        call = {"id": f"c{i:03d}", "tool_name": f"t{i % 5}", "status": "completed",
                "started_at": f"2026-01-01T00:{(i * 7) % 60:02d}:{i % 60:02d}Z",
                "completed_at": f"2026-01-01T01:{i % 60:02d}:00Z"}
        if i % 13 == 0:
            call = {"id": call["id"], "tool_name": "untimed", "status": "completed"}
        elif i % 17 == 0:
            call = {**call, "status": "started", "completed_at": None}
        elif i % 11 == 0:
            call = {**call, "status": "failed", "error": "boom"}
        calls.append(call)
    calls[-2]["completed_at"] = "2026-01-01T03:15:00.250000Z"  # the latest end of all
    return calls


def test_a_chunk_sits_on_the_axis_of_all_the_calls(session, make):
    """The database's axis (window functions) and counts are those of every call: each
    row of the first chunk and of the next one has the bar the pure layout gives it
    among all calls (domain.timeline.layout over the whole run), at its place."""
    ws = make.workspace()
    run = make.run(ws, tool_calls=_spread_calls(120))
    # A clock that ran backwards (an old row; ingest refuses it now): a zero-length bar.
    session.execute(update(ToolCall).where(ToolCall.run_pk == run.id, ToolCall.id == "c031").values(
        started_at=datetime(2026, 1, 1, 2, 30, tzinfo=UTC), completed_at=datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC)))
    session.commit()
    actor = make.actor(make.user(ws))
    every = runs.get_timeline(session, actor, run.id, runs.Shown(every=True))
    assert len(every.rows) == every.total == 120
    assert [r.index for r in every.rows] == list(range(1, 121))
    assert every.failed == sum(1 for r in every.rows if r.call.status == "failed") > 0
    expected = layout([CallTiming(r.call.started_at, r.call.completed_at) for r in every.rows])
    assert [r.bar for r in every.rows] == expected.bars
    assert any(r.bar.ended_before_start for r in every.rows) and any(r.bar.open_ended for r in every.rows)
    assert every.layout.span_ms == expected.span_ms and every.layout.ticks == expected.ticks

    first = runs.get_timeline(session, actor, run.id)
    assert [r.call.id for r in first.rows] == [r.call.id for r in every.rows[:50]]
    assert [r.bar for r in first.rows] == expected.bars[:50]
    assert (first.total, first.failed, first.next_call) == (120, every.failed, every.rows[50].call.id)
    assert first.version == every.version
    assert first.hidden_failed == tuple(r.call.id for r in every.rows[50:] if r.call.status == "failed")

    chunk = runs.get_timeline_chunk(session, actor, run.id, first.rows[-1].call.id)
    assert [(r.index, r.call.id, r.bar) for r in chunk.rows] == [
        (r.index, r.call.id, r.bar) for r in every.rows[50:120]]
    assert chunk.next_call is None and chunk.remaining == 0


def test_the_chunk_reader_checks_access_and_its_cursor(session, make):
    ws, other = make.workspace(), make.workspace()
    run = make.run(ws, tool_calls=_spread_calls(60))
    sibling = make.run(ws, tool_calls=[{"id": "s-1", "tool_name": "t", "status": "completed"}])
    actor = make.actor(make.user(ws))
    with pytest.raises(Forbidden):
        runs.get_timeline_chunk(session, make.actor(make.user(other)), run.id, "c049")
    with pytest.raises(Forbidden):
        runs.get_timeline_chunk(session, make.system, run.id, "c049")  # ratings need a person
    with pytest.raises(ValidationFailed) as refused:
        runs.get_timeline_chunk(session, actor, run.id, "s-1")  # a call of another run
    assert refused.value.field == "after"
    assert [r.index for r in runs.get_timeline_chunk(session, actor, sibling.id, "s-1").rows] == []
