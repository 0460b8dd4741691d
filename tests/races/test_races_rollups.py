"""The dashboard's roll-ups under concurrent writers (issue 18), through HTTP on two
gunicorn processes (SQLite in WAL mode, or PostgreSQL with ``REVIEWAPP_TEST_DB_URL``):
ratings of one tool call and of the answer by three reviewers, a re-sent run document
that moves the run to another day, tool events failing and adding calls, and the lead
moving the run's triage item (opened by a first "not useful" verdict; the ratings
resolve and reopen it meanwhile), all at once, ``REPS`` times. Afterwards the roll-ups
the writers kept with their deltas (the triage backlog's too) equal the ones rebuilt
from the rows, and a run's figures are where its final day is."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
from sqlalchemy import select

from reviewapp.actors import Actor
from reviewapp.extensions import db
from reviewapp.models import (
    Feedback,
    Message,
    RatedRunCount,
    Run,
    RunDayCount,
    ToolDayCount,
    TriageDayCount,
    TriageItem,
    Workspace,
)
from reviewapp.services import dashboard
from reviewapp.services import feedback as feedback_service

from ..factories import Factories
from .servers import fire
from .world import REPS, World, no_5xx, serving_world

_seq = itertools.count(1)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from serving_world(tmp_path_factory, "rollups")


def _rollups(session: Any) -> tuple[dict, dict, dict]:
    runs = {(r.workspace_id, r.dimension, r.day, r.value): r.runs
            for r in session.scalars(select(RunDayCount)) if r.runs}
    tools = {(r.workspace_id, r.day, r.tool_name): (r.calls, r.failed, r.rated, r.negative,
                                                    r.disliked_calls)
             for r in session.scalars(select(ToolDayCount))
             if (r.calls, r.failed, r.rated, r.negative, r.disliked_calls) != (0,) * 5}
    triage = {(r.workspace_id, r.state, r.day): r.items
              for r in session.scalars(select(TriageDayCount)) if r.items}
    return runs, tools, triage


def test_concurrent_writers_keep_the_rollups_exact(world: World) -> None:
    for rep in range(REPS):
        n = next(_seq)
        run_id = f"rollup-run-{n}"
        doc = {"session_id": f"rollup-session-{n}", "kind": "chat", "query": "Why?",
               "answer": "Because.", "status": "SUCCESS", "started_at": "2026-03-01T08:00:00Z",
               "messages": [{"id": "u1", "role": "user", "content": "Why?"},
                            {"id": "a1", "role": "assistant", "content": "Because."}],
               "tool_calls": [{"id": f"{run_id}-c0", "tool_name": "get_metrics",
                               "status": "completed"},
                              {"id": f"{run_id}-c1", "tool_name": "query_logs",
                               "status": "started"}]}
        with world.app.app_context():
            workspace = db.session.get(Workspace, world.ws_id)
            run_pk = Factories(db.session).run(workspace, run_id, **doc).id
            answer = db.session.scalar(select(Message.id).where(
                Message.run_pk == run_pk, Message.role == "assistant"))
            feedback_service.set_run_verdict(db.session, Actor.system_actor(), doc["session_id"],
                                             run_id, "not_useful")
            item_id = db.session.scalar(select(TriageItem.id).where(TriageItem.run_pk == run_pk))
            db.session.remove()
        calls = []
        for i, name in enumerate(("r1", "r2", "r3")):
            for body in ({"targetType": "tool_call", "targetId": run_pk,
                          "subjectId": f"{run_id}-c0",
                          "rating": "negative" if i % 2 == 0 else "positive"},
                         {"targetType": "chat_message", "targetId": answer,
                          "rating": "positive" if (i + rep) % 2 else "negative"}):
                calls.append(lambda s=world.as_user(name, i), b=world.base(i), j=body: s.put(
                    f"{b}/api/feedback/targets", json=j, timeout=60))
        moved = {**doc, "started_at": "2026-03-02T23:59:00Z"}
        calls.append(lambda s=world.as_token(), b=world.base(0): s.put(
            f"{b}/api/ingest/runs/{run_id}", json=moved, timeout=60))
        events = [{"id": f"{run_id}-c1", "run_id": run_id, "event": "failed", "error": "x"},
                  {"id": f"{run_id}-c2", "run_id": run_id, "event": "completed",
                   "tool_name": "get_metrics"}]
        calls += [lambda s=world.as_token(), b=world.base(i + 1), e=e: s.post(
            f"{b}/api/ingest/tool-events", json=e, timeout=60) for i, e in enumerate(events)]
        moves = [lambda s=world.as_user("lead", i), b=world.base(i), state=state: s.post(
            f"{b}/triage/{item_id}/state", data={"state": state, "version": 1},
            allow_redirects=False, timeout=60)
            for i, state in enumerate(("triaged", "resolved", "wont_fix"))]
        responses = fire(calls + moves)
        no_5xx(responses)
        assert all(r.status_code == 200 for r in responses[:len(calls)]), [
            (r.status_code, r.text[:200]) for r in responses]
        # One move may win (303); the others, and all of them when a verdict moved the
        # item first, find a newer version (409).
        assert sorted(r.status_code for r in responses[len(calls):]) in (
            [303, 409, 409], [409, 409, 409])

    kept = world.read(_rollups)
    runs, tools, triage = kept
    assert sum(triage.values()) == REPS
    # Every run ended on its moved day, none is left on the first one.
    assert sum(n for (_, dim, day, _), n in runs.items() if dim == "kind"
               and day == date(2026, 3, 2)) == REPS
    assert not any(day == date(2026, 3, 1) for (_, _, day, _) in runs)
    assert tools[(world.ws_id, date(2026, 3, 2), "get_metrics")][2:4] == (3 * REPS, 2 * REPS)
    with world.app.app_context():
        dashboard.rebuild(db.session, Actor.system_actor())
        db.session.remove()
    assert world.read(_rollups) == kept


def _rated_rows(session: Any) -> dict[tuple[int, int], tuple[int, int]]:
    return {(r.author_id, r.workspace_id): (r.runs, r.rateable_runs)
            for r in session.scalars(select(RatedRunCount)) if (r.runs, r.rateable_runs) != (0, 0)}


def _rated_from_ratings(session: Any) -> dict[tuple[int, int], tuple[int, int]]:
    rateable = dict(session.execute(select(Run.id, Run.rateable)).all())
    runs: dict[tuple[int, int], set[int]] = {}
    for author, ws, pk in session.execute(select(Feedback.author_id, Feedback.workspace_id,
                                                 Feedback.run_pk)):
        runs.setdefault((author, ws), set()).add(pk)
    return {k: (len(v), sum(1 for pk in v if rateable[pk])) for k, v in runs.items()}


def test_concurrent_raters_keep_the_rated_run_counts_exact(world: World) -> None:
    """Each user's count of rated runs (services/rated_runs.py): on a run that is still
    running (not rateable), at once: one reviewer's two first ratings (the run counts
    once), another's first ratings, a third deleting their only rating while rating
    another part, and the run finished by a re-sent document (rateable now)."""
    before = world.read(_rated_rows)
    for _ in range(REPS):
        n = next(_seq)
        run_id = f"rated-run-{n}"
        doc = {"session_id": f"rated-session-{n}", "kind": "chat", "query": "Why?",
               "answer": "Because.", "status": "RUNNING",
               "messages": [{"id": "u1", "role": "user", "content": "Why?"},
                            {"id": "a1", "role": "assistant", "content": "Because."}],
               "tool_calls": [{"id": f"{run_id}-c{i}", "tool_name": "get_metrics",
                               "status": "completed"} for i in range(2)]}
        with world.app.app_context():
            workspace = db.session.get(Workspace, world.ws_id)
            run_pk = Factories(db.session).run(workspace, run_id, **doc).id
            r3 = feedback_service.upsert_feedback(
                db.session, Actor(user_id=world.user_ids["r3"]), "tool_call", run_pk,
                f"{run_id}-c1", "negative").id
            db.session.remove()

        def rate(name: str, i: int, call: int) -> Any:
            return lambda: world.as_user(name, i).put(
                f"{world.base(i)}/api/feedback/targets", timeout=60,
                json={"targetType": "tool_call", "targetId": run_pk,
                      "subjectId": f"{run_id}-c{call}", "rating": "positive"})

        calls = [rate("r1", 0, 0), rate("r1", 1, 1), rate("r2", 0, 1), rate("r3", 1, 0),
                 lambda: world.as_user("r3", 0).delete(f"{world.base(0)}/api/feedback/{r3}",
                                                       timeout=60),
                 lambda: world.as_token().put(f"{world.base(1)}/api/ingest/runs/{run_id}",
                                              json={**doc, "status": "SUCCESS"}, timeout=60)]
        responses = fire(calls)
        no_5xx(responses)
        assert [r.status_code for r in responses] == [200, 200, 200, 200, 204, 200], [
            (r.status_code, r.text[:200]) for r in responses]

    kept = world.read(_rated_rows)
    ids = world.user_ids
    for name in ("r1", "r2", "r3"):  # each rated each run once more, now rateable
        key = (ids[name], world.ws_id)
        was = before.get(key, (0, 0))
        assert kept[key] == (was[0] + REPS, was[1] + REPS), name
    assert kept == world.read(_rated_from_ratings)
    with world.app.app_context():
        dashboard.rebuild(db.session, Actor.system_actor())
        db.session.remove()
    assert world.read(_rated_rows) == kept
