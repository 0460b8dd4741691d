"""What `flask db upgrade` (the first step of `make run`) prints: one short line for the
person running it. It printed a line per migration with the migration's notes (the first
paragraph of each docstring: "session 11 finding", "issue 18", indexes, backfills), some
of them a paragraph long, 27 steps on a fresh database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MIGRATIONS = sorted((REPO / "migrations" / "versions").glob("*.py"))


def _upgrade(tmp_path: Path, database: Path) -> list[str]:
    env = {**os.environ, "FLASK_APP": "app.py", "REVIEWAPP_DATABASE_URL": f"sqlite:///{database}",
           "REVIEWAPP_SECRET_KEY": '"test-only"', "FLASK_INSTANCE_PATH": str(tmp_path)}
    env.pop("REVIEWAPP_TEST_DB_URL", None)
    done = subprocess.run([sys.executable, "-m", "flask", "db", "upgrade"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return (done.stdout + done.stderr).splitlines()


def test_db_upgrade_on_a_fresh_database_says_one_short_line(tmp_path):
    database = tmp_path / "fresh.sqlite"
    assert len(MIGRATIONS) >= 26  # counted from the files, not from the code that prints
    assert _upgrade(tmp_path, database) == [f"Database schema updated ({len(MIGRATIONS)} steps)."]
    assert database.exists()
    assert _upgrade(tmp_path, database) == ["Database schema is up to date."]
