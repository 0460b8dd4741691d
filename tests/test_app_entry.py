"""The serving entry point (``app.py``, what ``flask run`` and ``gunicorn app:app`` load)
does its one-off work at start, not inside the first request that needs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import gc
import app  # noqa: F401  (the entry point under test)
from reviewapp.domain import encoded_text
print(encoded_text._translation.cache_info().currsize, gc.get_freeze_count() > 0)
"""


def test_the_character_tables_are_built_at_start_before_any_request(tmp_path):
    # Session 14 found the first request of a worker that redacts non-ASCII text building
    # the character table (every code point classified, ~1 s of CPU) inside that request.
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVIEWAPP_")}
    env.update({"REVIEWAPP_DATABASE_URL": f"sqlite:///{tmp_path / 'entry.db'}",
                "REVIEWAPP_SECRET_KEY": "entry-test", "FLASK_APP": "app.py"})
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # Both views' tables (plain and joined) exist once the entry point is imported, before
    # any request, and the process then froze what it built.
    assert done.stdout.split() == ["2", "True"]
