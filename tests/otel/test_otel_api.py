"""``POST /v1/traces`` and ``/api/otel/v1/traces`` over HTTP (SPEC 9): content types,
encodings, answers, errors, partial success, and the lifecycle rules of SPEC 4 for spans
that arrive in pieces, out of order and repeated."""

from __future__ import annotations

import gzip
import json
import time
import zlib

import pytest
from google.protobuf import json_format
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from sqlalchemy import func, select

from reviewapp.actors import Actor
from reviewapp.models import OtelSpan, Run, ToolCall
from reviewapp.services import admin

TRACE = "5b8efff798038103d269b633813fc60c"
NOW = time.time_ns() - 60 * 1_000_000_000
PATHS = ("/v1/traces", "/api/otel/v1/traces")


@pytest.fixture
def token(make, ws):
    return make.token(ws, "otel")


def span(span_id: str, name: str, *, parent: str | None = None, start: int = 0, end: int = 1,
         attributes: dict | None = None, status: object = None, trace: str = TRACE,
         events: list | None = None) -> dict:
    """One OTLP JSON span; ``start`` / ``end`` in ms after NOW (end 0: not ended)."""
    out = {"traceId": trace, "spanId": span_id, "name": name,
           "startTimeUnixNano": str(NOW + start * 1_000_000),
           "endTimeUnixNano": str(NOW + end * 1_000_000) if end else "0",
           "attributes": [{"key": k, "value": _any(v)} for k, v in (attributes or {}).items()]}
    if parent:
        out["parentSpanId"] = parent
    if status is not None:
        out["status"] = {"code": status, "message": "boom"}
    if events:
        out["events"] = events
    return out


def _any(value):
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": value if isinstance(value, str) else json.dumps(value)}


def export(*spans: dict, service: str = "agent-svc") -> dict:
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
        "scopeSpans": [{"scope": {"name": "test"}, "spans": list(spans)}]}]}


def post_json(client, token, body, path="/v1/traces", **headers):
    return client.post(path, data=json.dumps(body), headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json", **headers})


def to_protobuf(body: dict) -> bytes:
    from .otlp import _hex_ids  # noqa: F401 - the JSON ids are hex; protobuf wants bytes
    message = ExportTraceServiceRequest()
    converted = json.loads(json.dumps(body))
    for rs in converted["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in s:
                        import base64
                        s[key] = base64.b64encode(bytes.fromhex(s[key])).decode()
                if "status" in s and isinstance(s["status"]["code"], str):
                    s["status"]["code"] = "STATUS_CODE_" + s["status"]["code"]
    json_format.ParseDict(converted, message)
    return message.SerializeToString()


def agent_spans() -> list[dict]:
    return [
        span("1111111111111111", "invoke_agent bot", start=0, end=100, attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot",
            "gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": "q?"}]}],
            "gen_ai.output.messages": [{"role": "assistant", "parts": [{"type": "text", "content": "a."}]}]}),
        span("2222222222222222", "execute_tool logs", parent="1111111111111111", start=10, end=30,
             attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "c1",
                         "gen_ai.tool.call.arguments": {"q": "x"}}),
        span("3333333333333333", "chat m", parent="1111111111111111", start=40, end=60,
             attributes={"gen_ai.operation.name": "chat"}),
    ]


@pytest.mark.parametrize("path", PATHS)
def test_json_export_answers_empty_response_in_json(client, token, session, path):
    response = post_json(client, token, export(*agent_spans()), path)
    assert (response.status_code, response.mimetype, response.get_json()) == (200, "application/json", {})
    run = session.scalars(select(Run).where(Run.run_id == TRACE)).one()
    assert (run.status, run.query, run.answer) == ("SUCCESS", "q?", "a.")


def test_protobuf_export_answers_protobuf(client, token, session):
    response = client.post("/v1/traces", data=to_protobuf(export(*agent_spans())), headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/x-protobuf"})
    assert (response.status_code, response.mimetype) == (200, "application/x-protobuf")
    answer = ExportTraceServiceResponse.FromString(response.data)
    assert not answer.HasField("partial_success")
    assert session.scalar(select(func.count()).select_from(ToolCall)) == 1


@pytest.mark.parametrize("encoding,compress", [("gzip", gzip.compress), ("deflate", zlib.compress)])
def test_compressed_bodies_are_read(client, token, session, encoding, compress):
    body = compress(json.dumps(export(*agent_spans())).encode())
    response = client.post("/v1/traces", data=body, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json",
        "Content-Encoding": encoding})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert session.scalar(select(Run.status).where(Run.run_id == TRACE)) == "SUCCESS"


def test_base64_ids_numbers_and_status_names_are_accepted(client, token, session):
    """OTLP JSON from exporters that write base64 ids, int64 as numbers, codes as names."""
    import base64
    root = span("1111111111111111", "root", end=5, status="ERROR")
    root["traceId"] = base64.b64encode(bytes.fromhex(TRACE)).decode()
    root["spanId"] = base64.b64encode(bytes.fromhex("1111111111111111")).decode()
    root["startTimeUnixNano"] = int(root["startTimeUnixNano"])
    assert post_json(client, token, export(root)).status_code == 200
    assert session.scalar(select(Run.status).where(Run.run_id == TRACE)) == "FAILED"


def test_status_code_as_number(client, token, session):
    assert post_json(client, token, export(span("1111111111111111", "root", status=2))).status_code == 200
    assert session.scalar(select(Run.status).where(Run.run_id == TRACE)) == "FAILED"


def test_unsupported_content_type_is_415(client, token):
    response = client.post("/v1/traces", data=b"x", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "text/plain"})
    assert response.status_code == 415
    assert response.get_json()["error"]["code"] == "UNSUPPORTED_MEDIA_TYPE"


def test_unsupported_encoding_is_415(client, token):
    response = post_json(client, token, export(), **{"Content-Encoding": "br"})
    assert response.status_code == 415


@pytest.mark.parametrize("body,field", [
    (b"{", "body"), (b"[]", "body"), (b"\xff\xfe", "body"),
    (b'{"resourceSpans": 3}', "resourceSpans: expected an array"),
    (b'{"resourceSpans": ["AAA"]}', "resourceSpans[0]: expected an object"),
    (b'{"resourceSpans": [{"scopeSpans": [{"spans": [1]}]}]}',
     "resourceSpans[0].scopeSpans[0].spans[0]: expected an object"),
])
def test_undecodable_json_is_400_naming_the_field(client, token, body, field):
    response = client.post("/v1/traces", data=body, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.get_json()["error"]["message"].startswith(field)


def test_undecodable_protobuf_is_400_with_a_protobuf_status(client, token):
    response = client.post("/v1/traces", data=b"\x0a\xff\xff\xff", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/x-protobuf"})
    assert (response.status_code, response.mimetype) == (400, "application/x-protobuf")
    status = Status.FromString(response.data)
    assert status.code == 3 and "ExportTraceServiceRequest" in status.message


def test_corrupt_gzip_is_400(client, token):
    response = post_json(client, token, None, **{"Content-Encoding": "gzip"})
    response = client.post("/v1/traces", data=b"not gzip", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json",
        "Content-Encoding": "gzip"})
    assert response.status_code == 400


def test_body_too_large_once_decompressed_is_413(app, client, token):
    app.config["MAX_CONTENT_LENGTH"] = 50_000
    bomb = gzip.compress(b" " * 60_000 + json.dumps(export()).encode())
    assert len(bomb) < 50_000
    response = client.post("/v1/traces", data=bomb, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json",
        "Content-Encoding": "gzip"})
    assert response.status_code == 413


def test_body_too_large_is_413_also_for_protobuf(app, client, token):
    app.config["MAX_CONTENT_LENGTH"] = 1000
    response = client.post("/v1/traces", data=b"\x00" * 2000, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/x-protobuf"})
    assert (response.status_code, response.mimetype) == (413, "application/x-protobuf")
    assert Status.FromString(response.data).code == 8


@pytest.mark.parametrize("path", PATHS)
def test_without_token_is_401(client, path):
    response = client.post(path, json=export())
    assert response.status_code == 401
    assert response.get_json()["error"]["code"] == "AUTH_UNAUTHENTICATED"


def test_unusable_spans_are_rejected_and_counted_the_rest_stored(client, token, session):
    bad_time = span("4444444444444444", "old", parent="1111111111111111")
    bad_time["startTimeUnixNano"] = "5"
    backwards = span("5555555555555555", "backwards", parent="1111111111111111", start=10, end=5)
    zero_trace = span("6666666666666666", "zero", trace="0" * 32)
    response = post_json(client, token, export(*agent_spans(), bad_time, backwards, zero_trace))
    assert response.status_code == 200
    partial = response.get_json()["partialSuccess"]
    assert partial["rejectedSpans"] == "3"
    for needle in ("startTimeUnixNano", "endTimeUnixNano: before", "traceId"):
        assert needle in partial["errorMessage"]
    assert session.scalar(select(func.count()).select_from(OtelSpan)) == 3


def test_a_nul_character_in_protobuf_rejects_that_span_only(client, token, session):
    nul = span("7777777777777777", "nul", parent="1111111111111111", attributes={"x": "a\x00b"})
    response = client.post("/v1/traces", data=to_protobuf(export(*agent_spans(), nul)), headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/x-protobuf"})
    answer = ExportTraceServiceResponse.FromString(response.data)
    assert answer.partial_success.rejected_spans == 1
    assert "attributes.x: contains a NUL character" in answer.partial_success.error_message
    assert session.scalar(select(func.count()).select_from(OtelSpan)) == 3


@pytest.mark.parametrize("value,needle", [
    ({"stringValue": "a\x00b"}, "attributes[0].value.stringValue: contains a NUL character, which cannot be stored"),
    ({"stringValue": "t\ud800"}, "attributes[0].value.stringValue: contains a lone surrogate; text must be valid Unicode"),
    ({"doubleValue": 1.5}, "attributes[0].value.doubleValue: number out of range (not finite)"),
])
def test_a_bad_text_in_one_json_span_rejects_that_span_only(client, token, session, value, needle):
    """As in protobuf and as in a batch of tool events (README: a bad event is rejected, the
    rest apply): a NUL character, a lone surrogate or an infinite number in one span of an
    OTLP JSON export rejects that span, counted in partial_success with the field's path;
    the other spans are stored. It used to refuse the whole export with 400."""
    bad = span("7777777777777777", "bad", parent="1111111111111111")
    bad["attributes"] = [{"key": "x", "value": value}]
    raw = json.dumps(export(*agent_spans(), bad)).replace("1.5", "1e400")
    response = client.post("/v1/traces", data=raw, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    assert response.status_code == 200, response.get_data(as_text=True)
    partial = response.get_json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1"
    assert partial["errorMessage"] == "resourceSpans[0].scopeSpans[0].spans[3]." + needle
    assert session.scalar(select(func.count()).select_from(OtelSpan)) == 3


def test_a_bad_text_in_a_json_resource_rejects_its_spans_only(client, token, session):
    """A resource's attributes belong to each of its spans (as in protobuf, where the
    resource's NUL rejects each span): its spans are rejected, another resource's stored."""
    body = export(*agent_spans())
    other = export(span("7777777777777777", "other", trace="7" * 32), span("8888888888888888", "b",
                                                                          trace="7" * 32))
    other["resourceSpans"][0]["resource"]["attributes"][0]["value"]["stringValue"] = "svc\x00"
    body["resourceSpans"] += other["resourceSpans"]
    response = post_json(client, token, body)
    assert response.status_code == 200
    partial = response.get_json()["partialSuccess"]
    assert partial["rejectedSpans"] == "2"
    assert partial["errorMessage"].startswith("resourceSpans[1].resource.attributes[0].value.stringValue: "
                                              "contains a NUL character")
    assert session.scalar(select(func.count()).select_from(OtelSpan)) == 3


def test_replayed_export_changes_nothing(client, token, session):
    body = export(*agent_spans())
    assert post_json(client, token, body).status_code == 200
    run = session.scalars(select(Run).where(Run.run_id == TRACE)).one()
    before = (run.updated_at, session.scalar(select(func.count()).select_from(ToolCall)),
              [(c.id, c.status, c.updated_at) for c in session.scalars(select(ToolCall))])
    assert post_json(client, token, body).get_json() == {}
    session.expire_all()
    run = session.scalars(select(Run).where(Run.run_id == TRACE)).one()
    after = (run.updated_at, session.scalar(select(func.count()).select_from(ToolCall)),
             [(c.id, c.status, c.updated_at) for c in session.scalars(select(ToolCall))])
    assert after == before
    assert session.scalar(select(func.count()).select_from(OtelSpan)) == 3


def test_children_first_then_root_replaces_the_stand_ins(client, token, session):
    """Spans in pieces and out of order: the run starts RUNNING with stand-ins (no query,
    the earliest start), and the late root span fills in status, times, query, answer."""
    root, tool, chat = agent_spans()
    assert post_json(client, token, export(chat)).status_code == 200
    run = session.scalars(select(Run).where(Run.run_id == TRACE)).one()
    assert (run.status, run.query, run.finished_at) == ("RUNNING", "", None)
    assert run.started_at.timestamp() == pytest.approx((NOW + 40_000_000) / 1e9, abs=1e-3)
    assert post_json(client, token, export(tool)).status_code == 200
    assert post_json(client, token, export(root, tool)).status_code == 200
    session.expire_all()
    run = session.scalars(select(Run).where(Run.run_id == TRACE)).one()
    assert (run.status, run.query, run.answer) == ("SUCCESS", "q?", "a.")
    assert run.started_at.timestamp() == pytest.approx(NOW / 1e9, abs=1e-3)
    assert [s.name for s in run.steps] == ["chat m"]
    calls = list(session.scalars(select(ToolCall)))
    assert [(c.id, c.status, c.duration_ms, c.compensated) for c in calls] == [
        (f"{TRACE}/c1", "completed", 20, False)]


def test_an_unended_tool_span_stays_started_until_its_end_arrives(client, token, session):
    open_tool = span("2222222222222222", "execute_tool logs", parent="1111111111111111",
                     start=10, end=0, attributes={"gen_ai.operation.name": "execute_tool"})
    assert post_json(client, token, export(open_tool)).status_code == 200
    call = session.scalars(select(ToolCall)).one()
    assert (call.status, call.completed_at) == ("started", None)
    ended = span("2222222222222222", "execute_tool logs", parent="1111111111111111",
                 start=10, end=25, attributes={"gen_ai.operation.name": "execute_tool"})
    ended["spanId"] = "2222222222222223"  # the finished copy of a pending span is a new span
    ended["attributes"].append({"key": "gen_ai.tool.call.id", "value": {"stringValue": "2222222222222222"}})
    assert post_json(client, token, export(ended)).status_code == 200
    session.expire_all()
    call = session.scalars(select(ToolCall)).one()
    assert (call.status, call.duration_ms) == ("completed", 15)


def test_a_token_writes_only_into_its_own_workspace(client, token, session, make, ws):
    other = make.workspace()
    other_token = admin.create_token(session, Actor.system_actor(), other.id, "o").secret
    assert post_json(client, token, export(*agent_spans())).status_code == 200
    assert post_json(client, other_token, export(*agent_spans())).status_code == 200
    owners = sorted(session.scalars(select(Run.workspace_id).where(Run.run_id == TRACE)))
    assert owners == sorted([ws.id, other.id])
    # call ids are namespaced by run; each workspace has its own row
    assert session.scalar(select(func.count()).select_from(ToolCall)) == 2


def test_secrets_in_spans_are_redacted_before_storage(client, token, session):
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 3
    spans = agent_spans()
    spans[1]["attributes"].append({"key": "gen_ai.tool.call.result",
                                   "value": {"stringValue": f"key={secret}"}})
    spans[2]["attributes"].append({"key": "note", "value": {"stringValue": secret}})
    assert post_json(client, token, export(*spans)).status_code == 200
    stored = json.dumps([s.data for s in session.scalars(select(OtelSpan))])
    calls = json.dumps([(c.result_summary, c.arguments) for c in session.scalars(select(ToolCall))])
    assert secret not in stored and secret not in calls
    assert "[redacted]" in stored and "[redacted]" in calls


def test_the_ended_copy_of_a_pending_root_span_finishes_the_run(client, token, session):
    """SDKs that export pending spans send the root twice with one span id: first with no
    end, then ended. The late facts win: the run ends, the pending step completes."""
    root, tool, chat = agent_spans()
    pending_root, pending_chat = dict(root), dict(chat)
    pending_root["endTimeUnixNano"] = pending_chat["endTimeUnixNano"] = "0"
    assert post_json(client, token, export(pending_root, pending_chat)).status_code == 200
    run = session.scalars(select(Run).where(Run.run_id == TRACE)).one()
    assert (run.status, [s.status for s in run.steps]) == ("RUNNING", ["running"])
    assert post_json(client, token, export(root, chat, tool)).status_code == 200
    session.expire_all()
    run = session.scalars(select(Run).where(Run.run_id == TRACE)).one()
    assert (run.status, [s.status for s in run.steps]) == ("SUCCESS", ["completed"])
    # and a pending copy arriving after the ended one changes nothing
    assert post_json(client, token, export(pending_root, pending_chat)).get_json() == {}
    session.expire_all()
    assert session.scalar(select(Run.status).where(Run.run_id == TRACE)) == "SUCCESS"


@pytest.mark.parametrize("text", [
    "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AWS_SECRET_ACCESS_KEY\twJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "pwd: hunter2hunter2", "token hunter2hunter2", "user:hunter2hunter2@host",
])
def test_secret_shapes_in_span_tool_arguments_are_redacted(client, token, session, text):
    """A secret written as ``name value`` or ``user:pw@host`` in a tool call's arguments
    (``{"cmd": ...}``) is stored neither in the span nor in the call (SPEC 4)."""
    spans = agent_spans()
    spans[1]["attributes"].append({"key": "gen_ai.tool.call.arguments",
                                   "value": {"stringValue": json.dumps({"cmd": text})}})
    assert post_json(client, token, export(*spans)).status_code == 200
    stored = json.dumps([s.data for s in session.scalars(select(OtelSpan))])
    calls = json.dumps([(c.result_summary, c.arguments) for c in session.scalars(select(ToolCall))])
    for secret in ("wJalrXUtnFEMI", "EXAMPLEKEY", "hunter2hunter2"):
        assert secret not in stored and secret not in calls
    assert "[redacted]" in calls


@pytest.mark.parametrize("code,status", [("STATUS_CODE_ERROR", "FAILED"), ("OK", "SUCCESS"),
                                         ("STATUS_CODE_OK", "SUCCESS"), (1, "SUCCESS"),
                                         ("error", "FAILED")])
@pytest.mark.parametrize("kind", ["SERVER", "SPAN_KIND_INTERNAL", 3, "client"])
def test_status_codes_and_span_kinds_as_names_or_numbers(client, token, session, code, status, kind):
    root = span("1111111111111111", "root", status=code)
    root["kind"] = kind
    response = post_json(client, token, export(root))
    assert (response.status_code, response.get_json()) == (200, {})
    assert session.scalar(select(Run.status).where(Run.run_id == TRACE)) == status


@pytest.mark.parametrize("field,value", [("status", "BROKEN"), ("kind", "SPAN_KIND_NOPE")])
def test_an_unknown_status_or_kind_name_rejects_that_span_naming_the_field(client, token, session,
                                                                         field, value):
    """The protobuf JSON reader, told to ignore unknown fields, also reads an unknown
    enum name as the default (UNSET: a failed run would be stored as a success), so the
    span is rejected naming the field; the export's other spans are stored (as a batch
    of tool events: one bad event is rejected, the rest apply)."""
    bad = span("7777777777777777", "bad", parent="1111111111111111")
    if field == "status":
        bad["status"] = {"code": value}
    else:
        bad["kind"] = value
    response = post_json(client, token, export(*agent_spans(), bad))
    assert response.status_code == 200
    partial = response.get_json()["partialSuccess"]
    path = "resourceSpans[0].scopeSpans[0].spans[3]." + ("status.code" if field == "status" else "kind")
    assert partial["rejectedSpans"] == "1"
    assert partial["errorMessage"].startswith(path) and value in partial["errorMessage"]
    assert session.scalar(select(func.count()).select_from(OtelSpan)) == 3


def test_a_root_marked_aiops_makes_an_aiops_run(client, token, session):
    root, tool, chat = agent_spans()
    root["attributes"].append({"key": "reviewapp.run.kind", "value": {"stringValue": "aiops"}})
    assert post_json(client, token, export(root, tool, chat)).get_json() == {}
    run = session.scalars(select(Run).where(Run.run_id == TRACE)).one()
    assert (run.kind, run.status, run.tool_call_count) == ("aiops", "SUCCESS", 1)
    call = session.scalars(select(ToolCall)).one()
    assert (call.diagnostic_task_id, call.chat_session_id) == (run.diagnosis_session_id, None)


@pytest.mark.parametrize("key,value,reason", [
    ("traceId", 5, "must be a hex string of 32 characters"),
    ("traceId", [], "must be a hex string of 32 characters"),
    ("traceId", "abc", "must be a hex string of 32 characters"),
    ("spanId", {"a": 1}, "must be a hex string of 16 characters"),
    ("spanId", True, "must be a hex string of 16 characters"),
    ("parentSpanId", 7, "must be a hex string of 16 characters"),
    ("parentSpanId", "zz" * 8, "must be a hex string of 16 characters"),
])
def test_an_id_of_the_wrong_type_rejects_that_span_naming_its_path(client, token, session, key, value, reason):
    """A span id that is not a hex (or base64) text of its size is that span's problem,
    named by its path, as a bad time is; before, a number was a 400 for the whole export
    reading "Failed to parse traceId field: object of type 'int' has no len()"."""
    bad = span("7777777777777777", "bad", parent="1111111111111111")
    bad[key] = value
    response = post_json(client, token, export(*agent_spans(), bad))
    assert response.status_code == 200, response.get_data(as_text=True)
    partial = response.get_json()["partialSuccess"]
    assert partial == {"rejectedSpans": "1",
                       "errorMessage": f"resourceSpans[0].scopeSpans[0].spans[3].{key}: {reason}"}
    assert session.scalar(select(func.count()).select_from(OtelSpan)) == 3


def test_an_id_of_a_link_of_the_wrong_type_rejects_that_span(client, token, session):
    linked = span("7777777777777777", "linked", parent="1111111111111111")
    linked["links"] = [{"traceId": TRACE, "spanId": "1111111111111111"}, {"traceId": 5}]
    base64_ids = span("8888888888888888", "base64", parent="1111111111111111")
    base64_ids["spanId"] = "iIiIiIiIiIg="  # 0x88 * 8, as some exporters send it
    response = post_json(client, token, export(*agent_spans(), linked, base64_ids))
    assert response.get_json()["partialSuccess"] == {
        "rejectedSpans": "1",
        "errorMessage": "resourceSpans[0].scopeSpans[0].spans[3].links[1].traceId: "
                        "must be a hex string of 32 characters"}
    assert session.scalar(select(func.count()).select_from(OtelSpan)) == 4


@pytest.mark.parametrize("key,value,fields", [
    ("name", 5, "name"),
    ("kind", [], "kind"),
    ("startTimeUnixNano", "password=hunter2", "startTimeUnixNano"),
    ("attributes", {"a": 1}, "attributes"),
    ("attributes", [{"key": "n", "value": {"intValue": "x"}}], "attributes.value.intValue"),
    ("status", {"message": 5}, "status.message"),
    ("events", [{"name": {"token": "ghp_" + "a1" * 18}}], "events.name"),
])
def test_a_field_of_the_wrong_type_rejects_that_span_naming_its_path(client, token, session,
                                                                    key, value, fields):
    """Any other wrong-typed span field is that span's problem too, named by its path
    without repeating the value sent (it may hold a secret); before, the whole export was
    a 400 "body: not an OTLP JSON ExportTraceServiceRequest: Failed to parse name field:
    expected string or bytes-like object, got 'int'"."""
    bad = span("7777777777777777", "bad", parent="1111111111111111")
    bad[key] = value
    response = post_json(client, token, export(*agent_spans(), bad))
    assert response.status_code == 200, response.get_data(as_text=True)
    partial = response.get_json()["partialSuccess"]
    assert partial == {"rejectedSpans": "1", "errorMessage":
                       f"resourceSpans[0].scopeSpans[0].spans[3].{fields}: "
                       "not a valid value for this OTLP field"}
    assert session.scalar(select(func.count()).select_from(OtelSpan)) == 3


def test_a_scope_field_of_the_wrong_type_rejects_its_spans_only(client, token, session):
    body = export(*agent_spans())
    body["resourceSpans"][0]["scopeSpans"].append(
        {"scope": {"name": ["x"]}, "spans": [span("7777777777777777", "bad", parent="1111111111111111"),
                                             span("8888888888888888", "bad", parent="1111111111111111")]})
    response = post_json(client, token, body)
    assert response.get_json()["partialSuccess"] == {
        "rejectedSpans": "2",
        "errorMessage": "resourceSpans[0].scopeSpans[1].scope.name: not a valid value for this OTLP field"}
    assert session.scalar(select(func.count()).select_from(OtelSpan)) == 3


def test_a_resource_field_of_the_wrong_type_rejects_its_spans_only(client, token, session):
    good, bad = export(*agent_spans()), export(span("7777777777777777", "bad"), service="other")
    bad["resourceSpans"][0]["resource"]["attributes"] = 5
    body = {"resourceSpans": good["resourceSpans"] + bad["resourceSpans"]}
    response = post_json(client, token, body)
    assert response.get_json()["partialSuccess"] == {
        "rejectedSpans": "1",
        "errorMessage": "resourceSpans[1].resource.attributes: not a valid value for this OTLP field"}
    assert session.scalar(select(func.count()).select_from(OtelSpan)) == 3


def test_a_span_nested_too_deeply_is_rejected_alone(client, token, session):
    """The 64-level limit is per span, as it is per event of a tool-event batch: a span
    whose attribute value nests deeper is rejected with its path, the others stored. The
    whole export was a 400."""
    def nested(levels: int) -> dict:  # each kvlist level is 4 JSON levels
        value: dict = {"stringValue": "leaf"}
        for _ in range(levels):
            value = {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
        return value

    deep = span("7777777777777777", "deep", parent="1111111111111111")
    deep["attributes"] = [{"key": "x", "value": nested(40)}]
    # 60 levels within the span, over 64 counted from the body's root: kept
    kept = span("8888888888888888", "kept", parent="1111111111111111")
    kept["attributes"] = [{"key": "x", "value": nested(14)}]
    response = post_json(client, token, export(*agent_spans(), deep, kept))
    assert response.status_code == 200, response.get_data(as_text=True)
    partial = response.get_json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1"
    # The path is cut in its middle: it named all 64 levels, ".kvlistValue.values[0].value" 16 times.
    assert partial["errorMessage"] == ("resourceSpans[0].scopeSpans[0].spans[3].attributes[0].value"
                                       ".kvlistValue.values[0]…(56 levels)…value.kvlistValue: "
                                       "nested more than 64 levels deep")
    assert session.scalar(select(func.count()).select_from(OtelSpan)) == 4
    # 100 levels of attributes: the message stays as short.
    deep["attributes"] = [{"key": "x", "value": nested(100)}]
    partial = post_json(client, token, export(*agent_spans(), deep)).get_json()["partialSuccess"]
    assert partial["errorMessage"].endswith("…(56 levels)…value.kvlistValue: nested more than 64 levels deep")
    assert len(partial["errorMessage"]) < 200


@pytest.mark.parametrize("fmt", ["json", "protobuf"])
def test_a_span_refused_once_decoded_is_named_by_its_path_as_sent(client, token, session, fmt):
    """A span refused once decoded (no trace id, a time before 2000) is named by its path
    in the export as sent, as a span refused while reading is; before, the message said
    only "traceId: must be 16 bytes, not all zero", whichever of the spans it was. In
    JSON the first bad span (name: 5) is taken out while reading: the later ones keep
    their indexes as sent."""
    no_trace = span("7777777777777777", "no trace", parent="1111111111111111")
    no_trace["traceId"] = None if fmt == "json" else ""
    old = span("8888888888888888", "old", parent="1111111111111111")
    old["startTimeUnixNano"] = "5"
    spans = [*agent_spans(), no_trace, old]
    if fmt == "json":
        wrong = span("9999999999999999", "wrong", parent="1111111111111111")
        wrong["name"] = 5
        spans.insert(3, wrong)
        response = post_json(client, token, export(*spans))
        partial = response.get_json()["partialSuccess"]
        rejected, message = partial["rejectedSpans"], partial["errorMessage"]
    else:
        response = client.post("/v1/traces", data=to_protobuf(export(*spans)), headers={
            "Authorization": f"Bearer {token}", "Content-Type": "application/x-protobuf"})
        answer = ExportTraceServiceResponse.FromString(response.data).partial_success
        rejected, message = str(answer.rejected_spans), answer.error_message
    first = 4 if fmt == "json" else 3
    expected = [f"resourceSpans[0].scopeSpans[0].spans[{first}].traceId: must be 16 bytes, not all zero",
                f"resourceSpans[0].scopeSpans[0].spans[{first + 1}].startTimeUnixNano: 5 is outside "
                "the years 2000-2100"]
    if fmt == "json":
        expected.insert(0, "resourceSpans[0].scopeSpans[0].spans[3].name: not a valid value for this OTLP field")
    assert (rejected, message) == (str(len(expected)), "; ".join(expected))
    assert session.scalar(select(func.count()).select_from(OtelSpan)) == 3
