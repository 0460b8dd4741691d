"""The ingest API over HTTP: token auth, answers, and the edges of SPEC 9/10."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sqlalchemy import func, select

from reviewapp.actors import Actor
from reviewapp.models import Run, ToolCall
from reviewapp.services import admin


@pytest.fixture
def token(make, ws):
    return make.token(ws)


def headers(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def put_run(client, secret, run_id="r1", **body):
    body.setdefault("query", "q")
    return client.put(f"/api/ingest/runs/{run_id}", json=body, headers=headers(secret))


def post_events(client, secret, body):
    return client.post("/api/ingest/tool-events", json=body, headers=headers(secret))


def test_put_creates_then_upserts(client, token):
    first = put_run(client, token, status="RUNNING")
    assert first.status_code == 201
    assert first.get_json() == {"run_id": "r1", "result": "created", "status": "RUNNING", "finished_at": None,
                                "tool_calls": 0, "failed_tool_calls": 0, "self_evaluation": None}
    assert put_run(client, token, status="RUNNING").get_json()["result"] == "unchanged"
    second = put_run(client, token, status="RUNNING", answer="a")
    assert (second.status_code, second.get_json()["result"]) == (200, "updated")


@pytest.mark.parametrize("auth", [None, "Bearer rvw_wrong", "Basic abc", "Bearer "])
def test_missing_or_wrong_token_is_401(client, auth):
    response = client.put("/api/ingest/runs/r1", json={"query": "q"},
                          headers={"Authorization": auth} if auth else {})
    assert response.status_code == 401
    assert response.get_json()["error"]["code"] == "AUTH_UNAUTHENTICATED"


def test_revoked_token_is_401(client, session, ws):
    new = admin.create_token(session, Actor.system_actor(), ws.id, "old")
    assert put_run(client, new.secret).status_code == 201
    admin.revoke_token(session, Actor.system_actor(), new.token.id)
    assert put_run(client, new.secret).status_code == 401
    assert post_events(client, new.secret, {"id": "c", "run_id": "r1", "event": "delta"}).status_code == 401


def test_token_writes_only_into_its_own_workspace(client, session, make, token, ws):
    other = make.workspace()
    make.run(other, "shared-id", query="theirs")
    response = put_run(client, token, "shared-id", query="mine")
    assert response.status_code == 201  # new in the token's workspace, the other run untouched
    runs = {r.workspace_id: r.query for r in session.scalars(select(Run).where(Run.run_id == "shared-id"))}
    assert runs == {other.id: "theirs", ws.id: "mine"}


def test_unknown_field_is_400_with_its_path(client, token):
    response = put_run(client, token, messages=[{"role": "user", "contnet": "hi"}])
    assert response.status_code == 400
    assert response.get_json()["error"] == {"code": "VALIDATION_INVALID_ARGUMENT",
                                            "message": "messages[0].contnet: unknown field"}


@pytest.mark.parametrize(("raw", "fragment"), [
    (b'{"query": "x",}', "malformed JSON"),
    (b'{"query": NaN}', "NaN"),
    (b'{"query": "x"', "malformed JSON"),
    (b'{"query": ' + b"1" * 5000 + b"}", "malformed JSON"),
    (b"[" * 100000 + b"]" * 100000, "nested too deeply"),
    (b'{"query": "\xff"}', "not valid UTF-8"),
])
def test_malformed_json_is_400(client, token, raw, fragment):
    response = client.put("/api/ingest/runs/r1", data=raw, content_type="application/json",
                          headers=headers(token))
    assert response.status_code == 400
    assert fragment in response.get_json()["error"]["message"]


def test_deep_but_parseable_nesting_is_400(client, token):
    nested: object = "leaf"
    for _ in range(200):
        nested = [nested]
    response = put_run(client, token, alert={"payload": nested})
    assert response.status_code == 400
    assert "nested more than 64 levels" in response.get_json()["error"]["message"]


def test_lone_surrogate_is_400_naming_the_path(client, token):
    raw = b'{"query": "q", "messages": [{"role": "user", "content": "ok"}, {"role": "user", "content": "bad \\ud83d here"}]}'
    response = client.put("/api/ingest/runs/r1", data=raw, content_type="application/json", headers=headers(token))
    assert response.status_code == 400
    assert response.get_json()["error"]["message"].startswith("messages[1].content: contains a lone surrogate")


def test_valid_surrogate_pair_and_unicode_round_trip(client, session, token):
    text = "emoji \ud83d\ude00 中文 עברית"
    raw = json.dumps({"query": text}).encode()  # ensure_ascii: emoji as a \\u pair
    assert client.put("/api/ingest/runs/r1", data=raw, content_type="application/json",
                      headers=headers(token)).status_code == 201
    assert session.scalars(select(Run)).one().query == "emoji 😀 中文 עברית"


def test_nul_character_is_400(client, token):
    raw = b'{"query": "a\\u0000b"}'
    response = client.put("/api/ingest/runs/r1", data=raw, content_type="application/json", headers=headers(token))
    assert response.status_code == 400 and "query: contains a NUL" in response.get_json()["error"]["message"]


def test_body_over_the_limit_is_413_json(app, client, token):
    app.config["MAX_CONTENT_LENGTH"] = 1000
    response = put_run(client, token, query="x" * 2000)
    assert response.status_code == 413
    assert response.get_json()["error"]["code"] == "PAYLOAD_TOO_LARGE"


def test_wrong_content_type_is_400(client, token):
    response = client.put("/api/ingest/runs/r1", data="{}", content_type="text/plain", headers=headers(token))
    assert response.status_code == 400


def test_naive_timestamps_are_utc(client, session, token):
    put_run(client, token, started_at="2026-05-01T12:00:00", finished_at=1777636800)
    run = session.scalars(select(Run)).one()
    assert run.started_at.isoformat() == "2026-05-01T12:00:00+00:00"
    assert run.finished_at.isoformat() == "2026-05-01T12:00:00+00:00"


def test_tool_events_single_and_batch(client, session, token):
    put_run(client, token, status="RUNNING")
    single = post_events(client, token, {"id": "c1", "run_id": "r1", "event": "started", "tool_name": "kb"})
    assert single.status_code == 200
    assert single.get_json() == {"results": [{"index": 0, "id": "c1", "event": "started", "result": "created"}],
                                 "counts": {"created": 1, "updated": 0, "unchanged": 0, "rejected": 0, "ignored": 0}}
    batch = post_events(client, token, [
        {"id": "c1", "run_id": "r1", "event": "completed", "output": "ok"},
        {"id": "c1", "run_id": "r1", "event": "failed", "error": "no"},
        {"id": "c2", "run_id": "r1", "event": "failed", "error": "boom"},
        {"id": "c3", "run_id": "r1", "event": "delta", "output": "par"},
    ])
    assert batch.status_code == 200
    body = batch.get_json()
    assert [r["result"] for r in body["results"]] == ["updated", "rejected", "created", "ignored"]
    assert body["results"][1]["message"] == "call is already completed"
    assert body["counts"] == {"created": 1, "updated": 1, "unchanged": 0, "rejected": 1, "ignored": 1}
    assert session.scalar(select(func.count()).select_from(ToolCall)) == 2


def test_single_rejected_event_is_409_with_its_result(client, token):
    put_run(client, token)
    response = post_events(client, token, {"id": "c1", "run_id": "nope", "event": "completed"})
    assert response.status_code == 409
    assert response.get_json()["error"]["details"] == {"index": 0, "id": "c1", "event": "completed",
                                                       "result": "rejected", "message": "unknown run_id"}


RUN_ID_RULE = ("must match ^[A-Za-z0-9][A-Za-z0-9._:@-]*$ "
               "(letters, digits and . _ : @ -, at most 160 characters, no /)")


@pytest.mark.parametrize("run_id", ["bad id", "a/b", "-x"])
def test_an_event_with_a_run_id_off_the_pattern_says_so_as_the_run_api_does(client, token, run_id):
    """New-user finding: a tool event's run id outside the pattern read "run_id: must not
    be empty" (the schema's pattern reported as if it were the emptiness check); the run
    API's PUT said what the pattern is. Both now give the one rule's wording."""
    single = post_events(client, token, {"id": "c1", "run_id": run_id, "event": "started"})
    assert single.status_code == 400
    assert single.get_json()["error"]["message"] == f"run_id: {RUN_ID_RULE}"
    batch = post_events(client, token, [{"id": "c1", "run_id": run_id, "event": "started"},
                                        {"id": "c2", "run_id": "r1", "event": "started"}])
    rejected = batch.get_json()["results"][0]
    assert (rejected["field"], rejected["message"]) == ("[0].run_id", RUN_ID_RULE)
    put = client.put("/api/ingest/runs/" + run_id.replace("/", "%2F"), json={"query": "q"},
                     headers=headers(token))
    if put.status_code == 400:
        assert put.get_json()["error"]["message"] == f"run_id: {RUN_ID_RULE}"


def test_an_empty_or_blank_call_id_still_reads_must_not_be_empty(client, token):
    for call_id in ("", "   "):
        response = post_events(client, token, {"id": call_id, "run_id": "r1", "event": "started"})
        assert response.get_json()["error"]["message"] == "id: must not be empty"


def test_event_shape_errors_are_400_with_path(client, token):
    put_run(client, token)
    single = post_events(client, token, {"id": "c1", "run_id": "r1", "event": "started", "tool": "x"})
    assert single.get_json()["error"]["message"] == "tool: unknown field"
    batch = post_events(client, token, [{"id": "c1", "run_id": "r1", "event": "done"},
                                        {"id": "c2", "run_id": "r1", "event": "started", "tool_name": "kb"}])
    assert batch.status_code == 200
    assert batch.get_json() == {
        "results": [{"index": 0, "id": "c1", "event": None, "result": "rejected", "field": "[0].event",
                     "message": "must be one of: started, completed, failed, delta"},
                    {"index": 1, "id": "c2", "event": "started", "result": "created"}],
        "counts": {"created": 1, "updated": 0, "unchanged": 0, "rejected": 1, "ignored": 0}}
    assert post_events(client, token, []).status_code == 400
    assert post_events(client, token, "started").status_code == 400


def test_batch_over_the_configured_size_is_413(app, client, token):
    app.config["INGEST_BATCH_MAX_EVENTS"] = 2
    put_run(client, token)
    events = [{"id": f"c{i}", "run_id": "r1", "event": "started", "tool_name": "t"} for i in range(3)]
    response = post_events(client, token, events)
    assert response.status_code == 413 and "at most 2 events" in response.get_json()["error"]["message"]


def test_finish_answers_the_run_state(client, token):
    put_run(client, token, status="RUNNING", tool_calls=[{"id": "t1", "tool_name": "x", "status": "failed"}])
    response = client.post("/api/ingest/runs/r1/finish", json={"status": "SUCCESS", "answer": "done",
                                                                "finished_at": "2026-05-01T12:00:00"},
                           headers=headers(token))
    assert response.status_code == 200
    body = response.get_json()
    assert (body["result"], body["status"], body["finished_at"], body["tool_calls"], body["failed_tool_calls"]) == (
        "updated", "SUCCESS", "2026-05-01T12:00:00+00:00", 1, 1)
    conflict = client.post("/api/ingest/runs/r1/finish", json={"status": "FAILED"}, headers=headers(token))
    assert conflict.status_code == 409 and conflict.get_json()["error"]["details"]["status"] == "SUCCESS"


def test_finish_of_unknown_run_is_403(client, token):
    response = client.post("/api/ingest/runs/zzz/finish", json={"status": "SUCCESS"}, headers=headers(token))
    assert response.status_code == 403 and response.get_json()["error"]["code"] == "AUTH_FORBIDDEN"


@pytest.mark.parametrize("run_id", ["team/a/run-1", "abc/finish", "run-é", ".hidden", "a b"])
def test_run_ids_outside_the_pattern_are_400_naming_run_id(client, session, token, run_id):
    response = put_run(client, token, run_id)
    assert response.status_code == 400
    assert response.get_json()["error"]["message"].startswith("run_id: must match ")
    assert session.scalar(select(func.count()).select_from(Run)) == 0


def test_finish_route_resolves_to_the_run_not_a_run_named_finish(client, session, token):
    assert put_run(client, token, "abc").status_code == 201
    assert put_run(client, token, "abc/finish", status="SUCCESS").status_code == 400
    finished = client.post("/api/ingest/runs/abc/finish", json={"status": "SUCCESS"}, headers=headers(token))
    assert (finished.status_code, finished.get_json()["run_id"]) == (200, "abc")
    assert client.post("/api/ingest/runs/a/b/finish", json={"status": "SUCCESS"},
                       headers=headers(token)).status_code == 400
    assert [(r.run_id, r.status) for r in session.scalars(select(Run))] == [("abc", "SUCCESS")]


def test_run_ids_the_importers_and_agents_use_are_accepted(client, token):
    for run_id in ("tau-gpt-4o-airline-t0-r3", "claude-code-74bfdd52-f1bd-477d-98c8-306bde810080",
                   "chatcmpl-9x.2", "agent@host:run_7", "R" * 160):
        assert put_run(client, token, run_id).status_code == 201, run_id
    assert put_run(client, token, "R" * 161).status_code == 400
def test_run_ending_before_it_started_is_400_naming_finished_at(client, session, token):
    response = put_run(client, token, started_at="2026-05-01T12:00:00Z", finished_at="2026-05-01T11:00:00Z")
    assert response.status_code == 400
    assert response.get_json()["error"]["message"].startswith("finished_at: 2026-05-01T11:00:00+00:00 is before")
    assert session.scalar(select(func.count()).select_from(Run)) == 0


@pytest.mark.parametrize(("raw", "field"), [
    (b'{"query": "q", "verifier_evaluation": {"groundedness_score": 1e308}}',
     "verifier_evaluation.groundedness_score: out of range"),
    (b'{"query": "q", "verifier_evaluation": {"groundedness_score": 1e400}}',
     "verifier_evaluation.groundedness_score: number out of range (not finite)"),
    (b'{"query": "q", "started_at": "1970-01-01T00:00:01Z"}', "started_at: timestamp out of range"),
])
def test_out_of_range_numbers_and_times_are_400_naming_the_field(client, token, raw, field):
    response = client.put("/api/ingest/runs/r1", data=raw, content_type="application/json", headers=headers(token))
    assert response.status_code == 400
    assert response.get_json()["error"]["message"].startswith(field)


def test_event_ending_before_its_start_answers_a_warning(client, token):
    put_run(client, token, status="RUNNING")
    post_events(client, token, {"id": "c1", "run_id": "r1", "event": "started", "tool_name": "kb",
                                "timestamp": "2026-05-01T12:00:05Z"})
    response = post_events(client, token, {"id": "c1", "run_id": "r1", "event": "completed",
                                           "timestamp": "2026-05-01T12:00:01Z"})
    assert response.status_code == 200
    assert response.get_json()["results"] == [{
        "index": 0, "id": "c1", "event": "completed", "result": "updated",
        "warning": "completed at 2026-05-01T12:00:01+00:00 is before the start 2026-05-01T12:00:05+00:00: "
                   "duration recorded as 0 ms"}]


def test_put_moving_a_finished_run_back_to_running_is_409(client, token):
    put_run(client, token, status="SUCCESS", answer="a", finished_at="2026-05-01T12:00:00Z")
    response = put_run(client, token)  # a partial document: status defaults to RUNNING
    assert response.status_code == 409
    error = response.get_json()["error"]
    assert error["code"] == "CONFLICT" and error["message"].startswith("status: ")
    assert error["details"]["status"] == "SUCCESS"


BIG = "99999999999999999999"  # beyond any database integer (int4 and int8 alike)


@pytest.mark.parametrize(("method", "url", "body", "message"), [
    ("delete", f"/api/feedback/{BIG}", None, "feedback_id: out of range"),
    ("get", f"/api/feedback/targets?runPk={BIG}", None, "runPk: out of range"),
    ("get", f"/api/feedback/targets?targetType=chat_message&targetId={BIG}", None, "targetId: out of range"),
    ("put", "/api/feedback/targets", {"targetType": "chat_message", "targetId": int(BIG), "rating": "positive"},
     "targetId: out of range"),
    ("get", "/api/feedback/targets?targetType=citation&targetId=1&subjectId=a%00b", None,
     "subjectId: contains a NUL character"),
    ("get", "/api/runs/a%00b/trace", None, "run_id: contains a NUL character"),
    ("put", "/api/feedback/targets", {"targetType": "chat_message", "targetId": 1, "rating": "positive",
                                      "comment": "a\x00b"}, "comment: contains a NUL character"),
    ("post", "/api/feedback", {"sessionId": "S\x00", "feedback": "useful"}, "sessionId: contains a NUL character"),
])
def test_huge_ids_and_nul_characters_are_400_naming_the_field(client, login, make, session, method, url, body,
                                                               message):
    """SPEC 9/10: never a 500 (PostgreSQL rejects NUL in text; ids overflow the integer)."""
    ws = make.workspace()
    make.run(ws, session_id="S")
    login(make.user(ws))
    response = getattr(client, method)(url, **({"json": body} if body is not None else {}))
    assert response.status_code == 400
    assert response.get_json()["error"]["message"].startswith(message)


NUL = "contains a NUL character"


@pytest.mark.parametrize(("url", "message"), [
    (f"/runs/{BIG}", "run_pk: out of range"), (f"/runs/{BIG}/timeline", "run_pk: out of range"),
    ("/runs/1/tool-calls/a%00b", f"call_id: {NUL}"), (f"/triage/{BIG}", "item_id: out of range"),
    ("/?q=a%00b", f"q: {NUL}"), ("/cases/?q=a%00b", f"q: {NUL}"),
    # The triage list names a refused filter by its label, as the runs list (85b9f06).
    (f"/triage/?assignee={BIG}", "Assignee: must be me, none or a user id"),
])
def test_pages_answer_400_for_huge_ids_and_nul_characters(client, login, make, url, message):
    ws = make.workspace()
    make.run(ws)
    login(make.user(ws, "admin"))
    response = client.get(url)
    assert response.status_code == 400
    assert message in response.get_data(as_text=True)


def test_huge_numbers_in_ingest_bodies_are_400(client, token):
    put_run(client, token, status="RUNNING")
    response = post_events(client, token, {"id": "c1", "run_id": "r1", "event": "completed",
                                           "retrieval": {"hit_count": int(BIG)}})
    assert response.status_code == 400
    assert response.get_json()["error"]["message"].startswith("retrieval.hit_count: out of range")
    response = put_run(client, token, started_at=int(BIG))
    assert response.status_code == 400
    assert response.get_json()["error"]["message"].startswith("started_at: timestamp out of range")


def test_a_step_id_naming_no_step_of_the_run_is_refused_naming_the_field(client, session, token):
    """New-user finding: a tool call whose ``step_id`` named no step of its run was stored
    with no step, silently. The run document brings its steps with its tool calls, and
    events come after the run's document (SPEC 4, 9): a step id that names no step of the
    run is the sender's mistake, refused naming the field, and nothing of it is stored."""
    steps = [{"id": "s1", "name": "Collect logs", "status": "completed"}]
    bad = put_run(client, token, "r-steps", steps=steps, tool_calls=[
        {"id": "c1", "tool_name": "logs", "step_id": "s1"},
        {"id": "c2", "tool_name": "logs", "step_id": "s9"}])
    assert bad.status_code == 400
    error = bad.get_json()["error"]
    assert error["code"] == "VALIDATION_INVALID_ARGUMENT"
    assert "tool_calls[1].step_id" in error["message"]
    assert session.scalar(select(func.count()).select_from(ToolCall)) == 0
    good = put_run(client, token, "r-steps", steps=steps,
                   tool_calls=[{"id": "c1", "tool_name": "logs", "step_id": "s1"}])
    assert good.status_code == 201
    one = post_events(client, token, {"id": "e1", "run_id": "r-steps", "event": "started",
                                      "tool_name": "logs", "step_id": "nope"})
    assert one.status_code == 409
    assert one.get_json()["error"]["details"]["field"] == "step_id"
    assert "step_id" in one.get_json()["error"]["message"]
    batch = post_events(client, token, [
        {"id": "e2", "run_id": "r-steps", "event": "started", "tool_name": "logs", "step_id": "s1"},
        {"id": "e3", "run_id": "r-steps", "event": "failed", "error": "x", "step_id": "s2"}])
    results = batch.get_json()["results"]
    assert [(r["id"], r["result"], r.get("field")) for r in results] == [
        ("e2", "created", None), ("e3", "rejected", "[1].step_id")]
    session.expire_all()
    stored = dict(session.execute(select(ToolCall.id, ToolCall.step_pk)).all())
    assert set(stored) == {"c1", "e2"} and all(stored.values())


@pytest.mark.parametrize("value", ["\u200b\u200b", "\u2060\ufeff", " \u200b ", "\u200e", "a\x07b",
                                   "\u0301"])
def test_an_invisible_or_control_id_is_refused_naming_the_field(client, session, token, value):
    """New-user finding: a ``session_id`` of zero-width spaces was accepted. One rule
    (``domain.ids``) for the agent's identifiers: the session id, the step, tool-call and
    tool names of a run document and of an event hold a visible character and no control
    character; otherwise 400 naming the field, nothing stored."""
    call = {"id": "c1", "tool_name": "logs"}
    cases = [({"session_id": value}, "session_id"),
             ({"steps": [{"id": value, "name": "s"}]}, "steps[0].id"),
             ({"tool_calls": [call, {**call, "id": value}]}, "tool_calls[1].id"),
             ({"tool_calls": [{**call, "tool_name": value}]}, "tool_calls[0].tool_name"),
             ({"tool_calls": [{**call, "step_id": value}]}, "tool_calls[0].step_id")]
    for body, field in cases:
        response = put_run(client, token, "r-ids", **body)
        assert response.status_code == 400, field
        assert field in response.get_json()["error"]["message"]
    assert session.scalar(select(func.count()).select_from(Run)) == 0
    assert put_run(client, token, "r-ids", session_id="s\u200bx").status_code == 201  # visible
    event = {"id": "e1", "run_id": "r-ids", "event": "started", "tool_name": "logs"}
    for key in ("id", "tool_name", "step_id"):
        one = post_events(client, token, {**event, key: value})
        assert one.status_code == 400 and key in one.get_json()["error"]["message"]
        batch = post_events(client, token, [{**event, key: value}])
        assert batch.get_json()["results"][0]["field"] == f"[0].{key}"
    assert session.scalar(select(func.count()).select_from(ToolCall)) == 0


def test_a_nul_or_bad_text_in_one_batch_event_rejects_that_event_only(client, session, token):
    """README (ingest API): in a batch, an event with a shape error is rejected with its
    field and the rest still apply. A NUL character, a lone surrogate or an infinite number
    in one event used to refuse the whole batch with 400 at the JSON parse; now each is
    that event's own rejection, naming ``[i].field``, and the valid events are stored. A
    single event (an object) with one stays a 400 naming the field."""
    assert put_run(client, token, "r-nul").status_code == 201
    event = {"run_id": "r-nul", "event": "started", "tool_name": "logs"}
    body = [{**event, "id": "ok-1"}, {**event, "id": "a\x00b"}, {**event, "id": "c\x1bd"},
            {**event, "id": "lone", "tool_name": "t\ud800"},
            {**event, "id": "big", "arguments": {"n": 1}}, {**event, "id": "ok-2"}]
    raw = json.dumps(body).replace('{"n": 1}', '{"n": 1e400}')
    response = client.post("/api/ingest/tool-events", data=raw, content_type="application/json",
                           headers=headers(token))
    assert response.status_code == 200, response.get_json()
    results = response.get_json()["results"]
    assert [(r["index"], r["result"], r.get("field")) for r in results] == [
        (0, "created", None), (1, "rejected", "[1].id"), (2, "rejected", "[2].id"),
        (3, "rejected", "[3].tool_name"), (4, "rejected", "[4].arguments.n"), (5, "created", None)]
    assert "NUL" in results[1]["message"] and "control" in results[2]["message"]
    assert [r["id"] for r in results] == ["ok-1", None, None, "lone", "big", "ok-2"]  # refused ids not echoed
    assert "surrogate" in results[3]["message"] and "finite" in results[4]["message"]
    assert response.get_json()["counts"]["rejected"] == 4
    session.expire_all()
    assert set(session.scalars(select(ToolCall.id))) == {"ok-1", "ok-2"}
    one = post_events(client, token, {**event, "id": "a\x00b"})
    assert one.status_code == 400 and "id: contains a NUL" in one.get_json()["error"]["message"]


def test_nesting_is_counted_per_event_in_a_batch(client, session, token):
    """The 64-level limit holds for each event as it does for a single one: an event nested
    63 levels deep is taken alone and in a batch (the array is not one of its levels), and
    one nested deeper is rejected alone, the rest applied. A batch was refused whole."""
    def deep(call_id: str, levels: int) -> dict:
        nested: object = "leaf"
        for _ in range(levels):
            nested = [nested]
        return {"id": call_id, "run_id": "r-deep", "event": "started", "tool_name": "t", "arguments": nested}

    assert put_run(client, token, "r-deep").status_code == 201
    assert post_events(client, token, deep("alone", 63)).status_code == 200
    response = post_events(client, token, [deep("in-batch", 63), deep("too-deep", 70),
                                           {**deep("flat", 0), "arguments": {}}])
    assert response.status_code == 200, response.get_json()
    results = response.get_json()["results"]
    assert [(r["id"], r["result"]) for r in results] == [
        ("in-batch", "created"), ("too-deep", "rejected"), ("flat", "created")]
    assert results[1]["field"].startswith("[1].arguments[0]")
    assert "nested more than 64 levels" in results[1]["message"]
    session.expire_all()
    assert set(session.scalars(select(ToolCall.id))) == {"alone", "in-batch", "flat"}


def test_the_readme_ingest_examples_work_as_written(client, session, token):
    """README, "Sending runs and tool-call events": every ``curl`` of the example block,
    method, path and body as printed, answers 2xx in order; the one-document run keeps both
    its tool calls, the second failed with its error (a new user copied ``result`` and
    ``result_summary`` from the page's words and got 400s before the example showed
    ``output``)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = readme.split("## Sending runs and tool-call events")[1].split("```sh\n")[1].split("```")[0]
    calls = re.findall(r'curl -sS -X (\w+) "\$API(/[^"]+)".*?-d \'(.*?)\'\n', block, re.S)
    assert len(calls) == 6, calls
    for method, path, body in calls:
        answer = client.open(f"/api/ingest{path}", method=method, data=body,
                             content_type="application/json", headers=headers(token))
        assert answer.status_code in (200, 201), (method, path, answer.get_json())
    trace = client.get("/api/runs/run-43/trace", headers=headers(token)).get_json()
    calls = {call["id"]: call for call in trace["toolCalls"]}
    assert sorted(calls) == ["call-43-1", "call-43-2"], trace["toolCalls"]
    assert calls["call-43-2"]["status"] == "failed"
    assert "prometheus did not answer" in json.dumps(calls["call-43-2"])
    assert "37" in calls["call-43-1"]["resultSummary"]
