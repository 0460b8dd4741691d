"""A secret sent percent-encoded or split by a zero-width character is stored redacted
on every path into the store (SPEC 4; module doc of ``domain.encoded_text``): the JSON
API, OTLP span attributes, a file import and a reviewer's comment all go through the
services' one redaction; the database is then searched for the secret, as sent and
decoded."""

from __future__ import annotations

import json
from urllib.parse import unquote

from sqlalchemy import select

from reviewapp.actors import Actor, Role
from reviewapp.models import Feedback
from reviewapp.services import admin, feedback

from ..otel.test_otel_api import export, post_json, span
from .test_redaction_everywhere import _database_text

BODY = "Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"  # a GitHub token's body (invented)
BEARER = "Zq8Wx7Ec6Rv5Tb4Yn3Um2Ik1"  # invented
SENT = [f"clone ghp%5F{BODY}", f"h=Authorization%3A%20Bearer%20{BEARER}",
        f"ghp_\u200b{BODY}", "form=password%253Dhunter2hunter2%2526x%253D1"]
SECRETS = (BODY, BEARER, "hunter2hunter2")


def _stored(session) -> str:
    text = _database_text(session)
    return text + unquote(unquote(text)) + text.replace("\u200b", "")


def _leaks(session) -> list[str]:
    stored = _stored(session)
    assert "[redacted]" in stored
    return [s for s in SECRETS if s in stored]


def _token(make, session) -> tuple[object, dict]:
    ws = make.workspace("enc")
    token = admin.create_token(session, Actor.system_actor(), ws.id, "agent").secret
    return ws, {"Authorization": f"Bearer {token}"}


def test_api_ingest(client, make, session):
    _, headers = _token(make, session)
    doc = {"session_id": "s1", "kind": "chat", "status": "SUCCESS", "query": SENT[0], "answer": SENT[2],
           "tool_calls": [{"id": "c1", "tool_name": "http", "arguments": {"url": SENT[1]}, "output": SENT[3]}]}
    response = client.put("/api/ingest/runs/enc-1", json=doc, headers=headers)
    assert response.status_code == 201, response.get_json()
    assert _leaks(session) == []


def test_otlp_span_attributes(client, make, session):
    _, headers = _token(make, session)
    body = export(span("1111111111111111", "invoke_agent bot", start=0, end=100, attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot",
        "gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": SENT[0]}]}],
        "http.url": SENT[1]}),
        span("2222222222222222", "execute_tool http", parent="1111111111111111", start=10, end=30,
             attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "c1",
                         "gen_ai.tool.call.arguments": {"q": SENT[2], "f": SENT[3]}}))
    response = post_json(client, headers["Authorization"].split()[1], body)
    assert response.status_code == 200, response.get_data(as_text=True)
    assert _leaks(session) == []


def test_file_import(make, session, runner, tmp_path):
    ws = make.workspace("enc-import")
    line = {"id": "imp-1", "messages": [
        {"role": "user", "content": SENT[0]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "run", "arguments": json.dumps({"u": SENT[1]})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": SENT[3]},
        {"role": "assistant", "content": SENT[2]}]}
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(line))
    result = runner.invoke(args=["runs", "import", str(path), "--workspace", ws.slug])
    assert result.exit_code == 0, result.output
    assert _leaks(session) == []


def test_reviewer_comment_and_correction(make, session):
    ws = make.workspace()
    actor = make.actor(make.user(ws, Role.REVIEWER))
    run = make.run(ws, kind="chat")
    answer = next(m.id for m in run.messages if m.role == "assistant")
    row = feedback.upsert_feedback(session, actor, "chat_message", answer, None, "negative",
                                   reason="incorrect", comment=" ".join(SENT[:2]), correction=" ".join(SENT[2:]))
    session.expire_all()
    stored = session.scalars(select(Feedback).where(Feedback.id == row.id)).one()
    assert stored.comment == "clone [redacted] h=Authorization%3A%20Bearer%20[redacted]"
    assert stored.correction == "[redacted] form=password%253D[redacted]%2526x%253D1"
    assert _leaks(session) == []
