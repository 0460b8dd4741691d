"""``reviewapp.client.ReviewappClient`` against a stub server: batching, order, retries
with backoff on 429 / 503 / connection errors, drops counted and logged, never raising."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from reviewapp.client import ReviewappClient

REFUSAL = json.dumps({"error": {"code": "VALIDATION_INVALID_ARGUMENT",
                               "message": "body: malformed JSON: Infinity is not a JSON number"}}).encode()


class Stub:
    """Answers each request with the next scripted status (then 200), recording bodies."""

    def __init__(self) -> None:
        self.script: list[tuple] = []  # (status, headers[, body])
        self.requests: list[tuple[str, str, object, float]] = []
        self.lock = threading.Lock()
        self.gate = threading.Event()
        self.gate.set()


@pytest.fixture
def stub() -> Iterator[tuple[Stub, str]]:
    state = Stub()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            state.gate.wait(10)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with state.lock:
                state.requests.append((self.command, self.path, body, time.monotonic()))
                status, headers, *scripted = state.script.pop(0) if state.script else (200, {})
            answer = scripted[0] if scripted else b"{}"
            if status == 200 and self.path.endswith("tool-events") and any(e.get("refuse") for e in body):
                status, answer = 400, REFUSAL  # the server refuses the body before any event
            elif status == 200 and self.path.endswith("tool-events"):
                answer = json.dumps({"results": [
                    {"index": i, "id": e["id"], "event": e["event"],
                     "result": "rejected" if e.get("bad") else "created"}
                    for i, e in enumerate(body)]}).encode()
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        do_PUT = do_POST = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state, f"http://127.0.0.1:{server.server_port}"
    state.gate.set()
    server.shutdown()
    server.server_close()


def event(n: int, **extra: object) -> dict:
    return {"id": f"c{n}", "run_id": "r1", "event": "started", "tool_name": "t", **extra}


def test_operations_keep_their_order_and_events_are_batched(stub):
    state, base = stub
    state.gate.clear()  # hold the first request so that the rest queue up behind it
    client = ReviewappClient(base, "rvw_x", batch_size=3)
    client.put_run("r1", {"query": "q"})
    for n in range(5):
        client.tool_event(event(n))
    client.finish_run("r1", {"status": "SUCCESS"})
    state.gate.set()
    assert client.flush(10)
    client.close()
    shape = [(m, p, [e["id"] for e in b] if isinstance(b, list) else None)
             for m, p, b, _ in state.requests]
    assert shape == [("PUT", "/api/ingest/runs/r1", None),
                     ("POST", "/api/ingest/tool-events", ["c0", "c1", "c2"]),
                     ("POST", "/api/ingest/tool-events", ["c3", "c4"]),
                     ("POST", "/api/ingest/runs/r1/finish", None)]
    assert (client.sent, client.dropped, client.rejected) == (7, 0, 0)


@pytest.mark.parametrize("status", [429, 503, 502])
def test_retries_with_backoff_then_delivers(stub, status):
    state, base = stub
    state.script = [(status, {}), (status, {})]
    client = ReviewappClient(base, "rvw_x", backoff_s=0.05)
    client.tool_event(event(1))
    assert client.flush(10)
    client.close()
    times = [t for *_, t in state.requests]
    assert len(times) == 3
    assert times[1] - times[0] >= 0.05 and times[2] - times[1] >= 0.1  # doubled
    assert (client.sent, client.dropped) == (1, 0)


def test_retry_after_is_honoured(stub):
    state, base = stub
    state.script = [(429, {"Retry-After": "1"})]
    client = ReviewappClient(base, "rvw_x", backoff_s=0.01)
    client.tool_event(event(1))
    assert client.flush(10)
    client.close()
    first, second = (t for *_, t in state.requests)
    assert second - first >= 0.9


def test_gives_up_after_max_retries_counts_and_logs(stub, caplog):
    state, base = stub
    state.script = [(503, {})] * 10
    client = ReviewappClient(base, "rvw_x", backoff_s=0.01, max_retries=2)
    with caplog.at_level(logging.WARNING, logger="reviewapp.client"):
        client.tool_event(event(1))
        client.tool_event(event(2))
        assert client.flush(10)
    client.close()
    assert len(state.requests) == 3
    assert (client.sent, client.dropped) == (0, 2)
    assert "gave up after 3 attempts" in caplog.text


def test_a_client_error_is_not_retried_and_is_counted(stub):
    state, base = stub
    state.script = [(400, {})]
    client = ReviewappClient(base, "rvw_x", backoff_s=0.01)
    client.put_run("r1", {"bogus": 1})
    assert client.flush(10)
    client.close()
    assert len(state.requests) == 1
    assert client.dropped == 1


def test_rejected_events_are_counted(stub):
    _, base = stub
    client = ReviewappClient(base, "rvw_x")
    client.tool_event(event(1, bad=True))
    client.tool_event(event(2))
    assert client.flush(10)
    client.close()
    assert (client.sent, client.rejected, client.dropped) == (2, 1, 0)


def test_an_event_refused_alone_with_a_400_is_rejected_not_dropped(stub, caplog):
    """A batch of one that the server refuses with a 400 (``VALIDATION_INVALID_ARGUMENT``
    naming the field) was refused for that event's content: counted in ``rejected`` and
    logged as a rejection with the server's message, not retried, not ``dropped``."""
    state, base = stub
    client = ReviewappClient(base, "rvw_x", backoff_s=0.01)
    with caplog.at_level(logging.WARNING, logger="reviewapp.client"):
        client.tool_event(event(1, refuse=True))
        assert client.flush(10)
    client.close()
    assert len(state.requests) == 1
    assert (client.sent, client.rejected, client.dropped) == (0, 1, 0)
    assert ("event c1 (started) rejected: body: malformed JSON: Infinity is not a JSON number"
            in caplog.text)
    assert "dropped" not in caplog.text


def test_a_batch_refused_with_a_400_is_sent_again_event_by_event(stub):
    """A batch refused whole with a 400 (one event's content, the server cannot say which):
    its events are sent again one by one, so the good ones are delivered and only the bad
    one is rejected, as in the per-event answer of a batch."""
    state, base = stub
    state.gate.clear()
    client = ReviewappClient(base, "rvw_x", batch_size=3)
    client.put_run("r1", {"query": "q"})  # held: the events queue up behind it
    client.tool_event(event(1))
    client.tool_event(event(2, refuse=True))
    client.tool_event(event(3, bad=True))
    state.gate.set()
    assert client.flush(10)
    client.close()
    assert [[e["id"] for e in b] for _, p, b, _ in state.requests if p.endswith("tool-events")] == [
        ["c1", "c2", "c3"], ["c1"], ["c2"], ["c3"]]
    assert (client.sent, client.rejected, client.dropped) == (3, 2, 0)  # the run, c1, c3


@pytest.mark.parametrize("kind", ["run", "finish"])
def test_a_run_document_or_finish_refused_for_its_content_is_rejected_not_dropped(stub, caplog, kind):
    """A run document or a finish the server refuses with a 400 ``VALIDATION_INVALID_ARGUMENT``
    was judged, as a refused event is: counted in ``rejected``, logged with the server's
    "field: reason", not retried; before, it was counted in ``dropped`` ("lost on the
    way") with the raw answer."""
    state, base = stub
    refusal = json.dumps({"error": {"code": "VALIDATION_INVALID_ARGUMENT",
                                    "message": "status: must be one of SUCCESS, FAILED"}}).encode()
    state.script = [(400, {}, refusal)]
    client = ReviewappClient(base, "rvw_x", backoff_s=0.01)
    with caplog.at_level(logging.WARNING, logger="reviewapp.client"):
        if kind == "run":
            client.put_run("r1", {"query": "q", "status": "BOGUS"})
        else:
            client.finish_run("r1", {"status": "BOGUS"})
        client.tool_event(event(1))
        assert client.flush(10)
    client.close()
    assert len(state.requests) == 2
    assert (client.sent, client.rejected, client.dropped) == (1, 1, 0)
    assert f"{kind} r1 rejected: status: must be one of SUCCESS, FAILED" in caplog.text
    assert "dropped" not in caplog.text


@pytest.mark.parametrize("answer", [b"<html>Bad Request</html>", b'{"error": {"code": "CSRF_INVALID"}}'])
def test_a_400_that_is_no_validation_error_still_drops_the_event(stub, answer):
    """Only the API's own ``VALIDATION_INVALID_ARGUMENT`` says the event was refused for its
    content; another 400 (a proxy's page, ...) drops it as any other 4xx, not retried."""
    state, base = stub
    state.script = [(400, {}, answer)]
    client = ReviewappClient(base, "rvw_x", backoff_s=0.01)
    client.tool_event(event(1))
    assert client.flush(10)
    client.close()
    assert len(state.requests) == 1
    assert (client.sent, client.rejected, client.dropped) == (0, 0, 1)


def test_connection_errors_are_retried_then_dropped_never_raised(caplog):
    client = ReviewappClient("http://127.0.0.1:9", "rvw_x", backoff_s=0.01, max_retries=2,
                             timeout_s=2)
    with caplog.at_level(logging.WARNING, logger="reviewapp.client"):
        client.put_run("r1", {"query": "q"})
        assert client.flush(10)
    client.close()
    assert client.dropped == 1
    assert "ConnectionRefusedError" in caplog.text or "URLError" in caplog.text


def test_a_full_queue_drops_and_counts_without_blocking(stub):
    state, base = stub
    state.gate.clear()
    client = ReviewappClient(base, "rvw_x", max_queue=3, batch_size=1)
    began = time.monotonic()
    for n in range(10):
        client.tool_event(event(n))
    assert time.monotonic() - began < 1
    assert client.dropped >= 6  # at most 3 queued + 1 in flight
    state.gate.set()
    assert client.flush(10)
    client.close()
    assert client.sent + client.dropped == 10


def test_after_close_nothing_raises_and_it_is_counted(stub):
    _, base = stub
    client = ReviewappClient(base, "rvw_x")
    client.close()
    client.close()
    client.tool_event(event(1))
    assert client.dropped == 1


def test_an_unserialisable_value_does_not_raise(stub):
    state, base = stub
    client = ReviewappClient(base, "rvw_x")
    client.tool_event(event(1, arguments={"when": object()}))
    assert client.flush(10)
    client.close()
    assert client.sent == 1 and isinstance(state.requests[0][2][0]["arguments"]["when"], str)


def test_the_queue_is_flushed_when_the_interpreter_exits(stub):
    """An agent that never calls flush() or close() loses nothing at exit (atexit)."""
    state, base = stub
    state.script = [(503, {})]  # one retry still pending when the script ends
    script = textwrap.dedent(f"""
        from reviewapp.client import ReviewappClient
        client = ReviewappClient({base!r}, "rvw_x", backoff_s=0.05)
        client.put_run("r1", {{"query": "q"}})
        for n in range(3):
            client.tool_event({{"id": f"c{{n}}", "run_id": "r1", "event": "started", "tool_name": "t"}})
        client.finish_run("r1", {{"status": "SUCCESS"}})
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    assert [(m, p) for m, p, _, _ in state.requests] == [
        ("PUT", "/api/ingest/runs/r1"), ("PUT", "/api/ingest/runs/r1"),
        ("POST", "/api/ingest/tool-events"), ("POST", "/api/ingest/runs/r1/finish")]
    assert [e["id"] for e in state.requests[2][2]] == ["c0", "c1", "c2"]
