"""The tool-call lifecycle under every ordering of SPEC 4, the runtime log, redaction."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from reviewapp.actors import Actor
from reviewapp.errors import Forbidden, PayloadTooLarge, ValidationFailed
from reviewapp.models import Run, ToolCall
from reviewapp.services.tool_calls import apply_events, error_class, log_safe

T0 = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
SYSTEM = Actor.system_actor()


def at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat()


def ev(call_id: str, event: str, run_id: str = "run-1", seconds: float | None = 0, **extra):
    body = {"id": call_id, "run_id": run_id, "event": event, **extra}
    if seconds is not None:
        body["timestamp"] = at(seconds)
    if event == "started":
        body.setdefault("tool_name", "search_logs")
    return body


@pytest.fixture
def run(make, ws):
    return make.run(ws, "run-1", status="RUNNING", messages=[])


def rows(session, ws_id: int | None = None) -> list[ToolCall]:
    stmt = select(ToolCall).order_by(ToolCall.workspace_id, ToolCall.id)
    if ws_id is not None:
        stmt = stmt.where(ToolCall.workspace_id == ws_id)
    session.expire_all()
    return list(session.scalars(stmt))


def apply(session, ws, *events, actor=SYSTEM):
    return [r.result for r in apply_events(session, actor, ws.id, list(events))]


def test_started_then_completed_finalises_the_same_row(session, ws, run):
    assert apply(session, ws, ev("c1", "started", arguments={"q": "x"}),
                 ev("c1", "completed", seconds=1.5, output={"hits": 2})) == ["created", "updated"]
    [row] = rows(session)
    assert (row.status, row.started_at, row.completed_at, row.duration_ms, row.compensated) == (
        "completed", T0, T0 + timedelta(seconds=1.5), 1500, False)
    assert row.result_summary == '{"hits": 2}' and row.error_message is None
    assert row.arguments == {"q": "x"}


def test_started_then_failed_keeps_the_error(session, ws, run):
    apply(session, ws, ev("c1", "started"))
    apply(session, ws, ev("c1", "failed", seconds=0.25, error="TimeoutError: upstream took 30s"))
    [row] = rows(session)
    assert (row.status, row.duration_ms, row.error_message, row.compensated) == (
        "failed", 250, "TimeoutError: upstream took 30s", False)


def test_completed_without_started_creates_a_compensated_row(session, ws, run):
    assert apply(session, ws, ev("c1", "completed", seconds=3, tool_name="kb", output="ok")) == ["created"]
    [row] = rows(session)
    assert (row.status, row.compensated, row.started_at, row.completed_at, row.duration_ms) == (
        "completed", True, T0 + timedelta(seconds=3), T0 + timedelta(seconds=3), 0)
    assert row.tool_name == "kb" and row.result_summary == "ok"


def test_failed_without_started_creates_a_compensated_failed_row(session, ws, run):
    apply(session, ws, ev("c1", "failed", error={"type": "HTTPError", "status": 502}))
    [row] = rows(session)
    assert (row.status, row.compensated, row.tool_name) == ("failed", True, "unknown")
    assert row.error_message == '{"type": "HTTPError", "status": 502}'


def test_started_only_stays_started_without_end(session, ws, run):
    apply(session, ws, ev("c1", "started"))
    [row] = rows(session)
    assert (row.status, row.completed_at, row.duration_ms, row.compensated) == ("started", None, None, False)


def test_late_started_after_completed_fills_in_the_real_start(session, ws, run):
    apply(session, ws, ev("c1", "completed", seconds=2, output="done"))
    results = apply_events(session, SYSTEM, ws.id, [ev("c1", "started", seconds=0.5,
                                                        tool_name="query_logs", arguments={"svc": "a"})])
    assert results[0].result == "updated"
    [row] = rows(session)
    assert (row.status, row.started_at, row.duration_ms, row.compensated, row.tool_name) == (
        "completed", T0 + timedelta(seconds=0.5), 1500, False, "query_logs")
    assert row.arguments == {"svc": "a"}


def test_late_started_without_timestamp_invents_no_start(session, ws, run):
    apply(session, ws, ev("c1", "completed", seconds=2))
    apply(session, ws, ev("c1", "started", seconds=None, tool_name="query_logs"))
    [row] = rows(session)
    assert (row.compensated, row.started_at, row.tool_name) == (True, T0 + timedelta(seconds=2), "query_logs")


def test_replayed_completed_is_idempotent(session, ws, run):
    events = [ev("c1", "started"), ev("c1", "completed", seconds=1, output="x")]
    apply(session, ws, *events)
    before = [(r.status, r.completed_at, r.duration_ms, r.updated_at) for r in rows(session)]
    assert apply(session, ws, events[1]) == ["unchanged"]
    assert apply(session, ws, events[0]) == ["unchanged"]
    assert [(r.status, r.completed_at, r.duration_ms, r.updated_at) for r in rows(session)] == before


def test_failed_after_completed_is_rejected_and_changes_nothing(session, ws, run):
    apply(session, ws, ev("c1", "started"), ev("c1", "completed", seconds=1, output="fine"))
    [result] = apply_events(session, SYSTEM, ws.id, [ev("c1", "failed", seconds=2, error="late")])
    assert (result.result, result.message) == ("rejected", "call is already completed")
    [row] = rows(session)
    assert (row.status, row.result_summary, row.error_message, row.duration_ms) == ("completed", "fine", None, 1000)


def test_two_tenants_with_the_same_call_id_never_touch_each_other(session, make):
    ws_a, ws_b = make.workspace(), make.workspace()
    make.run(ws_a, "run-1", status="RUNNING")
    make.run(ws_b, "run-1", status="RUNNING")
    token_b = Actor.for_token(999, ws_b.id)
    apply(session, ws_a, ev("shared", "started"))
    apply(session, ws_b, ev("shared", "started", seconds=5), actor=token_b)
    apply(session, ws_b, ev("shared", "failed", seconds=6, error="boom"), actor=token_b)
    [row_a] = rows(session, ws_a.id)
    [row_b] = rows(session, ws_b.id)
    assert (row_a.status, row_a.completed_at) == ("started", None)
    assert (row_b.status, row_b.duration_ms) == ("failed", 1000)
    with pytest.raises(Forbidden):
        apply_events(session, token_b, ws_a.id, [ev("shared", "completed")])


def test_token_cannot_reach_a_run_of_another_workspace(session, make):
    ws_a, ws_b = make.workspace(), make.workspace()
    make.run(ws_a, "only-in-a", status="RUNNING")
    [result] = apply_events(session, Actor.for_token(1, ws_b.id), ws_b.id,
                            [ev("c9", "completed", run_id="only-in-a")])
    assert (result.result, result.message) == ("rejected", "unknown run_id")
    assert rows(session) == []


def test_batch_with_one_rejected_event_applies_the_rest(session, ws, run):
    results = apply_events(session, SYSTEM, ws.id, [
        ev("c1", "started"), ev("c1", "completed", seconds=1), ev("c1", "failed", seconds=2),
        ev("c2", "started", seconds=3), ev("c3", "completed", run_id="no-such-run"),
        ev("c2", "completed", seconds=4),
    ])
    assert [r.result for r in results] == ["created", "updated", "rejected", "created", "rejected", "updated"]
    assert [r.index for r in results] == [0, 1, 2, 3, 4, 5]
    assert [(r.id, r.status, r.ordinal) for r in rows(session)] == [("c1", "completed", 1), ("c2", "completed", 2)]
    session.expire_all()
    assert session.get(Run, run.id).tool_call_count == 2


def test_call_id_of_another_run_is_rejected(session, make, ws, run):
    make.run(ws, "run-2", status="RUNNING")
    apply(session, ws, ev("c1", "started"))
    [result] = apply_events(session, SYSTEM, ws.id, [ev("c1", "completed", run_id="run-2")])
    assert (result.result, result.message) == ("rejected", "this call id belongs to another run")


@pytest.mark.parametrize(("start", "end"), [(5, 1), (0, 0)])
def test_duration_is_never_negative(session, ws, run, start, end):
    apply(session, ws, ev("c1", "started", seconds=start), ev("c1", "completed", seconds=end))
    apply(session, ws, ev("c2", "completed", seconds=end), ev("c2", "started", seconds=start))
    assert [r.duration_ms for r in rows(session)] == [0, 0]


def test_end_before_start_is_applied_with_duration_0_and_a_warning(session, ws, run):
    """SPEC 4: the duration is max(0, ...) and nothing received is dropped, so a terminal
    event (or a late started) whose time contradicts the other end is applied, clamped to
    0 ms, and its result says so."""
    results = apply_events(session, SYSTEM, ws.id, [
        ev("c1", "started", seconds=5), ev("c1", "completed", seconds=1),
        ev("c2", "failed", seconds=1, error="x"), ev("c2", "started", seconds=5),
        ev("c3", "started", seconds=1), ev("c3", "completed", seconds=1),
    ])
    assert [(r.result, r.warning) for r in results] == [
        ("created", ""),
        ("updated", ("completed at 2026-05-01T12:00:01+00:00 is before the start "
                     "2026-05-01T12:00:05+00:00: duration recorded as 0 ms")),
        ("created", ""),
        ("updated", ("started at 2026-05-01T12:00:05+00:00 is after the end "
                     "2026-05-01T12:00:01+00:00: duration recorded as 0 ms")),
        ("created", ""), ("updated", ""),
    ]
    assert results[1].to_dict()["warning"].startswith("completed at")
    assert "warning" not in results[0].to_dict()
    assert [(r.id, r.status, r.duration_ms) for r in rows(session)] == [
        ("c1", "completed", 0), ("c2", "failed", 0), ("c3", "completed", 0)]


@pytest.mark.parametrize("stamp", ["1999-12-31T23:59:59Z", "2101-01-01T00:00:00Z", 5, 1e308])
def test_timestamp_outside_2000_to_2100_is_400_naming_it(session, ws, run, stamp):
    with pytest.raises(ValidationFailed) as err:
        apply_events(session, SYSTEM, ws.id, [ev("c1", "started", seconds=None, timestamp=stamp)], batch=False)
    assert err.value.field == "timestamp"
    assert rows(session) == []


def test_delta_events_are_ignored_and_never_stored(session, ws, run):
    assert apply(session, ws, ev("c1", "delta", output="partial")) == ["ignored"]
    assert rows(session) == []


def test_shape_errors_in_a_batch_are_per_event_results_and_the_rest_apply(session, ws, run):
    """A batch answers per event (README): an invalid event is rejected with its field
    path and message, the valid ones around it are applied in order."""
    results = apply_events(session, SYSTEM, ws.id, [
        ev("c1", "started"), ev("c2", "started", argumnts={}),
        ev("c3", "started", seconds=None, timestamp="yesterday"), "not an object",
        {"id": "c4", "run_id": "run-1", "event": "done"}, ev("c1", "completed", seconds=2),
    ])
    assert [r.to_dict() for r in results] == [
        {"index": 0, "id": "c1", "event": "started", "result": "created"},
        {"index": 1, "id": "c2", "event": "started", "result": "rejected",
         "field": "[1].argumnts", "message": "unknown field"},
        {"index": 2, "id": "c3", "event": "started", "result": "rejected",
         "field": "[2].timestamp", "message": "expected an ISO 8601 timestamp, got 'yesterday'"},
        {"index": 3, "id": None, "event": None, "result": "rejected",
         "field": "[3]", "message": "must be object"},
        {"index": 4, "id": "c4", "event": None, "result": "rejected",
         "field": "[4].event", "message": "must be one of: started, completed, failed, delta"},
        {"index": 5, "id": "c1", "event": "completed", "result": "updated"},
    ]
    assert [(r.id, r.status, r.duration_ms) for r in rows(session)] == [("c1", "completed", 2000)]


def test_shape_error_of_a_single_event_is_a_validation_error(session, ws, run):
    with pytest.raises(ValidationFailed) as err:
        apply_events(session, SYSTEM, ws.id, [{"id": "c1", "run_id": "run-1", "event": "started"}], batch=False)
    assert err.value.field == "tool_name"
    assert rows(session) == []


def test_batch_larger_than_the_limit_is_refused(session, ws, run):
    with pytest.raises(PayloadTooLarge):
        apply_events(session, SYSTEM, ws.id, [ev(f"c{i}", "started") for i in range(4)], max_events=3)


def test_naive_timestamps_are_read_as_utc(session, ws, run):
    apply(session, ws, ev("c1", "started", seconds=None, timestamp="2026-05-01T12:00:00"),
          ev("c1", "completed", seconds=None, timestamp="2026-05-01T14:00:00+02:00"))
    [row] = rows(session)
    assert row.started_at == T0 and row.duration_ms == 0


def test_secrets_are_redacted_before_storage(session, ws, run):
    apply(session, ws,
          ev("c1", "started", arguments={"url": "postgres://app:S3cretPassw0rd@db/x", "api_key": "abc"}),
          ev("c1", "completed", seconds=1, output="token ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
          ev("c2", "started"), ev("c2", "failed", error="Authorization: Bearer abcdefghijklmnop0123456789"))
    c1, c2 = rows(session)
    assert c1.arguments == {"url": "postgres://app:[redacted]@db/x", "api_key": "[redacted]"}
    assert c1.result_summary == "token [redacted]"
    assert c2.error_message == "Authorization: Bearer [redacted]"


def test_results_and_errors_are_cut_to_2000_characters(session, ws, run):
    apply(session, ws, ev("c1", "completed", output="o" * 5000), ev("c2", "failed", error=["e" * 5000]))
    c1, c2 = rows(session)
    assert len(c1.result_summary) == 2000 and len(c2.error_message) == 2000


def test_runtime_log_holds_no_argument_value_or_output(session, ws, run, caplog):
    """SPEC 4: tool name, argument keys, status, duration, error class - never values."""
    caplog.set_level(logging.INFO, logger="reviewapp.tool_calls")
    apply(session, ws,
          ev("c1", "started", tool_name="query_logs",
             arguments={"service_name": "checkout-zq81", "window_minutes": 73519}),
          ev("c1", "completed", seconds=1, output={"lines": ["OOMKilled pod-xk42"]}),
          ev("c2", "started", tool_name="kb_search", arguments={"needle": "runbook-qq77"}),
          ev("c2", "failed", seconds=2, error="ValueError: index out of range at shard-zz31"))
    text = "\n".join(r.getMessage() for r in caplog.records if r.name == "reviewapp.tool_calls")
    assert len([r for r in caplog.records if r.name == "reviewapp.tool_calls"]) == 4
    for expected in ("query_logs", "kb_search", "service_name", "window_minutes", "needle",
                     "status=completed", "status=failed", "duration_ms=1000", "duration_ms=2000",
                     "error_class=ValueError"):
        assert expected in text
    for secret in ("checkout-zq81", "73519", "OOMKilled", "pod-xk42", "runbook-qq77",
                   "index out of range", "shard-zz31"):
        assert secret not in text


@pytest.mark.parametrize(("error", "expected"), [
    (None, None), ("ValueError: bad", "ValueError"), ("requests.exceptions.ConnectTimeout: x", "requests.exceptions.ConnectTimeout"),
    ("disk full", "error"), ({"type": "HTTPError", "msg": "secret"}, "HTTPError"), ({"type": "has spaces"}, "error"), (42, "error"),
])
def test_error_class_never_carries_the_message(error, expected):
    assert error_class(error) == expected


@pytest.mark.parametrize(("error", "expected"), [
    ("AKIAQ7F2LM9XZR4TY8WPError: x", "error"),  # shaped like a class, but a key: never logged
    ({"type": "sk_live_4eC39HqLyjWDarjtT1zdp7dcError"}, "error"),
    ({"class": "botocore.exceptions.ClientError"}, "botocore.exceptions.ClientError"),
    ({"code": "E42"}, "error"), ("PermissionError\nforged line", "PermissionError"),
])
def test_error_class_is_a_class_name_or_a_fixed_word(error, expected):
    assert error_class(error) == expected


def test_log_values_cannot_forge_a_log_line(session, ws, run, caplog):
    """SPEC 4: the tool name is redacted and the logged values' control characters
    escaped. A tool name holding a control character is refused outright since a5be07e
    (``domain.ids``), so the forging line rides on an argument key."""
    caplog.set_level(logging.INFO, logger="reviewapp.tool_calls")
    assert apply(session, ws, ev("c0", "started", tool_name="ls\nINFO forged")) == ["rejected"]
    apply(session, ws, ev("c1", "started", tool_name="ls tool_call token=Tk9Wx7Ec6Rv5",
                          arguments={"a\rb\nINFO forged tool_call": 1}))
    [record] = [r for r in caplog.records if r.name == "reviewapp.tool_calls"]
    message = record.getMessage()
    assert "\n" not in message and "\r" not in message and "Tk9Wx7Ec6Rv5" not in message
    assert "ls tool_call token=" in message and "a\\x0db\\x0aINFO forged" in message
    assert log_safe("plain") == "plain"


def test_events_in_one_batch_get_consecutive_ordinals_after_existing_rows(session, ws, make):
    make.run(ws, "run-9", status="RUNNING", tool_calls=[{"id": "r1", "tool_name": "t"}])
    apply(session, ws, ev("e1", "started", run_id="run-9"), ev("e2", "completed", run_id="run-9"))
    assert [(r.id, r.ordinal) for r in rows(session)] == [("e1", 2), ("e2", 3), ("r1", 1)]
    assert session.scalar(select(func.count()).select_from(ToolCall)) == 3


@pytest.mark.skipif(bool(__import__("os").environ.get("REVIEWAPP_TEST_DB_URL")),
                    reason="SQLite's snapshot isolation (SQLITE_BUSY_SNAPSHOT)")
def test_a_read_snapshot_older_than_another_writers_commit_is_retried(session, ws, run, app):
    """A caller that read in a deferred transaction (no write intent) and then ingests,
    after another connection committed, gets SQLITE_BUSY_SNAPSHOT ("database is locked")
    on the upgrade; it is a lost race: rolled back and run again."""
    from sqlalchemy import create_engine, text

    session.scalars(select(Run)).all()  # the session now holds a read snapshot
    other = create_engine(app.config["DATABASE_URL"])
    with other.begin() as conn:  # another writer commits meanwhile
        conn.execute(text("UPDATE workspace SET name = name || ' (renamed)'"))
    other.dispose()
    apply(session, ws, ev("c1", "started"))
    assert [(r.id, r.status) for r in rows(session, ws.id)] == [("c1", "started")]


def test_a_call_spanning_the_whole_timestamp_range_keeps_its_duration(session, ws, run):
    # SPEC 10 accepts timestamps from 2000 to 2100; a call started in 2000 and ended in
    # 2100 lasted 36,525 days (25 leap years), far past a 32-bit millisecond count
    # (about 24.8 days): 36,525 * 86,400,000 ms.
    start = datetime(2000, 1, 1, tzinfo=UTC)
    end = datetime(2100, 1, 1, tzinfo=UTC)
    apply(session, ws, {"id": "c1", "run_id": "run-1", "event": "completed",
                        "timestamp": end.isoformat(), "output": "ok", "tool_name": "kb"})
    apply(session, ws, {"id": "c1", "run_id": "run-1", "event": "started",
                        "timestamp": start.isoformat(), "tool_name": "kb"})
    [row] = rows(session)
    assert (row.status, row.duration_ms) == ("completed", 36_525 * 86_400_000)
