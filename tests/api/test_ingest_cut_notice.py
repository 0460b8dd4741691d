"""An agent is told when a tool call's result or error was cut for storage (SPEC 4: cut
to 2,000 characters after redaction; SPEC 10: the stored length is kept). New-user walk:
the ingest answer said nothing, and the agent learnt it only from the trace API."""

from __future__ import annotations

import pytest


@pytest.fixture
def token(make, ws):
    return make.token(ws)


def _post(client, token, body):
    return client.post("/api/ingest/tool-events", json=body,
                       headers={"Authorization": f"Bearer {token}"})


def _started(client, token, call_id="c1"):
    client.put("/api/ingest/runs/r1", json={"query": "q", "status": "RUNNING"},
               headers={"Authorization": f"Bearer {token}"})
    _post(client, token, {"id": call_id, "run_id": "r1", "event": "started", "tool_name": "logs"})


def test_a_completed_event_whose_output_was_cut_says_so(client, token):
    _started(client, token)
    response = _post(client, token, {"id": "c1", "run_id": "r1", "event": "completed",
                                     "output": "y" * 5321})
    assert response.status_code == 200
    assert response.get_json()["results"] == [{
        "index": 0, "id": "c1", "event": "completed", "result": "updated",
        "cut": {"output": {"stored": 2000, "length": 5321}},
    }]


def test_a_failed_event_says_which_of_its_texts_was_cut(client, token):
    _started(client, token)
    # A JSON output is stored as JSON text: {"rows": "zzz…"} is 12 characters + 2,500.
    response = _post(client, token, [{"id": "c1", "run_id": "r1", "event": "failed",
                                      "output": {"rows": "z" * 2500}, "error": "timeout"}])
    assert response.get_json()["results"][0]["cut"] == {
        "output": {"stored": 2000, "length": 2512}}


def test_texts_within_the_limit_carry_no_cut(client, token):
    _started(client, token)
    response = _post(client, token, {"id": "c1", "run_id": "r1", "event": "completed",
                                     "output": "y" * 2000})
    assert "cut" not in response.get_json()["results"][0]


def test_an_unchanged_replay_does_not_repeat_the_cut(client, token):
    _started(client, token)
    event = {"id": "c1", "run_id": "r1", "event": "completed", "output": "y" * 3000}
    _post(client, token, event)
    replay = _post(client, token, event).get_json()["results"][0]
    assert replay["result"] == "unchanged" and "cut" not in replay
