"""Benchmark: ``flask runs redact`` (services.stored_redaction) over real runs.

Seeds a SQLite database once with the 200 τ-bench runs of ``shared/data`` (imported with
``flask runs import``, so they are stored as ingestion stores them), then times a dry
pass (``redact_stored(..., dry_run=True)``) in a fresh process per turn. With ``--against
DIR`` (another checkout of the repository, e.g. a worktree of ``main``) the turns
alternate between that checkout and this one over the same database, so both see the
same load: the figures are side by side, old and new in turns.

Usage::

    .venv/bin/python benchmarks/stored_redaction.py [--turns 5] [--passes 3] [--against DIR]

Prints, per checkout, the best and median seconds of a pass (the pass of least CPU time
of ``--passes`` in each turn, after one warm-up pass that compiles the rules and fills
caches) and ms per run: CPU time of the process (steadier than the wall clock on a
machine shared with other work) and the wall clock.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _data_file() -> Path:
    for base in (REPO.parent / "shared", REPO.parent.parent / "shared", Path("/work/shared")):
        path = base / "data" / "tau-bench" / "gpt-4o-airline.json"
        if path.is_file():
            return path
    raise SystemExit("no shared/data/tau-bench/gpt-4o-airline.json beside the repository")


def seed(url: str) -> None:
    sys.path.insert(0, str(REPO))
    from reviewapp import create_app
    from reviewapp.extensions import db

    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench", "TESTING": True})
    with app.app_context():
        db.create_all()
    runner = app.test_cli_runner()
    for args in (["workspaces", "create", "tau"],
                 ["runs", "import", str(_data_file()), "--workspace", "tau"]):
        out = runner.invoke(args=args)
        if out.exit_code != 0:
            raise SystemExit(out.output)


def measure(url: str, passes: int, batch_size: int) -> None:
    """One turn (run as a child in the checkout under test): seconds of each pass."""
    sys.path.insert(0, os.getcwd())
    from reviewapp import create_app
    from reviewapp.actors import Actor
    from reviewapp.extensions import db
    from reviewapp.services import stored_redaction

    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench", "TESTING": True})
    times, rows = [], 0
    with app.app_context():
        for i in range(passes + 1):
            began, cpu = time.perf_counter(), time.process_time()
            summary = stored_redaction.redact_stored(db.session, Actor.system_actor(), dry_run=True,
                                                     batch_size=batch_size)
            if i:  # the first pass warms up (rules compiled, caches filled)
                times.append((time.perf_counter() - began, time.process_time() - cpu))
            rows = summary.rows_scanned
            assert not summary.changed, dict(summary.changed)
    print(json.dumps({"times": times, "rows": rows, "runs": summary.scanned["diagnosis_run"],
                      "file": stored_redaction.__file__}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--against", type=Path, help="another checkout, timed in turns with this one")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure, args.passes, args.batch_size)
        return
    folder = Path(tempfile.mkdtemp(prefix="reviewapp-stored-redaction-bench-"))
    url = f"sqlite:///{folder / 'bench.db'}"
    seed(url)
    trees = {"this": REPO, **({"against": args.against.resolve()} if args.against else {})}
    best: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    runs = 0
    for turn in range(args.turns):
        for name, tree in (trees.items() if turn % 2 == 0 else reversed(trees.items())):
            out = subprocess.run(
                [sys.executable, str(REPO / "benchmarks" / "stored_redaction.py"), "--measure", url,
                 "--passes", str(args.passes), "--batch-size", str(args.batch_size)],
                cwd=tree, capture_output=True, text=True, check=True)
            got = json.loads(out.stdout.strip().splitlines()[-1])
            assert Path(got["file"]).is_relative_to(tree), got["file"]
            runs = got["runs"]
            best[name].append(min(got["times"], key=lambda t: t[1]))
            print(f"turn {turn + 1} {name:<8} {tree}: " + " ".join(f"{w:.3f} ({c:.3f} CPU)" for w, c in got["times"])
                  + f" s ({got['rows']} rows)", flush=True)
    for name, values in best.items():
        wall, cpu = [v[0] for v in values], [v[1] for v in values]
        print(f"{name:<8} {trees[name]}: a dry pass over {runs} runs: CPU best {min(cpu):.3f} s, median "
              f"{statistics.median(cpu):.3f} s ({1000 * statistics.median(cpu) / runs:.1f} ms a run); "
              f"wall median {statistics.median(wall):.3f} s")


if __name__ == "__main__":
    main()
