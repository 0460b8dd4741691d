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
        [--repeat 15] [--only runs,queue] [--pg-url postgresql://postgres@127.0.0.1:5432/test]
        [--keep DIR | --reuse DIR (--copy | --in-place)]

Building a million runs (5 million tool calls) takes a few minutes per database, so the
databases can be built once and measured many times:

``--keep DIR`` builds as usual but keeps what it built: SQLite in ``DIR/s<size>.sqlite``,
PostgreSQL in the database ``scale_<size>`` on ``--pg-url``'s server (refused if either
exists: drop it yourself), and writes ``DIR/<sqlite|postgres>-<size>.json`` (the
``scale_data.Built`` fields: url, runs, alpha, beta, sample_run_pk, sample_run_id,
newest as ISO 8601 UTC; plus build_s). The table is then measured as without it.

``--reuse DIR`` measures the databases those files name instead of building. Each is
first brought to the current schema (``flask db upgrade``; others' migrations may add
indexes or columns, then ``ANALYZE`` so the planners know them) and the output says how
long that took. Upgrading changes the kept database, so ``--reuse`` needs one of:

- ``--copy``: measure a copy, dropped at the end (SQLite: a file copy through SQLite's
  backup API, consistent even with a ``-wal`` file, in a temporary folder; PostgreSQL:
  ``CREATE DATABASE ... TEMPLATE <kept> STRATEGY FILE_COPY``, which waits while anyone
  else is connected to the kept database — retried for ``--copy-wait`` seconds). A
  million runs take about a minute to copy on either database.
- ``--in-place``: upgrade and measure the kept databases themselves.

    .venv/bin/python benchmarks/scale.py --keep /work/scale --db sqlite
    .venv/bin/python benchmarks/scale.py --reuse /work/scale --copy --repeat 25
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from benchmarks.load import pct, pg_reachable
from benchmarks.scale_data import PASSWORD, Built, app_config, build, migrate
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
    Probe("runs list, sort score, lowest first", lambda b: "/?sort=score_asc"),
    Probe("runs list, sort failed calls", lambda b: "/?sort=failed_desc"),
    Probe("runs list, sort tool calls", lambda b: "/?sort=calls_desc"),
    Probe("runs list, text search (no match)", lambda b: "/?q=zebrafinch"),
    # Every run's answer holds "pool"; the sample's run id is held by that run alone.
    Probe("runs list, text search (every run)", lambda b: "/?q=pool"),
    Probe("runs list, text search (one run)", lambda b: f"/?q={b.sample_run_id}"),
    Probe("run page", lambda b: f"/runs/{b.sample_run_pk}"),
    Probe("review queue, next run", lambda b: "/queue", (303, 200)),
    Probe("review queue, progress", lambda b: "/queue/progress"),
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
        if only and not any(part in probe.label for part in only.split(",")):
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


def _kept(directory: Path, db_kind: str, size: int) -> Path:
    return directory / f"{db_kind}-{size}.json"


def keep_target(db_kind: str, size: int, directory: Path, pg_url: str) -> str:
    """The URL ``--keep`` builds ``size`` runs at: ``DIR/s<size>.sqlite`` or the database
    ``scale_<size>`` (created empty here). Raises SystemExit if it exists already."""
    if db_kind == "sqlite":
        path = directory / f"s{size}.sqlite"
        if path.exists():
            raise SystemExit(f"{path} exists: remove it to build it again")
        return f"sqlite:///{path}"
    name = f"scale_{size}"
    server = make_url(pg_url).set(drivername="postgresql+psycopg")
    engine = create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            if conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"),
                            {"n": name}).first():
                raise SystemExit(f"database {name} exists: drop it to build it again")
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        engine.dispose()
    return server.set(database=name).render_as_string(hide_password=False)


def write_kept(built: Built, path: Path, build_s: float) -> None:
    """``--keep``'s description of a built database (fields in the module docstring)."""
    fields = dataclasses.asdict(built)
    fields["newest"] = built.newest.isoformat()
    fields["build_s"] = round(build_s)
    path.write_text(json.dumps(fields, indent=1) + "\n")


def read_kept(path: Path) -> Built:
    """The ``Built`` a ``--keep`` (or /work/scale/build_keep.py) file describes."""
    fields = json.loads(path.read_text())
    values = {f.name: fields[f.name] for f in dataclasses.fields(Built)}
    values["newest"] = datetime.fromisoformat(values["newest"])
    return Built(**values)


def copy_sqlite(source_url: str, folder: Path) -> str:
    """A consistent copy of the SQLite database at ``source_url`` in ``folder`` (SQLite's
    backup API: it reads the ``-wal`` too and never writes the source)."""
    source = make_url(source_url).database
    target = folder / Path(source).name
    with contextlib.closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as src, \
            contextlib.closing(sqlite3.connect(target)) as dst:
        src.backup(dst, pages=65536)
    return f"sqlite:///{target}"


@contextlib.contextmanager
def copied_postgres(source_url: str, wait_s: float) -> Iterator[str]:
    """A copy of the PostgreSQL database at ``source_url`` (``CREATE DATABASE ... TEMPLATE``,
    file copy) on its server, dropped on exit. PostgreSQL refuses while another session is
    connected to the source: retried every 2 s for ``wait_s`` seconds, then the error."""
    source = make_url(source_url)
    name = f"{source.database}_copy_{uuid.uuid4().hex[:8]}"
    admin = create_engine(source.set(database="postgres"), isolation_level="AUTOCOMMIT")
    deadline = time.monotonic() + wait_s
    try:
        while True:
            try:
                with admin.connect() as conn:
                    conn.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{source.database}" '
                                      "STRATEGY FILE_COPY"))
                break
            except OperationalError as error:
                if "being accessed by other users" not in str(error) \
                        or time.monotonic() > deadline:
                    raise
                time.sleep(2)
        yield source.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                              "WHERE datname = :n"), {"n": name})
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        admin.dispose()


def _revision(url: str) -> str:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
    finally:
        engine.dispose()


def upgrade(url: str) -> str:
    """``flask db upgrade`` on ``url``, then ``ANALYZE`` if the revision moved (new
    indexes need their statistics). Returns what happened, with the times in s."""
    before = _revision(url)
    t0 = time.perf_counter()
    migrate(url)
    upgraded = time.perf_counter() - t0
    after = _revision(url)
    if after == before:
        return f"schema at {after} already (flask db upgrade: {upgraded:.1f} s)"
    t0 = time.perf_counter()
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "postgresql":
                conn.execution_options(isolation_level="AUTOCOMMIT").execute(text("ANALYZE"))
            else:
                conn.execute(text("ANALYZE"))
                conn.commit()
    finally:
        engine.dispose()
    return (f"schema {before} -> {after}: flask db upgrade {upgraded:.1f} s, "
            f"ANALYZE {time.perf_counter() - t0:.1f} s")


def reused(stack: contextlib.ExitStack, db_kind: str, size: int,
           args: argparse.Namespace) -> Built:
    """The kept database of ``size`` runs (``--reuse``), or a copy of it (``--copy``),
    brought to the current schema."""
    built = read_kept(_kept(Path(args.reuse), db_kind, size))
    url = built.url
    if args.copy:
        t0 = time.perf_counter()
        if db_kind == "sqlite":
            folder = Path(stack.enter_context(
                tempfile.TemporaryDirectory(prefix="reviewapp-scale-")))
            url = copy_sqlite(built.url, folder)
        else:
            url = stack.enter_context(copied_postgres(built.url, args.copy_wait))
        print(f"{db_kind}: copied {size:,} runs in {time.perf_counter() - t0:.0f} s",
              flush=True)
    print(f"{db_kind} {size:,}{' (copy)' if args.copy else ' (in place)'}: {upgrade(url)}",
          flush=True)
    return dataclasses.replace(built, url=url)


def built_here(stack: contextlib.ExitStack, db_kind: str, size: int,
               args: argparse.Namespace) -> Built:
    """A database of ``size`` runs built now: temporary, or kept (``--keep``)."""
    if args.keep:
        url = keep_target(db_kind, size, Path(args.keep), args.pg_url)
    elif db_kind == "postgres":
        url = stack.enter_context(private_postgres(args.pg_url, "reviewapp_scale"))
    else:
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="reviewapp-scale-"))
        url = f"sqlite:///{Path(folder) / 'scale.sqlite'}"
    t0 = time.perf_counter()
    built = build(url, size)
    elapsed = time.perf_counter() - t0
    print(f"{db_kind}: built {size:,} runs in {elapsed:.0f} s", flush=True)
    if args.keep:
        write_kept(built, _kept(Path(args.keep), db_kind, size), elapsed)
    return built


def run(db_kind: str, sizes: list[int], args: argparse.Namespace) -> None:
    with contextlib.ExitStack() as stack:
        obtain = reused if args.reuse else built_here
        builds = [obtain(stack, db_kind, size, args) for size in sizes]
        measure(db_kind, builds, args.repeat, args.only)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,1000000",
                        help="run counts, comma-separated, smallest first")
    parser.add_argument("--db", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--only", help="measure only requests whose label contains this "
                        "(or one of these, comma-separated)")
    parser.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--keep", metavar="DIR", help="keep the databases built (docstring)")
    parser.add_argument("--reuse", metavar="DIR",
                        help="measure the databases DIR/<kind>-<size>.json name (docstring)")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--copy", action="store_true", help="with --reuse: upgrade and measure "
                     "a copy, dropped at the end")
    how.add_argument("--in-place", action="store_true", help="with --reuse: upgrade and "
                     "measure the kept databases themselves")
    parser.add_argument("--copy-wait", type=float, default=300,
                        help="seconds to retry a PostgreSQL copy while its source is in use")
    args = parser.parse_args()
    if args.reuse and args.keep:
        parser.error("--keep builds, --reuse does not: one of them")
    if args.reuse and not (args.copy or args.in_place):
        parser.error("--reuse upgrades the schema first: say --copy or --in-place")
    if (args.copy or args.in_place) and not args.reuse:
        parser.error("--copy and --in-place go with --reuse")
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
