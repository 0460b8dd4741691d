"""Benchmark: importing the tau-bench file (200 runs, 1,164 tool calls) into SQLite
(issue 14), beside a bare ``executemany`` of the same rows in the same process.

Prints, excluding interpreter and app start-up:

* runs/s and tool calls/s of ``importers.import_files`` into an empty workspace (every
  run created: redaction, validation, upsert, scoring, one transaction per run);
* the same for a re-import (every run unchanged);
* runs/s and rows/s of a bare SQLAlchemy Core ``executemany`` of the rows the import
  wrote (sessions, runs, messages, tool calls; one transaction), into a fresh database;
* the ratios import / bare.

Target: >= 400 runs/s for the first import (about 2,300 tool calls/s).
Usage: ``.venv/bin/python benchmarks/import.py [--repeat N] [--file PATH]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from sqlalchemy import insert, select

from reviewapp import create_app
from reviewapp.actors import Actor
from reviewapp.extensions import db
from reviewapp.models import DiagnosisSession, Message, Run, ToolCall, Workspace
from reviewapp.services import importers

DEFAULT_FILE = REPO.parent / "shared" / "data" / "tau-bench" / "gpt-4o-airline.json"
if not DEFAULT_FILE.exists():
    DEFAULT_FILE = Path("/work/shared/data/tau-bench/gpt-4o-airline.json")
TABLES = (DiagnosisSession, Run, Message, ToolCall)


def _app(folder: str, name: str):
    app = create_app({"DATABASE_URL": f"sqlite:///{folder}/{name}.sqlite", "SECRET_KEY": "bench",
                      "TESTING": True})
    with app.app_context():
        db.create_all()
    return app


def _rows(app) -> dict[type, list[dict]]:
    """Every row the import wrote, as plain column dicts (what a bare insert would send)."""
    with app.app_context():
        out = {}
        for model in TABLES:
            table = model.__table__
            out[model] = [dict(r._mapping) for r in db.session.execute(select(table))]
        return out


def bench_import(path: Path, folder: str, attempt: int) -> tuple[float, float, object, int, int]:
    """Seconds of the first import and of a re-import, the app, and the counts."""
    app = _app(folder, f"import-{attempt}")
    with app.app_context():
        db.session.execute(insert(Workspace.__table__), [{"id": 1, "slug": "bench", "name": "Bench",
                                                          "settings": {}}])
        db.session.commit()
        actor = Actor.system_actor()
        t0 = time.perf_counter()
        first = importers.import_files(db.session, actor, 1, [path])
        first_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = importers.import_files(db.session, actor, 1, [path])
        again_s = time.perf_counter() - t0
        assert first.created == first.runs and again.unchanged == again.runs, (first, again)
        db.session.remove()
    return first_s, again_s, app, first.runs, first.tool_calls


def bench_bare(rows: dict[type, list[dict]], folder: str, attempt: int) -> float:
    app = _app(folder, f"bare-{attempt}")
    with app.app_context():
        conn = db.session
        conn.execute(insert(Workspace.__table__), [{"id": 1, "slug": "bench", "name": "Bench",
                                                    "settings": {}}])
        conn.commit()
        t0 = time.perf_counter()
        for model in TABLES:
            if rows[model]:
                conn.execute(insert(model.__table__), rows[model])
        conn.commit()
        seconds = time.perf_counter() - t0
        db.session.remove()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--repeat", type=int, default=3, help="attempts; the best one counts")
    args = parser.parse_args()
    best_first = best_again = best_bare = float("inf")
    runs = calls = rows_total = 0
    with tempfile.TemporaryDirectory() as folder:
        for attempt in range(args.repeat):
            first_s, again_s, app, runs, calls = bench_import(args.file, folder, attempt)
            rows = _rows(app)
            rows_total = sum(len(v) for v in rows.values())
            bare_s = bench_bare(rows, folder, attempt)
            best_first, best_again, best_bare = min(best_first, first_s), min(best_again, again_s), \
                min(best_bare, bare_s)
            for name in os.listdir(folder):
                os.remove(os.path.join(folder, name))
    print(f"file: {args.file.name}: {runs} runs, {calls} tool calls, {rows_total} rows "
          f"(sessions, runs, messages, tool calls); best of {args.repeat}")
    print(f"import (all created):   {runs / best_first:8.1f} runs/s  {calls / best_first:9.1f} tool calls/s"
          f"  ({best_first:.3f} s)")
    print(f"re-import (unchanged):  {runs / best_again:8.1f} runs/s  {calls / best_again:9.1f} tool calls/s"
          f"  ({best_again:.3f} s)")
    print(f"bare executemany:       {runs / best_bare:8.1f} runs/s  {rows_total / best_bare:9.1f} rows/s"
          f"  ({best_bare:.3f} s)")
    print(f"ratio import / bare: {best_first / best_bare:.1f}x the time; "
          f"re-import / bare: {best_again / best_bare:.1f}x; target >= 400 runs/s: "
          f"{'met' if runs / best_first >= 400 else 'NOT met'}")


if __name__ == "__main__":
    main()
