"""Races through HTTP: two gunicorn processes (gthread, 4 threads each) on one database —
SQLite in WAL mode, or a private PostgreSQL database when ``REVIEWAPP_TEST_DB_URL`` is set.

Each scenario fires its requests at both processes at once (threads released by a
barrier), ``REPS`` times on fresh targets, and then asserts the one correct final state
in the database and that no response was a 5xx:

* first feedback submits by one reviewer on one target: one row, one consistent history
  (SPEC 6.1);
* ``useful`` verdicts by several reviewers, the same reviewer twice and the ingest token:
  exactly one case, every answer names it (SPEC 6.2, 7);
* a verifier evaluation (run upsert) racing tool events that re-score the rule
  evaluation: both keys survive, the counts and the score describe every call (SPEC 5);
* triage changes with one version: one wins, the others get 409 (SPEC 10);
* started / completed / failed / replayed events of one call id: one row, a valid final
  state, the other terminal event rejected, counters right (SPEC 4).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select

from reviewapp.actors import Actor
from reviewapp.domain.fault_categories import FAULT_CATEGORIES
from reviewapp.extensions import db
from reviewapp.models import (
    Case,
    Feedback,
    FeedbackEvent,
    Message,
    Run,
    ToolCall,
    TriageItem,
    Workspace,
)
from reviewapp.services import feedback as feedback_service

from ..factories import Factories
from .servers import fire
from .world import REPS, World, no_5xx, serving_world

T0 = datetime(2026, 3, 1, 8, 0, 0, tzinfo=UTC)
_seq = itertools.count(1)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from serving_world(tmp_path_factory, "races")


def _final_message(session: Any, run_pk: int) -> int:
    return session.scalar(select(Message.id).where(Message.run_pk == run_pk,
                                                   Message.role == "assistant")
                          .order_by(Message.ordinal.desc()).limit(1))


# --------------------------------------------------------------------------- feedback


def test_concurrent_first_feedback_one_row_one_history(world: World) -> None:
    """Six first submits of one reviewer on one answer (form posts and the JSON API, both
    processes, alternating ratings, distinct comments): one row, an unbroken history
    whose last ``after`` is the row, and the run's verdict following the stored rating."""
    k = 6
    for rep in range(REPS):
        run_pk, _, _ = world.run()
        message = world.read(lambda s: _final_message(s, run_pk))
        calls = []
        for i in range(k):
            rating = "positive" if i % 2 == 0 else "negative"
            comment = f"rep {rep} submit {i}"
            session, base = world.as_user("r1", i), world.base(i)
            if i % 3 == 0:
                calls.append(lambda s=session, b=base, r=rating, c=comment: s.post(
                    f"{b}/feedback", allow_redirects=False, timeout=60, data={
                        "target_type": "chat_message", "target_id": message, "subject_id": "",
                        "rating": r, "comment": c, "next": f"/runs/{run_pk}"}))
            else:
                calls.append(lambda s=session, b=base, r=rating, c=comment: s.put(
                    f"{b}/api/feedback/targets", timeout=60, json={
                        "targetType": "chat_message", "targetId": message, "rating": r,
                        "comment": c}))
        responses = fire(calls)
        no_5xx(responses)
        assert [r.status_code for r in responses] == [303 if i % 3 == 0 else 200 for i in range(k)]

        def state(s: Any) -> tuple:
            rows = s.scalars(select(Feedback).where(
                Feedback.author_id == world.user_ids["r1"], Feedback.target_id == message,
                Feedback.target_type == "chat_message")).all()
            events = s.scalars(select(FeedbackEvent).where(
                FeedbackEvent.target_id == message, FeedbackEvent.target_type == "chat_message")
                .order_by(FeedbackEvent.id)).all()
            run = s.get(Run, run_pk)
            return ([(r.id, r.rating, r.comment) for r in rows],
                    [(e.feedback_id, e.action, e.before, e.after) for e in events],
                    run.feedback, run.status)

        rows, events, verdict, status = world.read(state)
        assert len(rows) == 1
        row_id, rating, comment = rows[0]
        # Every submit changed the comment, so each one is in the history exactly once.
        assert len(events) == k
        assert [e[1] for e in events] == ["create"] + ["update"] * (k - 1)
        assert {e[0] for e in events} == {row_id}
        assert events[0][2] is None
        for before, after in itertools.pairwise(events):
            assert after[2] == before[3]  # each write saw the one before it
        assert events[-1][3] == {"rating": rating, "reason": None, "comment": comment,
                                 "correction": None}
        assert sorted(e[3]["comment"] for e in events) == sorted(
            f"rep {rep} submit {i}" for i in range(k))
        assert verdict == ("useful" if rating == "positive" else "not_useful")
        assert status == "SUCCESS"


def test_concurrent_useful_verdicts_make_exactly_one_case(world: World) -> None:
    """Useful verdicts on one run by three reviewers, the same reviewer on both
    processes, the ingest token twice and two answer thumbs-up: one AUTO case, every
    JSON answer carries its id, the run is useful, its status unchanged."""
    for _ in range(REPS):
        run_pk, run_id, session_id = world.run()
        message = world.read(lambda s: _final_message(s, run_pk))
        body = {"runId": run_id, "sessionId": session_id, "feedback": "useful"}
        api_callers = [world.as_user("r1", 0), world.as_user("r1", 1), world.as_user("r2", 0),
                       world.as_user("r3", 1), world.as_token(), world.as_token()]
        calls = [lambda s=s, b=world.base(i): s.post(f"{b}/api/feedback", json=body, timeout=60)
                 for i, s in enumerate(api_callers)]
        for i, name in enumerate(("r2", "r3")):
            calls.append(lambda s=world.as_user(name, i), b=world.base(i): s.post(
                f"{b}/feedback", allow_redirects=False, timeout=60, data={
                    "target_type": "chat_message", "target_id": message, "rating": "positive"}))
        responses = fire(calls)
        no_5xx(responses)
        assert [r.status_code for r in responses] == [200] * 6 + [303, 303]
        cases = world.read(lambda s: [(c.case_id, c.source_type, c.run_pk) for c in s.scalars(
            select(Case).where(Case.workspace_id == world.ws_id, Case.diagnosis_id == run_id))])
        assert len(cases) == 1
        case_id, source, case_run = cases[0]
        assert (source, case_run) == ("AUTO", run_pk)
        assert {r.json()["caseId"] for r in responses[:6]} == {case_id}
        assert all(r.json()["success"] and r.json()["runId"] == run_id for r in responses[:6])
        assert world.read(lambda s: (s.get(Run, run_pk).feedback, s.get(Run, run_pk).status)) \
            == ("useful", "SUCCESS")


# --------------------------------------------------------------------------- evaluations


def _event(run_id: str, call_id: str, event: str, at: datetime, **extra: Any) -> dict[str, Any]:
    return {"id": call_id, "run_id": run_id, "event": event, "tool_name": "search_kb",
            "timestamp": at.isoformat(), **extra}


def test_concurrent_evaluation_writes_keep_every_key(world: World) -> None:
    """Two re-sent run documents with a verifier evaluation race four tool-event posts
    (each a new completed call of the finished run, re-scoring ``rule_evaluation``): both
    keys survive, and the counts and the evidence score describe all five calls."""
    n_events = 4
    for rep in range(REPS):
        n = next(_seq)
        run_id, session_id = f"race-eval-{n}", f"race-eval-session-{n}"
        doc = {"session_id": session_id, "kind": "chat", "query": "Why is db-1 slow?",
               "answer": "Disk full.", "status": "SUCCESS",
               "messages": [{"id": "u1", "role": "user", "content": "Why is db-1 slow?"},
                            {"id": "a1", "role": "assistant", "content": "Disk full."}],
               "tool_calls": [{"id": f"{run_id}-c0", "tool_name": "get_metrics",
                               "status": "completed", "started_at": T0.isoformat(),
                               "completed_at": (T0 + timedelta(seconds=1)).isoformat()}]}
        with world.app.app_context():
            workspace = db.session.get(Workspace, world.ws_id)
            run_pk = Factories(db.session).run(workspace, run_id, **doc).id
        verifier = [{"verdict": "PASS", "groundedness_score": 0.9, "round": rep * 10 + j}
                    for j in range(2)]
        calls = [lambda s=world.as_token(), b=world.base(j), v=v: s.put(
            f"{b}/api/ingest/runs/{run_id}", json={**doc, "verifier_evaluation": v}, timeout=60)
            for j, v in enumerate(verifier)]
        for j in range(n_events):
            started = T0 + timedelta(seconds=10 + j)
            retrieval = {"match_level": "L0", "hit_count": 2} if j == 0 else None
            events = [_event(run_id, f"{run_id}-e{j}", "started", started),
                      _event(run_id, f"{run_id}-e{j}", "completed", started + timedelta(seconds=1),
                             **({"retrieval": retrieval} if retrieval else {}))]
            calls.append(lambda s=world.as_token(), b=world.base(j + 1), e=events: s.post(
                f"{b}/api/ingest/tool-events", json=e, timeout=60))
        responses = fire(calls)
        no_5xx(responses)
        assert [r.status_code for r in responses] == [200] * (2 + n_events)

        def state(s: Any) -> tuple:
            run = s.get(Run, run_pk)
            calls = s.scalars(select(ToolCall).where(ToolCall.run_pk == run_pk)).all()
            return (run.self_evaluation, run.evidence_score, run.verifier_verdict,
                    run.tool_call_count, run.failed_tool_call_count,
                    sorted((c.id, c.status) for c in calls))

        evaluation, score, verdict, count, failed, stored = world.read(state)
        assert stored == sorted([(f"{run_id}-c0", "completed")]
                                + [(f"{run_id}-e{j}", "completed") for j in range(n_events)])
        assert (count, failed) == (1 + n_events, 0)
        assert evaluation["verifier_evaluation"] in verifier
        assert verdict == "PASS"
        rule = evaluation["rule_evaluation"]
        # 5 completed calls (+30), one with an L0 hit (+35): nothing else applies.
        assert rule["evidence_score"] == score == 65
        assert [(f["name"], f["delta"], f["description"]) for f in rule["factors"]] == [
            ("has_successful_tool_call", 30, f"successful tool calls: {1 + n_events}"),
            ("l0_exact_match", 35, "calls with an L0 exact hit: 1"),
        ]


# --------------------------------------------------------------------------- triage


def test_concurrent_triage_changes_one_wins_rest_409(world: World) -> None:
    """Six changes of one triage item sent with the same version (notes and categories,
    both processes): exactly one 303, five 409, the stored item holds the winner's change
    and its version went up by one."""
    k = 6
    for rep in range(REPS):
        run_pk, run_id, session_id = world.run()
        with world.app.app_context():
            feedback_service.set_run_verdict(db.session, Actor.system_actor(), session_id,
                                             run_id, "not_useful")
            item = db.session.scalars(select(TriageItem).where(TriageItem.run_pk == run_pk)).one()
            item_id, version = item.id, item.version
            db.session.remove()
        changes = []
        for i in range(k):
            if i % 3 == 2:
                # A code of the workspace's list (unknown codes are refused with 400).
                code = FAULT_CATEGORIES.codes()[(rep + i) % len(FAULT_CATEGORIES)]
                changes.append(("category", {"fault_category": code}))
            else:
                changes.append(("note", {"note": f"note {rep}/{i}"}))
        calls = [lambda s=world.as_user("lead", i), b=world.base(i), a=action, d=data: s.post(
            f"{b}/triage/{item_id}/{a}", data={**d, "version": version}, allow_redirects=False,
            timeout=60) for i, (action, data) in enumerate(changes)]
        responses = fire(calls)
        no_5xx(responses)
        codes = [r.status_code for r in responses]
        assert sorted(codes) == [303] + [409] * (k - 1), codes
        action, data = changes[codes.index(303)]
        stored = world.read(lambda s: (lambda t: (t.version, t.note, t.fault_category, t.state))(
            s.get(TriageItem, item_id)))
        expected_note = data["note"] if action == "note" else None
        expected_category = data["fault_category"] if action == "category" else None
        assert stored == (version + 1, expected_note, expected_category, "new")


# --------------------------------------------------------------------------- tool events


def test_concurrent_tool_events_of_one_call(world: World) -> None:
    """started, completed, failed and replays of one call id on a RUNNING run, fired at
    both processes at once: one row; its final status is one terminal status whose
    duration comes from the real start; every event of the other terminal status is
    rejected (409); the run's counters count one call (failed only if it failed)."""
    for rep in range(REPS):
        run_pk, run_id, _ = world.run(status="RUNNING")
        call_id = f"{run_id}-call"
        t0 = T0 + timedelta(minutes=rep)
        started = _event(run_id, call_id, "started", t0, arguments={"q": "disk"})
        completed = _event(run_id, call_id, "completed", t0 + timedelta(milliseconds=500),
                           output={"hits": 1})
        failed = _event(run_id, call_id, "failed", t0 + timedelta(milliseconds=700),
                        error="TimeoutError: upstream")
        events = [started, completed, failed, started, completed, failed, completed]
        calls = [lambda s=world.as_token(), b=world.base(i), e=e: s.post(
            f"{b}/api/ingest/tool-events", json=e, timeout=60) for i, e in enumerate(events)]
        calls.append(lambda s=world.as_token(), b=world.base(1): s.post(
            f"{b}/api/ingest/tool-events", json=[started, completed], timeout=60))
        responses = fire(calls)
        no_5xx(responses)

        def state(s: Any) -> tuple:
            rows = s.scalars(select(ToolCall).where(ToolCall.workspace_id == world.ws_id,
                                                    ToolCall.id == call_id)).all()
            run = s.get(Run, run_pk)
            return ([(r.status, r.started_at, r.completed_at, r.duration_ms, r.compensated)
                     for r in rows], run.tool_call_count, run.failed_tool_call_count, run.status)

        rows, count, failed_count, run_status = world.read(state)
        assert len(rows) == 1
        status, started_at, completed_at, duration, compensated = rows[0]
        assert status in ("completed", "failed")
        assert (started_at, compensated) == (t0, False)
        assert duration == (500 if status == "completed" else 700)
        assert completed_at == t0 + timedelta(milliseconds=duration)
        assert (count, failed_count, run_status) == (1, int(status == "failed"), "RUNNING")
        loser = "failed" if status == "completed" else "completed"
        for event, response in zip(events, responses):
            if event["event"] == loser:
                assert response.status_code == 409, response.text
                assert response.json()["error"]["details"]["result"] == "rejected"
            else:
                assert response.status_code == 200, response.text
                assert response.json()["results"][0]["result"] in ("created", "updated",
                                                                   "unchanged")
        batch = responses[-1]
        assert batch.status_code == 200
        assert (batch.json()["results"][1]["result"] == "rejected") == (status == "failed")


def test_concurrent_finishes_one_status_wins(world: World) -> None:
    """Three SUCCESS and three FAILED finishes of one RUNNING run at once: the run ends
    with one status; every finish with that status answers 200, every other one 409 with
    the stored status in its details (never two acknowledged, contradicting ends)."""
    for _ in range(REPS):
        run_pk, run_id, _ = world.run(status="RUNNING")
        statuses = ["SUCCESS", "FAILED"] * 3
        calls = [lambda s=world.as_token(), b=world.base(i), st=st: s.post(
            f"{b}/api/ingest/runs/{run_id}/finish", timeout=60,
            json={"status": st, "finished_at": T0.isoformat()}) for i, st in enumerate(statuses)]
        responses = fire(calls)
        no_5xx(responses)
        stored = world.read(lambda s: s.get(Run, run_pk).status)
        assert stored in ("SUCCESS", "FAILED")
        for status, response in zip(statuses, responses):
            if status == stored:
                assert response.status_code == 200, response.text
                assert response.json()["status"] == stored
            else:
                assert response.status_code == 409, response.text
                assert response.json()["error"]["details"]["status"] == stored


def test_rating_racing_a_reingest_that_drops_the_message(world: World) -> None:
    """A reviewer rates an assistant message while the agent re-sends the run without
    that message (SPEC 10: a child that carries feedback is never deleted): either the
    rating is stored and the message kept, or the message is gone and the rating was
    refused (403) — never a stored rating of a deleted message."""
    for _ in range(REPS):
        n = next(_seq)
        run_id = f"race-drop-{n}"
        messages = [{"id": "u1", "role": "user", "content": "q"},
                    {"id": "a1", "role": "assistant", "content": "first answer"},
                    {"id": "a2", "role": "assistant", "content": "final answer"}]
        doc = {"session_id": f"race-drop-session-{n}", "query": "q", "answer": "final answer",
               "status": "SUCCESS", "messages": messages}
        with world.app.app_context():
            workspace = db.session.get(Workspace, world.ws_id)
            run_pk = Factories(db.session).run(workspace, run_id, **doc).id
            first = db.session.scalar(select(Message.id).where(Message.run_pk == run_pk,
                                                               Message.message_id == "a1"))
            db.session.remove()
        dropped = {**doc, "messages": [messages[0], messages[2]]}
        calls = [lambda s=world.as_user("r1", 0), b=world.base(0): s.put(
                     f"{b}/api/feedback/targets", timeout=60, json={
                         "targetType": "chat_message", "targetId": first, "rating": "negative"}),
                 lambda s=world.as_token(), b=world.base(1): s.put(
                     f"{b}/api/ingest/runs/{run_id}", json=dropped, timeout=60)]
        rating, upsert = fire(calls)
        no_5xx([rating, upsert])
        assert upsert.status_code == 200, upsert.text
        kept, rows = world.read(lambda s: (
            s.get(Message, first) is not None,
            s.scalar(select(func.count()).select_from(Feedback).where(
                Feedback.target_type == "chat_message", Feedback.target_id == first))))
        if rating.status_code == 200:
            assert (kept, rows) == (True, 1)
        else:
            assert rating.status_code == 403, rating.text
            assert (kept, rows) == (False, 0)
