"""The README's set-up commands (``make run``): where the app listens is the user's
choice (new-user walk: the Makefile fixed ``--port 5000`` and nothing could change it)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

def _serve_line(*overrides: str) -> str:
    """The ``flask run`` command ``make run`` would execute (``make -n``: printed, not run)."""
    env = {name: value for name, value in os.environ.items() if name not in ("HOST", "PORT")}
    out = subprocess.run(["make", "-n", "-W", ".venv/.installed", "run", *overrides], cwd=REPO,
                         env=env, capture_output=True, text=True, check=True).stdout
    lines = [line for line in out.splitlines() if re.search(r"flask run\b", line)]
    assert len(lines) == 1, out
    return lines[0]


def test_make_run_serves_on_localhost_5000_by_default():
    line = _serve_line()
    assert line.split()[-4:] == ["--host", "127.0.0.1", "--port", "5000"]


def test_make_run_takes_the_port_and_host_from_the_command_line():
    line = _serve_line("PORT=5057", "HOST=0.0.0.0")
    assert line.split()[-4:] == ["--host", "0.0.0.0", "--port", "5057"]


def test_make_run_tells_the_demo_bootstrap_where_it_serves():
    env = {name: value for name, value in os.environ.items() if name not in ("HOST", "PORT")}
    out = subprocess.run(["make", "-n", "-W", ".venv/.installed", "run", "PORT=5058"], cwd=REPO,
                         env=env, capture_output=True, text=True, check=True).stdout
    assert [line.split()[-2:] for line in out.splitlines() if "demo bootstrap" in line] == [
        ["--url", "http://127.0.0.1:5058"]]
