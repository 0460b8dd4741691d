"""The ingestion endpoints answer only what the OpenAPI document says (SPEC 9): each way
an ingest request can fail is sent, and its status must be one the operation documents,
with a body that validates against the documented response. A status the app sends but
the document omits (e.g. the 400 of a ``step_id`` naming no step, the 409 of a single
rejected event) fails here, and every documented error status but 503 (storage down,
covered by the fault tests) is reached by some request."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from .test_openapi import load_spec, operations, resolve

INGEST_OPERATIONS = ("ingestRun", "finishRun", "setRunOutcome", "ingestToolEvents", "ingestOtelTraces")
TRACE = "5b8efff798038103d269b633813fc60c"


def _otlp(*spans: dict) -> dict:
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": list(spans)}]}]}


def _span(span_id: str, **extra: Any) -> dict:
    return {"traceId": TRACE, "spanId": span_id, "name": "root", "startTimeUnixNano": "1767225600000000000",
            "endTimeUnixNano": "1767225601000000000", **extra}


EVENT = {"id": "e1", "run_id": "r1", "event": "started", "tool_name": "logs"}

# (label, operation, method, path, body (JSON value, or bytes sent as they are), expected status)
CASES: list[tuple[str, str, str, str, Any, int]] = [
    ("new run", "ingestRun", "put", "/api/ingest/runs/r-new", {"query": "q"}, 201),
    ("same run again", "ingestRun", "put", "/api/ingest/runs/r1",
     {"query": "q", "steps": [{"id": "s1", "name": "logs"}]}, 200),
    ("unknown field", "ingestRun", "put", "/api/ingest/runs/r1", {"query": "q", "qurey": "x"}, 400),
    ("step_id naming no step", "ingestRun", "put", "/api/ingest/runs/r1",
     {"query": "q", "steps": [{"id": "s1", "name": "logs"}],
      "tool_calls": [{"id": "c1", "tool_name": "logs", "step_id": "s9"}]}, 400),
    ("invisible session id", "ingestRun", "put", "/api/ingest/runs/r1",
     {"query": "q", "session_id": "\u200b"}, 400),
    ("control character in a call id", "ingestRun", "put", "/api/ingest/runs/r1",
     {"query": "q", "tool_calls": [{"id": "c\x01", "tool_name": "logs"}]}, 400),
    ("NUL in a call id", "ingestRun", "put", "/api/ingest/runs/r1",
     {"query": "q", "tool_calls": [{"id": "c\x00", "tool_name": "logs"}]}, 400),
    ("a slash in run_id", "ingestRun", "put", "/api/ingest/runs/abc/finish", {"query": "q"}, 400),
    ("finished run back to RUNNING", "ingestRun", "put", "/api/ingest/runs/done",
     {"query": "q", "status": "RUNNING"}, 409),
    ("line break in run_id", "ingestRun", "put", "/api/ingest/runs/a%0Ab", {"query": "q"}, 404),
    ("no token", "ingestRun", "put", "/api/ingest/runs/r1", {"query": "q"}, 401),
    ("too large", "ingestRun", "put", "/api/ingest/runs/r1", b"x", 413),
    ("finish", "finishRun", "post", "/api/ingest/runs/r2/finish", {"status": "SUCCESS"}, 200),
    ("finish an unknown run", "finishRun", "post", "/api/ingest/runs/nope/finish", {"status": "SUCCESS"}, 403),
    ("finish with another status", "finishRun", "post", "/api/ingest/runs/done/finish", {"status": "FAILED"}, 409),
    ("finish with a bad status", "finishRun", "post", "/api/ingest/runs/r2/finish", {"status": "DONE"}, 400),
    ("finish, line break", "finishRun", "post", "/api/ingest/runs/a%0Ab/finish", {"status": "SUCCESS"}, 404),
    ("finish, no token", "finishRun", "post", "/api/ingest/runs/r2/finish", {"status": "SUCCESS"}, 401),
    ("finish, too large", "finishRun", "post", "/api/ingest/runs/r2/finish", b"x", 413),
    ("outcome", "setRunOutcome", "patch", "/api/ingest/runs/r1/outcome", {"external_outcome": "pass"}, 200),
    ("outcome of an unknown run", "setRunOutcome", "patch", "/api/ingest/runs/nope/outcome",
     {"external_outcome": "pass"}, 403),
    ("outcome, unknown field", "setRunOutcome", "patch", "/api/ingest/runs/r1/outcome", {"outcome": "pass"}, 400),
    ("outcome, line break", "setRunOutcome", "patch", "/api/ingest/runs/a%0Ab/outcome",
     {"external_outcome": "pass"}, 404),
    ("outcome, no token", "setRunOutcome", "patch", "/api/ingest/runs/r1/outcome", {"external_outcome": "p"}, 401),
    ("outcome, too large", "setRunOutcome", "patch", "/api/ingest/runs/r1/outcome", b"x", 413),
    ("one event", "ingestToolEvents", "post", "/api/ingest/tool-events", EVENT, 200),
    ("one event, unknown run", "ingestToolEvents", "post", "/api/ingest/tool-events",
     {**EVENT, "id": "e2", "run_id": "nope"}, 409),
    ("one event, step_id naming no step", "ingestToolEvents", "post", "/api/ingest/tool-events",
     {**EVENT, "id": "e3", "step_id": "s9"}, 409),
    ("one event, control character in its id", "ingestToolEvents", "post", "/api/ingest/tool-events",
     {**EVENT, "id": "e\x1b"}, 400),
    ("one event, NUL in its id", "ingestToolEvents", "post", "/api/ingest/tool-events",
     {**EVENT, "id": "e\x00"}, 400),
    ("batch with a NUL id, an unknown step and a good event", "ingestToolEvents", "post",
     "/api/ingest/tool-events", [{**EVENT, "id": "e\x00"}, {**EVENT, "id": "e4", "step_id": "s9"},
                                 {**EVENT, "id": "e5", "step_id": "s1"}], 200),
    ("empty batch", "ingestToolEvents", "post", "/api/ingest/tool-events", [], 400),
    ("batch over the limit", "ingestToolEvents", "post", "/api/ingest/tool-events",
     [{**EVENT, "id": f"b{i}"} for i in range(4)], 413),
    ("events, no token", "ingestToolEvents", "post", "/api/ingest/tool-events", EVENT, 401),
    ("spans", "ingestOtelTraces", "post", "/api/otel/v1/traces", _otlp(_span("1111111111111111")), 200),
    ("a span with a NUL", "ingestOtelTraces", "post", "/api/otel/v1/traces",
     _otlp(_span("2222222222222222", name="a\x00")), 200),
    ("spans, undecodable", "ingestOtelTraces", "post", "/api/otel/v1/traces", b"{", 400),
    ("spans, another content type", "ingestOtelTraces", "post", "/api/otel/v1/traces", b"text", 415),
    ("spans, no token", "ingestOtelTraces", "post", "/api/otel/v1/traces", _otlp(), 401),
    ("spans, too large", "ingestOtelTraces", "post", "/api/otel/v1/traces", b"x", 413),
]


def _send(client, token: str, method: str, path: str, body: Any, label: str):
    headers = {} if "no token" in label else {"Authorization": f"Bearer {token}"}
    content_type = "text/plain" if "content type" in label else "application/json"
    data = body if isinstance(body, bytes) else json.dumps(body)
    if "too large" in label:
        data = b'{"query": "' + b"x" * 4096 + b'"}'
    return getattr(client, method)(path, data=data, content_type=content_type, headers=headers)


def _validator(spec: dict[str, Any], response: dict[str, Any]) -> Draft202012Validator:
    schema = resolve(spec, response)["content"]["application/json"]["schema"]
    return Draft202012Validator({**schema, "components": spec["components"]})


@pytest.fixture
def ingest_setup(app, client, make, ws):
    token = make.token(ws)
    auth = {"Authorization": f"Bearer {token}"}
    for run_id in ("r1", "r2", "done"):
        assert client.put(f"/api/ingest/runs/{run_id}", headers=auth, json={
            "query": "q", "steps": [{"id": "s1", "name": "logs"}]}).status_code == 201
    assert client.post("/api/ingest/runs/done/finish", headers=auth, json={"status": "SUCCESS"}).status_code == 200
    return token


def check_cases(app, client, token: str, spec: dict[str, Any], cases=CASES) -> list[str]:
    """Send each case; the problems found (unexpected status, a status the operation does
    not document, a body that does not match it, a documented error status no case reached)."""
    ops = {op["operationId"]: op for _, _, op in operations(spec)}
    app.config["MAX_CONTENT_LENGTH"] = 2048
    app.config["INGEST_BATCH_MAX_EVENTS"] = 3
    seen: dict[str, set[int]] = {}
    problems = []
    for label, op_id, method, path, body, expected in cases:
        response = _send(client, token, method, path, body, label)
        status = response.status_code
        seen.setdefault(op_id, set()).add(status)
        documented = ops[op_id]["responses"]
        if status != expected:
            problems.append(f"{op_id} {label}: {status}, expected {expected}: {response.get_data(as_text=True)[:200]}")
        if str(status) not in documented:
            problems.append(f"{op_id} {label}: answers {status}, which the document omits")
            continue
        errors = [e.message for e in _validator(spec, documented[str(status)]).iter_errors(response.get_json())]
        if errors:
            problems.append(f"{op_id} {label}: {status} body does not match the document: {errors[:2]}")
    for op_id, statuses in seen.items():
        missing = {int(code) for code in ops[op_id]["responses"]} - statuses - {503}
        if missing:
            problems.append(f"{op_id}: documented {sorted(missing)} but no request here reached it")
    return problems


def test_every_ingest_answer_is_documented(app, client, ingest_setup):
    problems = check_cases(app, client, ingest_setup, load_spec())
    assert {case[1] for case in CASES} == set(INGEST_OPERATIONS)
    assert not problems, "\n".join(problems)


def test_an_undocumented_status_fails_the_check(app, client, ingest_setup):
    """The check above can fail: with the single event's 409 taken out of the document,
    the rejected single events are reported as answers the document omits."""
    spec = load_spec()
    (op,) = [op for _, _, op in operations(spec) if op["operationId"] == "ingestToolEvents"]
    del op["responses"]["409"]
    problems = check_cases(app, client, ingest_setup, spec,
                           [case for case in CASES if case[1] == "ingestToolEvents"])
    assert problems == [
        "ingestToolEvents one event, unknown run: answers 409, which the document omits",
        "ingestToolEvents one event, step_id naming no step: answers 409, which the document omits"]


def _schema_at(schema: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """The sub-schema of a published JSON Schema at a document path (``*``: list items),
    following ``$ref`` to its ``$defs`` but keeping the referring node (its description)."""
    node = schema
    for key in path:
        if "$ref" in node and "properties" not in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
        node = node["items"] if key == "*" else node["properties"][key]
    return node


def test_every_identifier_field_documents_the_identifier_rule():
    """Each field the identifier rule applies to (``documents._ID_PATHS``: no control
    character, something visible; 400 naming the field) says so in the published JSON
    Schema, and so in the OpenAPI document that embeds it: a field added to the rule
    without its documentation fails here."""
    from reviewapp.services.documents import _ID_PATHS

    from .test_openapi import SCHEMAS

    undocumented = []
    for name, paths in _ID_PATHS.items():
        schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
        for path in paths:
            description = _schema_at(schema, path).get("description", "")
            if "control character" not in description or "visible character" not in description:
                undocumented.append(f"{name}: {'.'.join(path)}")
    assert not undocumented, undocumented
