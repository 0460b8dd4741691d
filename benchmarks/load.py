"""Mixed load against reviewapp under gunicorn (2 sync workers, 127.0.0.1, free port), on
SQLite (WAL) and / or PostgreSQL, each in a fresh database (PostgreSQL: a private
database created on --pg-url's server and dropped afterwards).

Set-up per database: ``flask db upgrade``, the demo runs, four reviewers with known
passwords, an ingest token, the tau-bench airline file imported (200 runs) and one
RUNNING run per client thread. Then ``--concurrency`` threads (default 16) drive a
bounded mix for ``--seconds`` (default 60):

* 70 % page views: the runs list (``/``) or a run page (``/runs/<pk>``), half each;
* 20 % feedback: the thumbs form (``POST /feedback``, CSRF token from the login page,
  as a browser without JavaScript), a fresh comment each time;
* 10 % tool events: ``POST /api/ingest/tool-events`` with the bearer token, one
  ``started`` event with a new call id.

It prints requests/s, p50 / p99 per kind and the error count (anything but 200 / 303
and connection errors; must be 0), then checks that every acknowledged write is in the
database: one ``feedback_event`` per acknowledged submit (each carries a new comment, so
each is one history entry) and one ``tool_call_audit`` row per acknowledged event.
Exit status 1 on any error or missing write.

    .venv/bin/python benchmarks/load.py [--seconds 60] [--concurrency 16]
                                        [--db sqlite|postgres|both]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import requests
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BIN = Path(sys.executable).parent

from benchmarks._servers import free_port

PASSWORD = "load-test-password-1"
REVIEWERS = 4
MIX = (("page", 70), ("feedback", 20), ("event", 10))
CSRF_INPUT = re.compile(r'name="csrf_token"[^>]*value="([^"]+)"')


def tau_bench_file() -> Path | None:
    for candidate in (os.environ.get("REVIEWAPP_SHARED_DATA"), REPO.parent / "shared" / "data",
                      "/work/shared/data"):
        if candidate and Path(candidate, "tau-bench", "gpt-4o-airline.json").is_file():
            return Path(candidate, "tau-bench", "gpt-4o-airline.json")
    return None


@dataclass
class Setup:
    env: dict[str, str]
    token: str
    usernames: list[str]
    run_pks: list[int]
    targets: list[int]  # final assistant messages (answer-level thumbs)
    running: list[str]  # run_id of one RUNNING run per thread


def prepare(url: str, concurrency: int) -> Setup:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVIEWAPP_")}
    env.update({"REVIEWAPP_DATABASE_URL": url, "REVIEWAPP_SECRET_KEY": "load-bench",
                "FLASK_APP": "app.py"})
    subprocess.run([str(BIN / "flask"), "db", "upgrade"], cwd=REPO, env=env, check=True,
                   capture_output=True)
    script = f"""
from reviewapp import create_app
from reviewapp.actors import Actor, Role
from reviewapp.extensions import db
from reviewapp.services import admin, demo, runs
app = create_app()
with app.app_context():
    system = Actor.system_actor()
    ws = admin.create_workspace(db.session, system, demo.DEMO_SLUG, "Demo on-call")
    for i in range({REVIEWERS}):
        admin.create_user(db.session, system, f"loader{{i}}", {PASSWORD!r}, ws.id, Role.REVIEWER)
    demo.load(db.session, system, ws.id)
    for t in range({concurrency}):
        runs.upsert_run(db.session, system, ws.id, f"load-running-{{t}}",
                        {{"query": "live run", "status": "RUNNING", "kind": "aiops"}})
    print(admin.create_token(db.session, system, ws.id, "load").secret)
"""
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, check=True,
                         capture_output=True, text=True)
    token = out.stdout.strip().splitlines()[-1]
    data = tau_bench_file()
    if data is not None:
        subprocess.run([str(BIN / "flask"), "runs", "import", "--workspace", "demo", str(data)],
                       cwd=REPO, env=env, check=True, capture_output=True)
    else:
        print("notice: tau-bench data not found; demo runs only", file=sys.stderr)
    engine = create_engine(url)
    with engine.connect() as conn:
        run_pks = list(conn.execute(text(
            "SELECT id FROM diagnosis_run WHERE status <> 'RUNNING' ORDER BY id")).scalars())
        targets = list(conn.execute(text(
            "SELECT max(m.id) FROM message m JOIN diagnosis_run r ON r.id = m.run_pk "
            "WHERE m.role = 'assistant' AND r.kind = 'chat' GROUP BY m.run_pk")).scalars())
    engine.dispose()
    return Setup(env, token, [f"loader{i}" for i in range(REVIEWERS)], run_pks, targets,
                 [f"load-running-{t}" for t in range(concurrency)])


def login(base: str, username: str) -> tuple[dict[str, str], str]:
    """Log in through the form (CSRF token from the login page); (cookies, csrf token)."""
    with requests.Session() as s:
        page = s.get(f"{base}/login", timeout=30)
        csrf = CSRF_INPUT.search(page.text).group(1)
        r = s.post(f"{base}/login", data={"username": username, "password": PASSWORD,
                                          "csrf_token": csrf}, allow_redirects=False, timeout=30)
        if r.status_code != 303:
            raise RuntimeError(f"login of {username} failed: {r.status_code}")
        runs_page = s.get(f"{base}/", timeout=30)
        return s.cookies.get_dict(), CSRF_INPUT.search(runs_page.text).group(1)


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    acked_comments: list[str] = field(default_factory=list)
    acked_calls: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def drive(base: str, setup: Setup, seconds: float, concurrency: int) -> tuple[Stats, float]:
    sessions = {name: login(base, name) for name in setup.usernames}
    stats = Stats()
    barrier = threading.Barrier(concurrency + 1)
    window: dict[str, float] = {}
    kinds = [k for k, _ in MIX]
    weights = [w for _, w in MIX]

    def worker(t: int) -> None:
        rng = random.Random(t)
        name = setup.usernames[t % len(setup.usernames)]
        cookies, csrf = sessions[name]
        s = requests.Session()
        s.cookies.update(cookies)
        bearer = {"Authorization": f"Bearer {setup.token}"}
        n = 0
        local: dict[str, list[float]] = defaultdict(list)
        barrier.wait()
        while time.monotonic() < window["end"]:
            kind = rng.choices(kinds, weights)[0]
            n += 1
            started = time.perf_counter()
            try:
                if kind == "page":
                    if rng.random() < 0.5:
                        r, ok = s.get(f"{base}/", timeout=60), (200,)
                    else:
                        r = s.get(f"{base}/runs/{rng.choice(setup.run_pks)}", timeout=60)
                        ok = (200,)
                elif kind == "feedback":
                    comment = f"load {t}-{n}"
                    r = s.post(f"{base}/feedback", allow_redirects=False, timeout=60, data={
                        "csrf_token": csrf, "target_type": "chat_message",
                        "target_id": rng.choice(setup.targets), "subject_id": "",
                        "rating": rng.choice(("positive", "negative")), "comment": comment})
                    ok = (303,)
                    if r.status_code == 303:
                        with stats.lock:
                            stats.acked_comments.append(comment)
                else:
                    call_id = f"load-{t}-{n}"
                    r = s.post(f"{base}/api/ingest/tool-events", headers=bearer, timeout=60,
                               json={"id": call_id, "run_id": setup.running[t],
                                     "event": "started", "tool_name": "search_logs",
                                     "arguments": {"query": f"error {n}"}})
                    ok = (200,)
                    if r.status_code == 200 and r.json()["results"][0]["result"] == "created":
                        with stats.lock:
                            stats.acked_calls.append(call_id)
                status = r.status_code
            except requests.RequestException as exc:
                status, ok = f"{type(exc).__name__}", ()
            local[kind].append((time.perf_counter() - started) * 1000)
            if status not in ok:
                with stats.lock:
                    stats.errors.append(f"{kind}: {status}")
        with stats.lock:
            for kind, values in local.items():
                stats.latencies[kind].extend(values)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(concurrency)]
    for thread in threads:
        thread.start()
    began = time.monotonic()
    window["end"] = began + seconds
    barrier.wait()
    for thread in threads:
        thread.join()
    return stats, time.monotonic() - began


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def verify(url: str, stats: Stats) -> list[str]:
    """Every acknowledged write is stored: returns the problems (empty when all are)."""
    engine = create_engine(url)
    with engine.connect() as conn:
        afters = conn.execute(text("SELECT after FROM feedback_event")).scalars().all()
        calls = set(conn.execute(text(
            "SELECT id FROM tool_call_audit WHERE id LIKE 'load-%'")).scalars())
    engine.dispose()
    comments = []
    for after in afters:
        value = (json.loads(after) if isinstance(after, str) else after) or {}
        comment = value.get("comment")
        if isinstance(comment, str) and comment.startswith("load "):
            comments.append(comment)
    stored = set(comments)
    problems = []
    missing_feedback = [c for c in stats.acked_comments if c not in stored]
    missing_calls = [c for c in stats.acked_calls if c not in calls]
    if missing_feedback or len(comments) != len(stats.acked_comments):
        problems.append(f"feedback: {len(stats.acked_comments)} acknowledged, "
                        f"{len(comments)} history rows, {len(missing_feedback)} missing")
    if missing_calls or len(calls) != len(stats.acked_calls):
        problems.append(f"tool events: {len(stats.acked_calls)} acknowledged, "
                        f"{len(calls)} rows, {len(missing_calls)} missing")
    print(f"  verified: {len(stats.acked_comments)} acknowledged feedback submits -> "
          f"{len(comments)} feedback_event rows; {len(stats.acked_calls)} acknowledged tool "
          f"events -> {len(calls)} tool_call_audit rows")
    return problems


def run_once(db_kind: str, args: argparse.Namespace) -> bool:
    folder = Path(tempfile.mkdtemp(prefix=f"reviewapp-load-{db_kind}-"))
    pg_name = None
    if db_kind == "postgres":
        admin_url = make_url(args.pg_url).set(drivername="postgresql+psycopg")
        pg_name = f"reviewapp_load_{uuid.uuid4().hex[:10]}"
        admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{pg_name}"'))
        url = admin_url.set(database=pg_name).render_as_string(hide_password=False)
    else:
        url = f"sqlite:///{folder / 'reviewapp.sqlite'}"
    server = None
    try:
        setup = prepare(url, args.concurrency)
        port = free_port()
        log = open(folder / "gunicorn.log", "wb")  # noqa: SIM115 - closed below
        server = subprocess.Popen(
            [str(BIN / "gunicorn"), "--workers", str(args.workers), "--bind",
             f"127.0.0.1:{port}", "--timeout", "120", "app:app"],
            cwd=REPO, env=setup.env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{base}/api/health", timeout=5).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.2)
        for _ in range(2 * args.workers):  # both workers import the app before timing
            requests.get(f"{base}/login", timeout=30)
        print(f"=== {db_kind}: gunicorn {args.workers} workers, {args.concurrency} clients, "
              f"{args.seconds:g} s, {len(setup.run_pks)} runs")
        stats, elapsed = drive(base, setup, args.seconds, args.concurrency)
        total = sum(len(v) for v in stats.latencies.values())
        print(f"  requests: {total} in {elapsed:.1f} s = {total / elapsed:.1f} req/s; "
              f"errors: {len(stats.errors)}")
        for kind, _ in MIX:
            values = stats.latencies.get(kind, [])
            print(f"  {kind:<9} {len(values):>6} req {len(values) / elapsed:>7.1f} req/s  "
                  f"p50 {pct(values, 50):>7.1f} ms  p99 {pct(values, 99):>7.1f} ms")
        if stats.errors:
            print(f"  first errors: {stats.errors[:10]}")
        problems = verify(url, stats)
        for problem in problems:
            print(f"  MISSING WRITES: {problem}")
        return not stats.errors and not problems
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        if pg_name is not None:
            with admin.connect() as conn:
                conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                  "WHERE datname = :n"), {"n": pg_name})
                conn.execute(text(f'DROP DATABASE IF EXISTS "{pg_name}"'))
            admin.dispose()
        shutil.rmtree(folder, ignore_errors=True)


def pg_reachable(url: str) -> bool:
    engine = create_engine(make_url(url).set(drivername="postgresql+psycopg"),
                           connect_args={"connect_timeout": 5})
    try:
        with engine.connect():
            return True
    except Exception:  # noqa: BLE001 - any failure means "not reachable"
        return False
    finally:
        engine.dispose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--db", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--pg-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    kinds = ("sqlite", "postgres") if args.db == "both" else (args.db,)
    if args.db == "both" and not pg_reachable(args.pg_url):
        print(f"notice: PostgreSQL at {args.pg_url} cannot be reached; SQLite only "
              "(--db postgres makes it an error)", file=sys.stderr)
        kinds = ("sqlite",)
    ok = True
    for kind in kinds:
        ok &= run_once(kind, args)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
