"""The ingest API over HTTP: token auth, answers, and the edges of SPEC 9/10."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from reviewapp.actors import Actor
from reviewapp.models import Run, ToolCall
from reviewapp.services import admin


@pytest.fixture
def ws(make):
    return make.workspace()


@pytest.fixture
def token(session, ws):
    return admin.create_token(session, Actor.system_actor(), ws.id, "agent").secret


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


def test_event_shape_errors_are_400_with_path(client, token):
    put_run(client, token)
    single = post_events(client, token, {"id": "c1", "run_id": "r1", "event": "started", "tool": "x"})
    assert single.get_json()["error"]["message"] == "tool: unknown field"
    batch = post_events(client, token, [{"id": "c1", "run_id": "r1", "event": "done"}])
    assert batch.status_code == 400
    assert batch.get_json()["error"]["message"].startswith("[0].event: must be one of")
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


def test_run_ids_with_unicode_work_and_slashes_are_refused(client, session, token):
    assert put_run(client, token, "team-a:run-é").status_code == 201
    assert client.post("/api/ingest/runs/team-a:run-é/finish", json={"status": "SUCCESS"},
                       headers=headers(token)).status_code == 200
    assert session.scalars(select(Run)).one().run_id == "team-a:run-é"
    # A "/" would make ".../<run_id>/finish" ambiguous (PUT .../abc/finish created "abc/finish").
    refused = put_run(client, token, "team/a/run-é")
    assert refused.status_code == 400
    assert refused.get_json()["error"]["message"].startswith("run_id: ")
    assert session.scalars(select(Run.run_id)).all() == ["team-a:run-é"]
