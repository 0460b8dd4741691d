"""Finding runs (issue 19): the list's search also looks in the run id, the session id
and the tool calls (name, arguments, result, error) and says where it matched; the
"has failed tool calls" filter; a run by the agent's own id."""

from __future__ import annotations

import json
import re

import pytest

from reviewapp.actors import Actor
from reviewapp.errors import Forbidden, ValidationFailed
from reviewapp.services import admin, importers, runs
from reviewapp.services.runs import RunFilters

from ...shared_data import tau_bench_file

SYSTEM = Actor.system_actor()


def _found(session, actor, q, **filters):
    page = runs.list_runs(session, actor, limit=100, filters=RunFilters(q=q, **filters))
    return {r.id: page.matches.get(r.id) for r in page.runs}


@pytest.fixture
def world(make):
    ws = make.workspace()
    reviewer = make.actor(make.user(ws))
    plain = make.run(ws, "run-plain", session_id="sess-plain", query="Refund please",
                     answer="Done.")
    tooled = make.run(ws, "run-tooled-7", session_id="sess-blue-42", query="Change flight",
                      answer="Changed.", tool_calls=[
                          {"id": "c-1", "tool_name": "search_direct_flight", "status": "completed",
                           "arguments": {"origin": "JFK", "destination": "SEA"},
                           "output": "flights: ZZX903 at 10:00"},
                          {"id": "c-2", "tool_name": "update_reservation_flights", "status": "failed",
                           "arguments": {"flights": [{"flight_number": "QQW111"}]},
                           "error": "Error: seat map Unavailable"},
                      ])
    foreign = make.run(make.workspace(), "run-tooled-7", session_id="sess-blue-42",
                       query="Change flight", tool_calls=[
                           {"id": "c-9", "tool_name": "search_direct_flight", "status": "completed",
                            "arguments": {"flight_number": "QQW111"}}])
    return ws, reviewer, plain, tooled, foreign


@pytest.mark.parametrize("q, place", [
    ("run-tooled", "run id"),
    ("BLUE-42", "session id"),
    ("update_reservation", "tool update_reservation_flights"),
    ("qqw111", "arguments of update_reservation_flights"),
    ("ZZX903", "result of search_direct_flight"),
    ("seat map unavailable", "error of update_reservation_flights"),
])
def test_search_finds_a_run_by_ids_and_by_what_its_tools_saw(session, world, q, place):
    _, reviewer, _, tooled, _ = world
    assert _found(session, reviewer, q) == {tooled.id: (place,)}


def test_search_still_matches_query_and_answer_and_lists_every_place(session, world):
    _, reviewer, plain, tooled, _ = world
    assert _found(session, reviewer, "refund") == {plain.id: ("query",)}
    assert _found(session, reviewer, "flight") == {tooled.id: (
        # the query, then call by call, in call order
        "query", "tool search_direct_flight", "result of search_direct_flight",
        "tool update_reservation_flights")}
    assert _found(session, reviewer, "nowhere-at-all") == {}


def test_search_treats_like_wildcards_as_text(session, world):
    _, reviewer, _, _, _ = world
    assert _found(session, reviewer, "%") == {}
    assert _found(session, reviewer, "run_tooled") == {}


def test_failed_calls_filter(session, world):
    _, reviewer, plain, tooled, _ = world
    page = runs.list_runs(session, reviewer, filters=RunFilters(failed_calls="yes"))
    assert [r.id for r in page.runs] == [tooled.id]
    assert page.filters.as_params() == {"failed_calls": "yes"}
    assert RunFilters.from_params({"failed_calls": "yes"}).failed_calls == "yes"
    with pytest.raises(ValidationFailed) as error:
        RunFilters.from_params({"failed_calls": "maybe"})
    assert error.value.field == "failed_calls"
    assert _found(session, reviewer, "flight", failed_calls="yes").keys() == {tooled.id}


def test_a_run_by_its_agent_id(session, make, world):
    ws, reviewer, _, tooled, foreign = world
    assert [(r.run_pk, r.workspace_slug) for r in runs.find_run_by_id(
        session, reviewer, "run-tooled-7")] == [(tooled.id, ws.slug)]
    answers = []
    for run_id in ("run-missing", "x" * 161, "", None):
        with pytest.raises(Forbidden) as error:
            runs.find_run_by_id(session, reviewer, run_id)
        answers.append(error.value.to_dict())
    outsider = make.actor(make.user(make.workspace()))
    with pytest.raises(Forbidden) as error:
        runs.find_run_by_id(session, outsider, "run-tooled-7")
    assert answers == [error.value.to_dict()] * 4
    # A member of both workspaces holds the id twice: both, by workspace name.
    both = make.user(ws)
    admin.set_membership(session, SYSTEM, both.id, foreign.workspace_id, "reviewer")
    found = runs.find_run_by_id(session, make.actor(both), "run-tooled-7")
    assert sorted(r.run_pk for r in found) == sorted([tooled.id, foreign.id])


# --- τ-bench -----------------------------------------------------------------------------


def test_a_tau_bench_run_is_found_by_its_id_and_by_a_flight_only_in_a_tool_argument(
        session, make):
    ws = make.workspace()
    reviewer = make.actor(make.user(ws))
    records = json.loads(tau_bench_file().read_text())[:6]
    imported = []
    for record in records:
        run_id, doc, _ = importers.tau_bench_run(record, "gpt-4o-airline")
        imported.append((runs.upsert_run(session, SYSTEM, ws.id, run_id, doc).run, doc))
    # A flight number that one run's tool call sent as an argument and that neither its
    # query nor its answer holds (the only text the search looked at before).
    target = None
    for run, doc in imported:
        for call in doc.get("tool_calls") or []:
            for flight in re.findall(r"HAT\d{3}", json.dumps(call.get("arguments"))):
                if flight not in (run.query or "") + (run.answer or ""):
                    target = (run, call["tool_name"], flight)
                    break
            if target:
                break
        if target:
            break
    assert target is not None
    run, tool_name, flight = target
    found = _found(session, reviewer, flight)
    assert run.id in found and f"arguments of {tool_name}" in found[run.id]
    by_id = _found(session, reviewer, run.run_id)
    assert list(by_id) == [run.id] and by_id[run.id][0] == "run id"
    assert [r.run_pk for r in runs.find_run_by_id(session, reviewer, run.run_id)] == [run.id]
