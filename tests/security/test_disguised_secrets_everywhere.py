"""A token disguised by a Markdown escape, an HTML character reference, a JSON escape,
an invisible character or full-width letters never reaches a page, the trace API or an
export in a form a reader can read (SPEC 4; module doc of ``domain.encoded_text``).
The run page renders the answer as Markdown, which decodes ``ghp\\_`` and ``ghp&#95;``
to ``ghp_``: the new user's finding showed the token in clear there. Each disguise is
sent through the JSON API (answer, citation excerpt, tool result), OTLP
(``gen_ai.output.messages``) and a reviewer's comment; the run page HTML, the trace API
and the feedback export are then searched for the token's body, as sent and as a
reader decodes it."""

from __future__ import annotations

import html
import re
import unicodedata

import pytest
from sqlalchemy import select

from reviewapp.actors import Actor
from reviewapp.models import Run
from reviewapp.services import admin

from ..otel.test_otel_api import export, post_json, span

BODY = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # the new user's test token's body (invented)
DISGUISED = {  # the walk-through's payloads, and one of each further disguise
    "markdown escape": f"ghp\\_{BODY}",
    "named reference": f"ghp&lowbar;{BODY}",
    "hex reference": f"ghp&#x5f;{BODY}",
    "decimal reference": f"ghp&#95;{BODY}",
    "json escape": f"ghp\\u005f{BODY}",
    "soft hyphen": f"ghp_{BODY[:6]}\u00ad{BODY[6:]}",
    "right-to-left override": f"gh\u202ep_{BODY}",
    "tag character": f"ghp_{BODY[:6]}\U000e0041{BODY[6:]}",
    "variation selector": f"ghp_{BODY[:6]}\ufe0f{BODY[6:]}",
    "full-width prefix": f"ｇｈｐ_{BODY}",
}
_INVISIBLE = {ord(c): None for c in "\u00ad\u202e\U000e0041\ufe0f"}


def _readable(text: str) -> bool:
    """True when the token's body can be read in ``text``: as it is, or decoded as a
    browser and a reader would (references, escapes, invisible characters, NFKC)."""
    decoded = html.unescape(html.unescape(text))
    decoded = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", decoded).replace("\\u005f", "_")
    decoded = unicodedata.normalize("NFKC", decoded.translate(_INVISIBLE))
    return BODY in text or BODY in decoded


def test_the_check_can_fail():
    assert all(_readable(text) for text in DISGUISED.values())
    assert not _readable("ghp_[redacted] [redacted]")


def _headers(make, session) -> tuple[object, dict]:
    ws = make.workspace("disguise")
    token = admin.create_token(session, Actor.system_actor(), ws.id, "agent").secret
    return ws, {"Authorization": f"Bearer {token}"}


def _document(text: str) -> dict:
    return {"session_id": "s1", "kind": "chat", "status": "SUCCESS", "query": "q",
            "answer": f"answer: {text}\n\nsecond line {text}",
            "messages": [{"id": "u1", "role": "user", "content": "q"},
                         {"id": "a1", "role": "assistant", "content": f"see {text}", "metadata": {
                             "citations": [{"id": "c1", "title": "t", "source": "s", "excerpt": text}]}}],
            "tool_calls": [{"id": "call-1", "tool_name": "shell", "arguments": {"cmd": text},
                            "output": f"stdout: {text}"}]}


@pytest.mark.parametrize("kind", DISGUISED)
def test_api_ingest_run_page_and_trace(kind, client, make, session, login):
    ws, headers = _headers(make, session)
    response = client.put("/api/ingest/runs/walk-sec", json=_document(DISGUISED[kind]), headers=headers)
    assert response.status_code == 201, response.get_json()
    login(make.user(ws, role="reviewer", username="rev"))
    page = client.get("/runs/by-id/walk-sec", follow_redirects=True)
    assert page.status_code == 200 and "[redacted]" in page.get_data(as_text=True)
    assert not _readable(page.get_data(as_text=True)), kind
    trace = client.get("/api/runs/walk-sec/trace")
    assert trace.status_code == 200 and "[redacted]" in trace.get_data(as_text=True)
    assert not _readable(trace.get_data(as_text=True)), kind


@pytest.mark.parametrize("kind", ["decimal reference", "markdown escape", "soft hyphen", "full-width prefix"])
def test_otlp_output_messages(kind, client, make, session, login):
    ws, headers = _headers(make, session)
    output = [{"role": "assistant", "parts": [{"type": "text", "content": f"done: {DISGUISED[kind]}"}]}]
    body = export(span("1111111111111111", "invoke_agent bot", start=0, end=100, attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot",
        "gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}],
        "gen_ai.output.messages": output}))
    response = post_json(client, headers["Authorization"].split()[1], body)
    assert response.status_code == 200, response.get_data(as_text=True)
    login(make.user(ws, role="reviewer", username="rev"))
    run = session.scalars(select(Run)).one()
    page = client.get(f"/runs/{run.id}")
    assert page.status_code == 200 and "[redacted]" in page.get_data(as_text=True)
    assert not _readable(page.get_data(as_text=True)), kind
    trace = client.get(f"/api/runs/{run.run_id}/trace")
    assert trace.status_code == 200 and not _readable(trace.get_data(as_text=True)), kind


@pytest.mark.parametrize("kind", DISGUISED)
def test_reviewer_comment_and_feedback_export(kind, client, make, login):
    ws = make.workspace("disguise")
    run = make.run(ws, kind="chat")
    answer = next(m.id for m in run.messages if m.role == "assistant")
    login(make.user(ws, role="admin", username="lead"))  # rates, and may export
    response = client.put("/api/feedback/targets", json={
        "targetType": "chat_message", "targetId": answer, "rating": "negative", "reason": "incorrect",
        "comment": DISGUISED[kind], "correction": f"use {DISGUISED[kind]}"})
    assert response.status_code == 200, response.get_json()
    for name in ("feedback.csv", "feedback.jsonl"):
        exported = client.get(f"/exports/{name}")
        assert exported.status_code == 200 and "[redacted]" in exported.get_data(as_text=True), name
        assert not _readable(exported.get_data(as_text=True)), (kind, name)
