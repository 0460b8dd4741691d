"""Helpers the benchmarks share: a free local port, waiting for a server to listen, and
stopping the servers a benchmark started together with their scratch folder. Not a
benchmark itself (``make bench`` skips the ``_``-prefixed modules)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(port: int, timeout: float = 30.0) -> None:
    """Return once 127.0.0.1:``port`` accepts a connection; ``RuntimeError`` after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"server on port {port} did not start")


def stop_servers(servers: Iterable[subprocess.Popen], folder: Path | str) -> None:
    """Terminate every server (all first, then wait up to 10 s each and kill the ones
    still running), then remove the scratch ``folder``."""
    servers = list(servers)
    for server in servers:
        server.terminate()
    for server in servers:
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    shutil.rmtree(folder, ignore_errors=True)
