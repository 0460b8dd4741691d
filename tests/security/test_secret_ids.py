"""A secret used as an id (walk-through finding 3b): ``session_id`` is free text that only
groups runs, so it is redacted like a tool-call id (``[redacted]`` plus ``~`` and a keyed
digest of the original: the same session id always maps to the same stored one, so
grouping and re-sends survive); ``run_id`` is the run's identity and address, so a run id
the redactor finds a secret in is refused with a 400 naming ``run_id``. Every ingest path:
the JSON API, tool-call events, the verdict API, OTLP, the LangChain handler and the
file import."""

from __future__ import annotations

import hashlib
import json

import pytest
import requests
from sqlalchemy import func, select

from reviewapp.actors import Actor
from reviewapp.client import ReviewappClient
from reviewapp.extensions import db
from reviewapp.models import DiagnosisSession, OtelSpan, Run, ToolCall
from reviewapp.services import importers, secret_scan

from ..otel.test_otel_api import TRACE, agent_spans, export, post_json

GH = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # ghp_ + 36 letters and digits
PW = "Hunter2SuperSecret!"
SESSION = f"password={PW} {GH}"
FRAGMENTS = (GH[4:], PW)
REFUSED = "run_id: looks like a secret; send an opaque id"
SYSTEM = Actor.system_actor()


def stored_key(app, original: str, redacted: str) -> str:
    """The stored form of an id that holds a secret, computed here from the documented rule
    (README "Redaction"): the redacted text, ``~``, then 16 hex digits of a BLAKE2b digest
    of the original keyed with (a BLAKE2b-256 of) the app's ``SECRET_KEY``."""
    key = hashlib.blake2b(str(app.config["SECRET_KEY"]).encode(), digest_size=32).digest()
    return f"{redacted}~{hashlib.blake2b(original.encode(), key=key, digest_size=8).hexdigest()}"


def leaks(text: str) -> list[str]:
    return [f for f in FRAGMENTS if f in text]


def database_text(session) -> str:
    return "\n".join(repr(tuple(row)) for table in db.metadata.sorted_tables
                     for row in session.execute(select(table)))


def document(session_id: str | None = None, **extra) -> dict:
    doc = {"kind": "chat", "status": "SUCCESS", "query": "q", "answer": "a",
           "started_at": "2026-11-08T00:00:00Z", "finished_at": "2026-11-08T00:01:00Z", **extra}
    if session_id is not None:
        doc["session_id"] = session_id
    return doc


@pytest.fixture
def token(make, ws):
    return make.token(ws, "agent")


@pytest.fixture
def headers(token):
    return {"Authorization": f"Bearer {token}"}


def count(session, model, *where) -> int:
    return session.scalar(select(func.count()).select_from(model).where(*where))


# --- session_id ----------------------------------------------------------------------------


def test_a_session_id_holding_secrets_is_stored_and_shown_redacted(app, client, headers, session,
                                                                   make, ws, login):
    expected = stored_key(app, SESSION, "password=[redacted] [redacted]")
    assert client.put("/api/ingest/runs/r1", json=document(SESSION), headers=headers).status_code == 201
    assert session.scalars(select(DiagnosisSession.session_id)).all() == [expected]
    trace = client.get("/api/runs/r1/trace", headers=headers)
    assert trace.get_json()["session"]["sessionId"] == expected
    assert leaks(trace.get_data(as_text=True)) == []
    assert leaks(database_text(session)) == []
    page = login(make.user(ws)).get("/runs/by-id/r1", follow_redirects=True)
    assert page.status_code == 200 and expected in page.get_data(as_text=True)
    assert leaks(page.get_data(as_text=True)) == []


def test_re_sending_the_same_session_id_still_groups(app, client, headers, session):
    for run_id in ("r1", "r2"):
        assert client.put(f"/api/ingest/runs/{run_id}", json=document(SESSION),
                          headers=headers).status_code == 201
    again = client.put("/api/ingest/runs/r1", json=document(SESSION), headers=headers)
    assert (again.status_code, again.get_json()["result"]) == (200, "unchanged")
    other = SESSION.replace(PW, "Other7Secret!pass")  # redacts to the same text; its own session
    assert client.put("/api/ingest/runs/r3", json=document(other), headers=headers).status_code == 201
    sessions = dict(session.execute(select(Run.run_id, DiagnosisSession.session_id)
                                    .join(Run.session)).all())
    assert sessions == {"r1": stored_key(app, SESSION, "password=[redacted] [redacted]"),
                        "r2": stored_key(app, SESSION, "password=[redacted] [redacted]"),
                        "r3": stored_key(app, other, "password=[redacted] [redacted]")}
    assert count(session, DiagnosisSession) == 2


def test_ordinary_ids_are_stored_as_sent(client, headers, session):
    doc = document("conv-7 (checkout)")
    assert client.put("/api/ingest/runs/run-42.a:b@c_d", json=doc, headers=headers).status_code == 201
    assert client.put("/api/ingest/runs/r2", json=document(), headers=headers).status_code == 201
    sessions = dict(session.execute(select(Run.run_id, DiagnosisSession.session_id)
                                    .join(Run.session)).all())
    assert sessions == {"run-42.a:b@c_d": "conv-7 (checkout)", "r2": "r2"}


def test_the_verdict_api_finds_the_session_by_the_id_the_agent_sent(app, client, headers, session):
    assert client.put("/api/ingest/runs/r1", json=document(SESSION), headers=headers).status_code == 201
    for session_id in (SESSION, stored_key(app, SESSION, "password=[redacted] [redacted]")):
        response = client.post("/api/feedback", headers=headers,
                               json={"sessionId": session_id, "feedback": "useful"})
        assert (response.status_code, response.get_json()["runId"]) == (200, "r1")


# --- run_id ----------------------------------------------------------------------------------


@pytest.mark.parametrize("run_id", [GH, f"run-{GH}", "AKIAQ7F2LM9XZR4TY8WP"])
def test_a_run_id_holding_a_secret_is_refused_naming_run_id(client, headers, session, run_id):
    fragment = run_id.removeprefix("run-")[4:]
    answers = [
        client.put(f"/api/ingest/runs/{run_id}", json=document("s1"), headers=headers),
        client.put(f"/api/ingest/runs/{run_id}", json={**document("s1"), "run_id": run_id},
                   headers=headers),
        client.put(f"/api/ingest/runs/{run_id}", json={"external_outcome": "pass"}, headers=headers),
        client.post(f"/api/ingest/runs/{run_id}/finish", json={"status": "SUCCESS"}, headers=headers),
        client.patch(f"/api/ingest/runs/{run_id}/outcome", json={"external_outcome": "pass"},
                     headers=headers),
        client.post("/api/ingest/tool-events", headers=headers, json={
            "id": "c1", "run_id": run_id, "event": "started", "tool_name": "sh"}),
    ]
    for response in answers:
        assert response.status_code == 400, response.get_json()
        assert response.get_json()["error"] == {"code": "VALIDATION_INVALID_ARGUMENT", "message": REFUSED}
    batch = client.post("/api/ingest/tool-events", headers=headers, json=[
        {"id": "c1", "run_id": run_id, "event": "started", "tool_name": "sh"}])
    assert batch.get_json()["results"] == [{"index": 0, "id": "c1", "event": "started", "result": "rejected",
                                            "field": "[0].run_id",
                                            "message": REFUSED.removeprefix("run_id: ")}]
    assert [fragment in r.get_data(as_text=True) for r in [*answers, batch]] == [False] * 7
    assert (count(session, Run), count(session, DiagnosisSession), count(session, ToolCall)) == (0, 0, 0)


def test_the_apps_own_ingest_token_as_run_id_is_refused_and_redacted_in_text(client, headers, token,
                                                                          make, ws, session):
    """Walk 16: ``PUT /api/ingest/runs/rvw_...`` was stored (201) with the token as run id and
    session id, and "our reviewapp token is rvw_..." kept the token in clear. Both tokens here
    are issued by the app itself (``make.token``), so the check follows the real format."""
    other = make.token(ws, "second")
    answer = client.put(f"/api/ingest/runs/{other}", json=document(), headers=headers)
    assert (answer.status_code, answer.get_json()["error"]["message"]) == (400, REFUSED)
    assert other[4:] not in answer.get_data(as_text=True)
    assert count(session, Run) == 0
    assert client.put("/api/ingest/runs/r1", json=document(query=f"our reviewapp token is {other} ok"),
                      headers=headers).status_code == 201
    assert session.scalar(select(Run.query).where(Run.run_id == "r1")) == "our reviewapp token is [redacted] ok"
    assert other[4:] not in database_text(session) and token[4:] not in database_text(session)


def test_events_of_ordinary_runs_in_the_same_batch_still_apply(client, headers, session):
    assert client.put("/api/ingest/runs/r1", json=document(status="RUNNING"),
                      headers=headers).status_code == 201
    batch = client.post("/api/ingest/tool-events", headers=headers, json=[
        {"id": "c1", "run_id": "r1", "event": "started", "tool_name": "sh"},
        {"id": "c2", "run_id": GH, "event": "started", "tool_name": "sh"},
        {"id": "c3", "run_id": "r1", "event": "started", "tool_name": "sh"}])
    assert [r["result"] for r in batch.get_json()["results"]] == ["created", "rejected", "created"]
    assert sorted(session.scalars(select(ToolCall.id))) == ["c1", "c3"]


# --- the file import ----------------------------------------------------------------------------


def test_the_import_reports_a_secret_run_id_with_its_record_and_redacts_session_ids(
        app, session, make, tmp_path):
    ws = make.workspace()
    records = [
        {"run_id": GH, "kind": "chat", "status": "SUCCESS", "query": "q", "answer": "a"},
        {"run_id": "ok-1", "session_id": SESSION, "kind": "chat", "status": "SUCCESS", "query": "q"},
        {"run_id": f"{GH}/x", "kind": "chat", "status": "SUCCESS", "query": "q"},  # no valid run id
    ]
    native = tmp_path / "native.jsonl"
    native.write_text("\n".join(json.dumps(r) for r in records))
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"id": "ok-2", "session_id": SESSION, "messages": [
        {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}))
    problems: list[str] = []
    summary = importers.import_files(session, SYSTEM, ws.id, [native], problem=problems.append)
    summary2 = importers.import_files(session, SYSTEM, ws.id, [chat], fmt="openai-messages")
    assert (summary.created, summary.failed, summary2.created) == (1, 2, 1)
    assert summary.problems == problems
    assert problems == [f"native.jsonl: record 0 ({stored_key(app, GH, '[redacted]')}): {REFUSED}",
                        "native.jsonl: record 2: run_id: run id '[redacted]/x' must be 1-160 ASCII letters, "
                        "digits and . _ : @ - (starting with a letter or digit, no /)"]
    assert set(session.scalars(select(DiagnosisSession.session_id))) == {
        stored_key(app, SESSION, "password=[redacted] [redacted]")}
    assert sorted(session.scalars(select(Run.run_id))) == ["ok-1", "ok-2"]
    assert leaks(database_text(session)) == []


# --- OTLP ---------------------------------------------------------------------------------------


def _with_conversation(spans: list[dict], conversation: str, trace: str) -> list[dict]:
    for span in spans:
        span["traceId"] = trace
    spans[0]["attributes"].append({"key": "gen_ai.conversation.id", "value": {"stringValue": conversation}})
    return spans


def test_otlp_conversation_ids_are_redacted_and_still_group(app, client, token, session):
    other_trace = "6c9f" * 8
    for trace in (TRACE, other_trace):
        body = export(*_with_conversation(agent_spans(), SESSION, trace))
        response = post_json(client, token, body)
        assert (response.status_code, response.get_json()) == (200, {})
    sessions = dict(session.execute(select(Run.run_id, DiagnosisSession.session_id)
                                    .join(Run.session)).all())
    expected = stored_key(app, SESSION, "password=[redacted] [redacted]")
    assert sessions == {TRACE: expected, other_trace: expected}
    stored = json.dumps([s.data for s in session.scalars(select(OtelSpan))])
    assert expected in stored and leaks(stored) == [] and leaks(database_text(session)) == []


def test_otlp_names_run_id_in_partial_success_for_a_trace_id_read_as_a_secret(
        app, client, token, session, monkeypatch):
    """No 32-hex trace id is a secret to the present rules (20,000 random ones: none), so
    the redactor is told to find one here: the rules grow, and the path must hold then."""
    redactor = secret_scan._redactor
    text = redactor.text
    monkeypatch.setattr(redactor, "text", lambda t: "[redacted]" if t == TRACE else text(t))
    response = post_json(client, token, export(*agent_spans()))
    partial = response.get_json()["partialSuccess"]
    assert (response.status_code, partial["rejectedSpans"]) == (200, "3")
    assert partial["errorMessage"] == f"trace {stored_key(app, TRACE, '[redacted]')}: {REFUSED}"
    assert TRACE not in response.get_data(as_text=True)
    assert (count(session, Run), count(session, OtelSpan), count(session, ToolCall)) == (0, 0, 0)


# --- LangChain ------------------------------------------------------------------------------------


def _answer(inputs: dict) -> dict:
    return {"output": "ok"}


def test_langchain_session_id_is_redacted_and_a_secret_run_id_refused(app, live_server, token, session):
    from langchain_core.runnables import RunnableLambda

    from reviewapp.langchain_handler import ReviewappCallbackHandler

    client = ReviewappClient(live_server, token)
    handler = ReviewappCallbackHandler(client)
    run_id = "9b0f3a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
    RunnableLambda(_answer).invoke({"input": "q"}, config={
        "callbacks": [handler], "run_id": run_id, "metadata": {"session_id": SESSION}})
    client.flush()
    assert client.dropped == 0
    trace = requests.get(f"{live_server}/api/runs/{run_id}/trace", timeout=30,
                         headers={"Authorization": f"Bearer {token}"}).json()
    assert (trace["run"]["runId"], trace["run"]["sessionId"]) == (
        run_id, stored_key(app, SESSION, "password=[redacted] [redacted]"))
    RunnableLambda(_answer).invoke({"input": "q"}, config={
        "callbacks": [handler], "metadata": {"reviewapp_run_id": GH, "session_id": "s2"}})
    client.close()
    # The run document and its finish, each a 400 naming run_id: refused for their content.
    assert (client.rejected, client.dropped) == (2, 0)
    session.expire_all()
    assert session.scalars(select(Run.run_id)).all() == [run_id]
