"""Where ratings of tool calls show (issue 19): the run page's timeline rows (rating
state, the first line of a failed call's error), the triage item (labels, disliked
tools) and the dashboard ("most disliked tools")."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role
from reviewapp.errors import Forbidden
from reviewapp.services import dashboard, feedback, runs, triage
from reviewapp.services.runs.timeline import ERROR_LINE_CHARS

from .feedback.helpers import CALL_ID, chat_run_with_turns, turn_of

LONG_LINE = "x" * (ERROR_LINE_CHARS + 40)


@pytest.fixture
def world(make):
    ws = make.workspace(triage_negative_targets=True)
    lead = make.user(ws, Role.LEAD)
    reviewer = make.user(ws)
    run = chat_run_with_turns(make, ws)
    return ws, lead, reviewer, run


def test_timeline_rows_carry_their_rating_and_the_first_error_line(session, make):
    ws = make.workspace()
    lead, reviewer = make.user(ws, Role.LEAD), make.user(ws)
    run = chat_run_with_turns(make, ws, tool_calls=[
        {"id": CALL_ID, "tool_name": "update_reservation_flights", "status": "failed",
         "error": "\n  Error: flight HAT170 not available <b>now</b>\ntraceback line 2"},
        {"id": "call-long", "tool_name": "t", "status": "failed", "error": LONG_LINE},
        {"id": "call-ok", "tool_name": "get_user_details", "status": "completed", "output": "ok"},
    ])
    feedback.upsert_feedback(session, make.actor(reviewer), "tool_call", run.id, CALL_ID,
                             "negative", "incorrect", "wrong flight")
    feedback.upsert_feedback(session, make.actor(lead), "tool_call", run.id, CALL_ID, "positive")
    timeline = runs.get_timeline(session, make.actor(reviewer), run.id)
    lines = {row.call.id: row.call.error_line for row in timeline.rows}
    assert lines == {CALL_ID: "Error: flight HAT170 not available <b>now</b>",
                     "call-long": "x" * (ERROR_LINE_CHARS - 1) + "…", "call-ok": None}
    states = {row.call.id: timeline.target(row) for row in timeline.rows}
    mine = states[CALL_ID].mine
    assert (mine.rating, mine.reason, mine.comment) == ("negative", "incorrect", "wrong flight")
    assert (states[CALL_ID].summary.positive, states[CALL_ID].summary.negative) == (1, 1)
    assert (states[CALL_ID].target_type, states[CALL_ID].target_id,
            states[CALL_ID].subject_key) == ("tool_call", run.id, CALL_ID)
    assert states["call-ok"].mine is None and states["call-ok"].summary is None
    assert states[CALL_ID].label == "tool call update_reservation_flights"
    # The whole page's read model holds the same timeline.
    detail = runs.get_run_detail(session, make.actor(reviewer), run.id)
    assert detail.timeline.my_feedback.keys() == {CALL_ID}


def test_timeline_of_a_foreign_run_is_forbidden(session, make, world):
    _, _, reviewer, _ = world
    foreign = chat_run_with_turns(make, make.workspace())
    with pytest.raises(Forbidden):
        runs.get_timeline(session, make.actor(reviewer), foreign.id)


def test_triage_item_names_rated_calls_and_turns_and_lists_disliked_tools(session, make, world):
    ws, lead, reviewer, run = world
    other = make.user(ws)
    for who in (reviewer, other):
        feedback.upsert_feedback(session, make.actor(who), "tool_call", run.id, CALL_ID,
                                 "negative")
    feedback.upsert_feedback(session, make.actor(reviewer), "tool_call", run.id, "call-2",
                             "negative")
    feedback.upsert_feedback(session, make.actor(other), "conversation_turn", turn_of(run).id,
                             None, "positive")
    item_id = triage.list_items(session, make.actor(lead)).rows[0].id
    detail = triage.get_item(session, make.actor(lead), item_id)
    labels = sorted({r.target_label for r in detail.ratings})
    assert labels == [
        "conversation turn (message 2)",
        "tool call get_reservation_details (call-2)",
        f"tool call update_reservation_flights ({CALL_ID})",
    ]
    assert detail.disliked_tools == (("update_reservation_flights", 2),
                                     ("get_reservation_details", 1))


def test_dashboard_lists_the_most_disliked_tools(session, make, world):
    ws, lead, reviewer, run = world
    second = chat_run_with_turns(make, ws, tool_calls=[
        {"id": "call-9", "tool_name": "update_reservation_flights", "status": "completed"}])
    other = make.user(ws)
    rate = feedback.upsert_feedback
    rate(session, make.actor(reviewer), "tool_call", run.id, CALL_ID, "negative")
    rate(session, make.actor(other), "tool_call", run.id, CALL_ID, "negative")
    rate(session, make.actor(reviewer), "tool_call", second.id, "call-9", "positive")
    rate(session, make.actor(other), "tool_call", run.id, "call-2", "positive")  # liked only
    data = dashboard.build(session, make.actor(lead))
    assert [(t.tool_name, t.negative, t.rated, t.calls) for t in data.disliked_tools] == [
        ("update_reservation_flights", 2, 3, 1)]
