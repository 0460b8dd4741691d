"""No secret of the corpus survives anywhere (SPEC 4): every shape of
``tests/secret_corpus.py`` is sent through the JSON API in every position a run carries
(argument value, nested value, container under a secret-named key, result text,
JSON-escaped result text, error, ids and tool names, query, answer, every message role,
citation fields, steps, report, alert, outcome detail, verifier rationale, orchestration
trace, evidence refs) and through tool-call events and a file import; then the database,
the run pages, the tool-call fragments, the trace API and every export (cases, feedback,
eval set; CSV and JSONL) are searched for any fragment of any secret."""

from __future__ import annotations

import html
import json
import logging
from urllib.parse import quote

import pytest
import sqlalchemy as sa
from sqlalchemy import select

from reviewapp.actors import Actor
from reviewapp.domain.ids import id_problem
from reviewapp.extensions import db
from reviewapp.models import Message, Run, ToolCall
from reviewapp.search_index import CALL_TABLE, SEARCH_TABLE
from reviewapp.services import admin

from ..secret_corpus import SECRETS

FRAGMENTS = sorted({f for _, _, fragments in SECRETS for f in fragments})


def _document(index: int, text: str) -> dict:
    # Ids and tool names take the text only when it is an identifier at all: one holding a
    # control character is refused at the door (domain.ids, tested in api/test_ingest).
    short = len(text) <= 140 and id_problem(text) is None
    call_id = f"id-{index}-{text}" if short else f"call-{index}-1"
    evidence = [{"ref": text, "excerpt": text}]
    return {
        "session_id": f"s-{index}", "kind": "chat", "status": "SUCCESS", "query": text,
        "answer": text, "alert": {"payload": text}, "external_outcome_detail": {"log": text},
        "orchestration_trace": [{"node": "planner", "note": text}],
        "verifier_evaluation": {"verdict": "PASS", "rationale": text},
        "messages": [
            {"id": f"u-{index}", "role": "user", "content": text},
            {"id": f"sys-{index}", "role": "system", "content": text},
            {"id": f"a-{index}", "role": "assistant", "content": text, "metadata": {
                "citations": [{"id": text if short else "c1", "title": text, "source": text,
                               "excerpt": text, "evidence_ref": text}],
                "tool_call_ids": [call_id], "extra": {"model": text}}},
            {"id": f"t-{index}", "role": "tool", "content": text},
        ],
        "steps": [{"id": f"st-{index}", "name": "step", "status": "done", "summary": text}],
        "report": {"content": text},
        "tool_calls": [
            {"id": call_id, "tool_name": text[:190] if short else "shell",
             "arguments": {"cmd": text, "nested": [{"v": text}], "credentials": {"value": text},
                           "dbPassword": 84736251},
             "output": text, "retrieval": {"match_level": "L0", "hit_count": 1, "evidence_refs": evidence}},
            {"id": f"call-{index}-2", "tool_name": "read_file", "output": json.dumps({"stdout": text})},
            {"id": f"call-{index}-3", "tool_name": "http", "status": "failed", "error": text},
        ],
    }


def _events(texts: list[str]) -> list[dict]:
    events = []
    for index, text in enumerate(texts):
        events += [
            {"id": f"ev-{index}", "run_id": "events-run", "event": "started", "tool_name": "sh",
             "arguments": {"cmd": text}},
            {"id": f"ev-{index}", "run_id": "events-run", "event": "completed", "output": text},
            {"id": f"ev-{index}-f", "run_id": "events-run", "event": "failed", "error": text},
        ]
    return events


def _leaks(text: str) -> list[str]:
    plain = html.unescape(text)
    return [f for f in FRAGMENTS if f in plain]


def _database_text(session) -> str:
    parts = []
    for table in db.metadata.sorted_tables:
        for row in session.execute(select(table)):
            parts.append(repr(tuple(row)))
            parts.append(json.dumps([str(v) for v in row], ensure_ascii=False))
    return "\n".join(parts)


def _search_index_leaks(session) -> list[str]:
    """The text search index (outside the ORM's metadata) holds run text case-folded:
    the runs' rows and their tool calls' rows."""
    rows = session.execute(sa.text(f"SELECT * FROM {SEARCH_TABLE}")).all()
    calls = session.execute(sa.text(f"SELECT * FROM {CALL_TABLE}")).all()
    assert rows and calls
    rows += calls
    folded = "\n".join(repr(tuple(row)) for row in rows)
    return [f for f in FRAGMENTS if f.casefold() in folded]


@pytest.fixture
def ingested(app, session, make, client, login, caplog, tmp_path, runner):
    ws = make.workspace("sec")
    lead = make.user(ws, role="admin", username="sec-admin")
    token = admin.create_token(session, Actor.system_actor(), ws.id, "agent").secret
    headers = {"Authorization": f"Bearer {token}"}
    caplog.set_level(logging.DEBUG)
    texts = [text for _, text, _ in SECRETS]
    for index, text in enumerate(texts):
        response = client.put(f"/api/ingest/runs/sec-{index}", json=_document(index, text), headers=headers)
        assert response.status_code == 201, (index, response.get_json())
    client.put("/api/ingest/runs/events-run", json={"status": "RUNNING"}, headers=headers)
    response = client.post("/api/ingest/tool-events", json=_events(texts), headers=headers)
    assert response.status_code == 200 and response.get_json()["counts"]["rejected"] == 0
    response = client.post("/api/ingest/runs/events-run/finish",
                           json={"status": "SUCCESS", "answer": "\n".join(texts)}, headers=headers)
    assert response.status_code == 200
    # The file import path: openai-messages with tool calls and tool results.
    lines = []
    for index, text in enumerate(texts):
        lines.append(json.dumps({"id": f"imp-{index}", "messages": [
            {"role": "user", "content": text},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "run", "arguments": json.dumps({"cmd": text})}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": text},
            {"role": "assistant", "content": text}]}))
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines))
    result = runner.invoke(args=["runs", "import", str(path), "--workspace", ws.slug])
    assert result.exit_code == 0, result.output
    login(lead)
    for index in range(len(texts)):
        response = client.post("/api/feedback", json={"sessionId": f"s-{index}", "runId": f"sec-{index}",
                                                     "feedback": "useful"})
        assert response.status_code == 200 and response.get_json()["caseId"], response.get_json()
    messages = session.scalars(select(Message).join(Run).where(
        Run.run_id.like("sec-%"), Message.role == "assistant")).all()
    for message in messages[:40]:
        for citation in message.citations:
            response = client.put("/api/feedback/targets", json={
                "targetType": "citation", "targetId": message.id, "subjectId": citation["id"],
                "rating": "negative", "comment": "see citation", "correction": "use the runbook"})
            assert response.status_code == 200, response.get_json()
    return ws


def test_no_corpus_secret_survives_anywhere(ingested, session, client, caplog):
    """One ingestion of the whole corpus (it takes a while), every place searched."""
    assert _leaks(_database_text(session)) == [], "database"
    assert _search_index_leaks(session) == [], "search index"

    records = caplog.get_records("setup")  # SPEC 4: the runtime log, captured at DEBUG
    assert any(r.name == "reviewapp.tool_calls" for r in records)
    assert _leaks("\n".join(r.getMessage() for r in records)) == [], "log"

    runs = session.scalars(select(Run)).all()
    assert len(runs) == 2 * len(SECRETS) + 1
    for run in runs:
        page = client.get(f"/runs/{run.id}")
        assert page.status_code == 200 and "[redacted]" in page.get_data(as_text=True)
        assert _leaks(page.get_data(as_text=True)) == [], ("run page", run.run_id)
        trace = client.get(f"/api/runs/{run.run_id}/trace")
        assert trace.status_code == 200
        assert _leaks(trace.get_data(as_text=True)) == [], ("trace", run.run_id)
    for call in session.scalars(select(ToolCall)):
        fragment = client.get(f"/runs/{call.run_pk}/tool-calls/{quote(call.id, safe='')}",
                              headers={"HX-Request": "true"})
        assert fragment.status_code == 200, call.id
        assert _leaks(fragment.get_data(as_text=True)) == [], ("tool call", call.id)

    for export in ("cases.csv", "cases.jsonl", "feedback.csv", "feedback.jsonl", "evalset.jsonl"):
        response = client.get(f"/exports/{export}")
        assert response.status_code == 200
        body = response.get_data(as_text=True)
        assert int(response.headers["X-Export-Rows"]) > 0 and "[redacted]" in body, export
        assert _leaks(body) == [], export
