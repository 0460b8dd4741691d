"""The browser tests' live server leaves nothing open when a client drops
its connection mid-request (CI, stop 28: an unclosed static file's
ResourceWarning failed an unrelated browser test)."""

from __future__ import annotations

import socket
import struct
import sys
import threading
import time


def test_a_dropped_connection_leaves_no_file_open(live_server, monkeypatch):
    seen: list[str] = []
    monkeypatch.setattr(sys, "unraisablehook",
                        lambda u: seen.append(f"{u.exc_type.__name__}: {u.exc_value}"))
    host, port = live_server.removeprefix("http://").split(":")
    before = {t.ident for t in threading.enumerate()}

    with socket.create_connection((host, int(port))) as client:
        # Bytes after the request keep the server's drain step reading; the
        # reset then lands inside that read, which is where werkzeug's dev
        # server gives up before closing the response.
        client.sendall(b"GET /static/img/favicon.svg HTTP/1.1\r\nHost: t\r\n\r\n" + b"x" * 64)
        first = client.recv(64)
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    assert first.startswith(b"HTTP/1.1 200"), first
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        handlers = [t for t in threading.enumerate()
                    if t.ident not in before and t.name != "live-server"]
        if not handlers:
            break
        time.sleep(0.02)
    assert [s for s in seen if "unclosed" in s and "favicon.svg" in s] == []
