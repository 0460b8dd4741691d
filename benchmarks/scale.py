"""Scale benchmark of issue 18: every page and API of its table at a small and a large
number of runs, on SQLite and PostgreSQL, for a two-workspace admin and a one-workspace
reviewer. Prints figures; asserts nothing.

Each database is built by ``benchmarks.scale_data`` (the issue's shape, bulk inserts):
SQLite in a temporary file, PostgreSQL in a scratch database created on ``--pg-url``'s
server and dropped at the end. Requests go through the WSGI app (Flask test client,
logged in through the login form), the sizes measured in alternation so a busy machine
slows both alike, after warm-up. For each request and user: p50 / p95 in ms at each size,
the ratio of the p50s (largest / smallest; target <= 1.3) and the SQL statements the
request ran at each size.

    .venv/bin/python benchmarks/scale.py --sizes 10000,1000000 [--db sqlite|postgres|both]
        [--repeat 15] [--only runs] [--pg-url postgresql://postgres@127.0.0.1:5432/test]

Building a million runs (5 million tool calls) takes a few minutes per database.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from sqlalchemy import event

from benchmarks.load import pct, pg_reachable
from benchmarks.scale_data import PASSWORD, Built, app_config, build
from tests.databases import private_postgres

USERS = ("admin", "reviewer")


@dataclass(frozen=True)
class Probe:
    """One request of the table: a label and its path, given the built database."""

    label: str
    path: Callable[[Built], str]
    ok: tuple[int, ...] = (200,)


PROBES = (
    Probe("runs list, default", lambda b: "/"),
    Probe("runs list, kind=aiops", lambda b: "/?kind=aiops"),
    Probe("runs list, status=FAILED", lambda b: "/?status=FAILED"),
    Probe("runs list, verdict PASS + score>=50", lambda b: "/?verdict=PASS&score_min=50"),
    Probe("runs list, reviewed by me", lambda b: "/?reviewed=mine"),
    Probe("runs list, not reviewed by me", lambda b: "/?reviewed=not_mine"),
    Probe("runs list, sort score", lambda b: "/?sort=score_desc"),
    Probe("runs list, text search (no match)", lambda b: "/?q=zebrafinch"),
    Probe("run page", lambda b: f"/runs/{b.sample_run_pk}"),
    Probe("review queue, next run", lambda b: "/queue", (303, 200)),
    Probe("dashboard, all time", lambda b: "/dashboard/", (200, 403)),
    Probe("dashboard, last 7 days",
          lambda b: f"/dashboard/?date_from={(b.newest - timedelta(days=6)).date()}", (200, 403)),
    Probe("triage list", lambda b: "/triage/", (200, 403)),
    Probe("cases search", lambda b: "/cases/?q=deploy"),
    Probe("trace API", lambda b: f"/api/runs/{b.sample_run_id}/trace"),
)


@dataclass
class Client:
    """A logged-in test client of one database and a counter of its SQL statements."""

    client: Any
    statements: list[int]


def clients_for(built: Built) -> dict[str, Client]:
    from reviewapp import create_app
    from reviewapp.extensions import db

    app = create_app(app_config(built.url))
    counter = [0]
    with app.app_context():
        event.listen(db.engine, "before_cursor_execute",
                     lambda *args, **kwargs: counter.__setitem__(0, counter[0] + 1))
    out = {}
    for user in USERS:
        client = app.test_client()
        response = client.post("/login", data={"username": user, "password": PASSWORD})
        if response.status_code != 303:
            raise RuntimeError(f"login of {user} failed: {response.status_code}")
        out[user] = Client(client, counter)
    return out


def timed(c: Client, path: str, ok: tuple[int, ...]) -> tuple[float, int, int]:
    """(ms, statements, status) of one GET."""
    before = c.statements[0]
    t0 = time.perf_counter()
    response = c.client.get(path)
    elapsed = (time.perf_counter() - t0) * 1000
    if response.status_code not in ok:
        raise RuntimeError(f"GET {path}: {response.status_code}")
    return elapsed, c.statements[0] - before, response.status_code


def measure(db_kind: str, builds: list[Built], repeat: int, only: str | None) -> None:
    sides = [clients_for(b) for b in builds]
    sizes = " vs ".join(f"{b.runs:,}" for b in builds)
    print(f"\n=== {db_kind}: {sizes} runs; p50 / p95 ms over {repeat} requests; "
          f"ratio = p50 at {builds[-1].runs:,} / p50 at {builds[0].runs:,}; statements per request")
    head = " | ".join(f"{b.runs:>9,} p50/p95" for b in builds)
    print(f"{'request':<38} {'user':<8} | {head} | ratio | statements")
    for probe in PROBES:
        if only and only not in probe.label:
            continue
        for user in USERS:
            paths = [probe.path(b) for b in builds]
            times: list[list[float]] = [[] for _ in builds]
            statements: list[int] = [0] * len(builds)
            status = 0
            try:
                for side, path in zip(sides, paths):  # warm
                    for _ in range(2):
                        timed(side[user], path, probe.ok)
                for _ in range(repeat):
                    for k, (side, path) in enumerate(zip(sides, paths)):
                        ms, statements[k], status = timed(side[user], path, probe.ok)
                        times[k].append(ms)
            except RuntimeError as error:
                print(f"{probe.label:<38} {user:<8} | failed: {error}")
                continue
            if status == 403:
                print(f"{probe.label:<38} {user:<8} | forbidden for this user (403)")
                continue
            cells = " | ".join(f"{statistics.median(t):>8.1f} / {pct(t, 95):>6.1f}" for t in times)
            ratio = statistics.median(times[-1]) / statistics.median(times[0])
            counts = "/".join(str(n) for n in statements)
            print(f"{probe.label:<38} {user:<8} | {cells} | {ratio:5.2f} | {counts}", flush=True)


def run(db_kind: str, sizes: list[int], args: argparse.Namespace) -> None:
    with contextlib.ExitStack() as stack:
        builds = []
        for size in sizes:
            if db_kind == "postgres":
                url = stack.enter_context(private_postgres(args.pg_url, "reviewapp_scale"))
            else:
                folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="reviewapp-scale-"))
                url = f"sqlite:///{Path(folder) / 'scale.sqlite'}"
            t0 = time.perf_counter()
            builds.append(build(url, size))
            print(f"{db_kind}: built {size:,} runs in {time.perf_counter() - t0:.0f} s", flush=True)
        measure(db_kind, builds, args.repeat, args.only)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,1000000",
                        help="run counts, comma-separated, smallest first")
    parser.add_argument("--db", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--only", help="measure only requests whose label contains this")
    parser.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    sizes = sorted(int(s.replace("_", "")) for s in args.sizes.split(","))
    kinds = ("sqlite", "postgres") if args.db == "both" else (args.db,)
    if "postgres" in kinds and not pg_reachable(args.pg_url):
        print(f"PostgreSQL at {args.pg_url} cannot be reached", file=sys.stderr)
        return 1
    for kind in kinds:
        run(kind, sizes, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
