"""The body limit holds for chunked uploads too (SPEC 9: oversize bodies get 413, never
a silently truncated body and never a 201). Sent over a real socket, in chunks, to the
app served by Werkzeug's server and by gunicorn (the README's production server)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from urllib.parse import urlparse

import pytest
from sqlalchemy import func, select

from reviewapp.models import Run

LIMIT = 4096  # bytes: a small MAX_CONTENT_LENGTH for this test


@pytest.fixture
def app_config(app_config):
    return {**app_config, "MAX_CONTENT_LENGTH": LIMIT}


@pytest.fixture
def token(make):
    return make.token(make.workspace("chunky"))


def _send_chunked(base: str, token: str, body: bytes, chunk: int = 1000) -> tuple[int, bytes]:
    url = urlparse(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.putrequest("PUT", "/api/ingest/runs/chunked-run")
    conn.putheader("Authorization", f"Bearer {token}")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Transfer-Encoding", "chunked")
    conn.endheaders()
    try:
        for start in range(0, len(body), chunk):
            piece = body[start:start + chunk]
            conn.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        conn.send(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server may answer 413 and close before the whole body is sent
    response = conn.getresponse()
    status, data = response.status, response.read()
    conn.close()
    return status, data


def _body(size: int) -> bytes:
    doc = {"status": "RUNNING", "query": "q", "answer": "a" * size}
    return json.dumps(doc).encode()


def _runs(session) -> int:
    session.expire_all()
    return session.scalar(select(func.count()).select_from(Run))


def test_chunked_body_over_the_limit_is_413_on_werkzeug(live_server, token, session):
    status, data = _send_chunked(live_server, token, _body(LIMIT * 3))
    assert status == 413, data
    assert json.loads(data)["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert _runs(session) == 0


def test_chunked_body_under_the_limit_is_stored(live_server, token, session):
    status, data = _send_chunked(live_server, token, _body(LIMIT // 2))
    assert status == 201, data
    assert _runs(session) == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def gunicorn_server(database_url, tmp_path):
    port = _free_port()
    env = {**os.environ, "REVIEWAPP_DATABASE_URL": database_url, "REVIEWAPP_SECRET_KEY": "test-secret-key",
           "REVIEWAPP_MAX_CONTENT_LENGTH": str(LIMIT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-w", "1", "-b", f"127.0.0.1:{port}", "app:app"],
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.2)
    else:
        process.kill()
        pytest.fail("gunicorn did not start")
    yield f"http://127.0.0.1:{port}"
    process.terminate()
    process.wait(timeout=10)


def test_chunked_body_over_the_limit_is_413_on_gunicorn(gunicorn_server, token, session):
    status, data = _send_chunked(gunicorn_server, token, _body(LIMIT * 3))
    assert status == 413, data
    assert _runs(session) == 0
    status, data = _send_chunked(gunicorn_server, token, _body(LIMIT // 2))
    assert status == 201, data
