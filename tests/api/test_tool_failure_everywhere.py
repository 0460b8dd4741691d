"""A failed tool call is recognised by the one rule (``domain/tool_failure.py``) on every
ingest path (user walk: a ``completed`` event whose output began ``Error: access denied``
showed "✓ completed" and was not counted as failed through the JSON API, where an import
counts it by ``error_prefix``)."""

from __future__ import annotations

from sqlalchemy import select

from reviewapp.models import Run, ToolCall

DENIED = "Error: access denied to bucket billing-prod"


def _headers(secret):
    return {"Authorization": f"Bearer {secret}"}


def _rows(session):
    session.rollback()
    return {c.id: (c.status, c.error_message, c.result_summary)
            for c in session.scalars(select(ToolCall))}


def test_a_completed_event_whose_output_fails_a_rule_is_stored_failed(client, session, make, ws):
    secret = make.token(ws)
    assert client.put("/api/ingest/runs/r1", json={"query": "q", "status": "RUNNING"},
                      headers=_headers(secret)).status_code == 201
    events = [
        {"id": "c1", "run_id": "r1", "event": "started", "tool_name": "s3_get"},
        {"id": "c1", "run_id": "r1", "event": "completed", "output": DENIED},
        {"id": "c2", "run_id": "r1", "event": "completed", "tool_name": "kb",
         "output": {"error": "index missing", "data": None}},
        {"id": "c3", "run_id": "r1", "event": "completed", "tool_name": "kb", "output": "Fine: 3 hits"},
    ]
    answer = client.post("/api/ingest/tool-events", json=events, headers=_headers(secret))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert _rows(session) == {
        "c1": ("failed", DENIED, None),
        "c2": ("failed", '{"data": null, "error": "index missing"}', None),
        "c3": ("completed", None, "Fine: 3 hits"),
    }
    # A replay of the same event is the same end: unchanged, not rejected.
    again = client.post("/api/ingest/tool-events", json=events[1], headers=_headers(secret))
    assert again.get_json()["results"][0]["result"] == "unchanged"
    done = client.post("/api/ingest/runs/r1/finish", json={"status": "SUCCESS"}, headers=_headers(secret))
    assert done.status_code == 200, done.get_data(as_text=True)
    session.rollback()
    assert session.scalar(select(Run.failed_tool_call_count)) == 2


def test_a_run_documents_completed_call_whose_output_fails_a_rule_is_stored_failed(client, session,
                                                                                      make, ws, login):
    secret = make.token(ws)
    body = {"query": "q", "status": "SUCCESS", "answer": "done", "tool_calls": [
        {"id": "d1", "tool_name": "s3_get", "status": "completed", "output": DENIED},
        {"id": "d2", "tool_name": "sh", "output": "Traceback (most recent call last):\n  boom"},
        {"id": "d3", "tool_name": "kb", "status": "completed", "output": "ok"},
    ]}
    answer = client.put("/api/ingest/runs/r2", json=body, headers=_headers(secret))
    assert answer.status_code == 201, answer.get_data(as_text=True)
    assert (answer.get_json()["tool_calls"], answer.get_json()["failed_tool_calls"]) == (3, 2)
    assert _rows(session) == {
        "d1": ("failed", DENIED, None),
        "d2": ("failed", "Traceback (most recent call last):\n  boom", None),
        "d3": ("completed", None, "ok"),
    }
    login(make.user(ws))
    run_pk = session.scalar(select(Run.id).where(Run.run_id == "r2"))
    page = client.get(f"/runs/{run_pk}").get_data(as_text=True)
    assert "access denied to bucket billing-prod" in page


def test_an_otlp_tool_span_whose_result_fails_a_rule_is_stored_failed(client, session, make, ws):
    from ..otel.test_otel_api import export, post_json, span

    secret = make.token(ws, "otel")
    spans = [
        span("1111111111111111", "invoke_agent bot", start=0, end=100, attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot"}),
        span("2222222222222222", "execute_tool s3_get", parent="1111111111111111", start=10, end=30,
             attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "o1",
                         "gen_ai.tool.name": "s3_get", "gen_ai.tool.call.result": DENIED}),
        span("3333333333333333", "execute_tool kb", parent="1111111111111111", start=40, end=60,
             attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "o2",
                         "gen_ai.tool.name": "kb", "gen_ai.tool.call.result": "3 hits"}),
    ]
    assert post_json(client, secret, export(*spans)).status_code == 200
    rows = {call.rpartition("/")[2]: row for call, row in _rows(session).items()}  # <run_id>/<call id>
    assert (rows["o1"], rows["o2"]) == (("failed", DENIED, None), ("completed", None, "3 hits"))
