"""Benchmark: reviewapp's target-feedback upsert against a bare INSERT … ON CONFLICT app.

    .venv/bin/python benchmarks/feedback.py [--seconds 5] [--rounds 3] [--concurrency 8]
                                            [--database-url postgresql://...]

Both servers run under gunicorn with 2 sync workers on 127.0.0.1 and the same database
settings (SQLite in WAL mode with the app's pragmas, in a temporary folder, unless a
PostgreSQL URL is given).

- **reviewapp**: ``PUT /api/feedback/targets`` as a logged-in reviewer: login-session
  cookie, ``X-CSRFToken`` header, validation, the owner check through the target's run,
  the upsert and its feedback event, all in one transaction.
- **reference**: a bare Flask app (no extensions, no ORM, no auth) that parses the same
  JSON body and runs one ``INSERT … ON CONFLICT DO UPDATE`` per request.

Each of the ``--concurrency`` clients rates its own diagnostic step and alternates
positive / negative (with a reason and a comment), so every request really changes a row
and reviewapp writes an event every time. Measured rounds of ``--seconds`` alternate
between the targets (reference, reviewapp, floor, reference, ...) after a warm-up of each.
A third, "floor", measures the same reviewapp server answering ``GET /api/health`` (one
``SELECT 1``, no login lookup): the cost of the app's request stack (Flask-Login,
Flask-Limiter, session cookie, security headers) before any feedback work.
Printed: requests per second, p50 / p99 latency (ms) and errors of each, the servers' own
CPU per request (Linux ``/proc``: gunicorn master and workers, user + system; the clients
share the machine, so the rates move with everything else on it, the CPU per request
much less), and the ratios.
Targets (issue #5): rate >= 50 % of the reference's, p99 <= 2 x the reference's.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import secrets
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BIN = Path(sys.executable).parent

from benchmarks._servers import free_port

PASSWORD = "benchmark-password-1"

REFERENCE_SQL = """
INSERT INTO ref_feedback (author_id, target_type, target_id, subject_key, rating, reason,
                          comment, correction, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (author_id, target_type, target_id, subject_key) DO UPDATE SET
  rating = excluded.rating, reason = excluded.reason, comment = excluded.comment,
  correction = excluded.correction, updated_at = excluded.updated_at
"""

REFERENCE_DDL = """
CREATE TABLE IF NOT EXISTS ref_feedback (
  id INTEGER PRIMARY KEY, author_id INTEGER NOT NULL, target_type VARCHAR(32) NOT NULL,
  target_id INTEGER NOT NULL, subject_key VARCHAR(160) NOT NULL, rating VARCHAR(16) NOT NULL,
  reason VARCHAR(80), comment TEXT, correction TEXT, created_at VARCHAR(40) NOT NULL,
  updated_at VARCHAR(40) NOT NULL,
  UNIQUE (author_id, target_type, target_id, subject_key))
"""


# --- the reference app (loaded by gunicorn: ``feedback:reference_app()``) -----------------


def reference_app() -> Any:
    """A bare Flask app: one INSERT … ON CONFLICT per ``PUT /feedback``."""
    from datetime import datetime

    from flask import Flask, jsonify, request

    url = os.environ["BENCH_REFERENCE_DB"]
    app = Flask("reference")
    state: dict[str, Any] = {}

    def connection() -> Any:
        if "conn" not in state:
            if url.startswith("postgresql"):
                import psycopg

                state["conn"] = psycopg.connect(url)
                state["sql"] = REFERENCE_SQL.replace("?", "%s")
            else:
                conn = sqlite3.connect(url, isolation_level=None, check_same_thread=False)
                for pragma in ("journal_mode=WAL", "foreign_keys=ON", "busy_timeout=15000",
                               "synchronous=NORMAL"):
                    conn.execute(f"PRAGMA {pragma}")
                state["conn"] = conn
                state["sql"] = REFERENCE_SQL
        return state["conn"]

    @app.get("/health")
    def health() -> Any:
        return jsonify({"status": "ok"})

    @app.put("/feedback")
    def upsert() -> Any:
        body = request.get_json()
        conn = connection()
        now = datetime.now(UTC).isoformat()
        params = (1, body["targetType"], body["targetId"], body.get("subjectId") or "",
                  body["rating"], body.get("reason"), body.get("comment"), body.get("correction"),
                  now, now)
        if url.startswith("postgresql"):
            with conn.transaction():
                conn.execute(state["sql"], params)
        else:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(state["sql"], params)
            conn.execute("COMMIT")
        return jsonify({"ok": True})

    return app


# --- set-up ---------------------------------------------------------------------------------


def prepare_reviewapp(url: str, secret_key: str, clients: int) -> tuple[str, list[int]]:
    """Schema, a workspace, a reviewer and an AIOps run with one step per client."""
    from reviewapp import create_app
    from reviewapp.actors import Actor, Role
    from reviewapp.extensions import db
    from reviewapp.services import admin, runs

    app = create_app({"DATABASE_URL": url, "SECRET_KEY": secret_key})
    with app.app_context():
        db.drop_all()
        db.create_all()
        system = Actor.system_actor()
        ws = admin.create_workspace(db.session, system, "bench", "Benchmark")
        user = admin.create_user(db.session, system, "reviewer", PASSWORD, ws.id, Role.REVIEWER)
        doc = {
            "kind": "aiops", "session_id": "bench-session", "query": "Alert: disk full",
            "answer": "Log rotation stopped.", "status": "SUCCESS",
            "steps": [{"id": f"s{i}", "name": f"Step {i}"} for i in range(clients)],
            "report": {"content": "# Report"},
        }
        run = runs.upsert_run(db.session, system, ws.id, "bench-run", doc).run
        step_ids = [s.id for s in run.steps]
        username = user.username
        db.engine.dispose()
    return username, step_ids


def prepare_reference(url: str) -> None:
    if url.startswith("postgresql"):
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS ref_feedback")
            conn.execute(REFERENCE_DDL.replace("INTEGER PRIMARY KEY", "SERIAL PRIMARY KEY"))
        return
    conn = sqlite3.connect(url)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(REFERENCE_DDL)
    conn.commit()
    conn.close()


def start_gunicorn(spec: str, port: int, env: dict[str, str], chdir: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [str(BIN / "gunicorn"), "--workers", "2", "--bind", f"127.0.0.1:{port}",
         "--chdir", str(chdir), "--log-level", "warning", "--no-control-socket", spec],
        env={**os.environ, **env}, cwd=str(chdir),
    )


def wait_ready(port: int, path: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server on port {port} exited with {proc.returncode}")
        try:
            status, _, _ = request(port, "GET", path)
            if status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"server on port {port} did not answer {path}")


def request(port: int, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, bytes, list[str]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        data = response.read()
        return response.status, data, response.headers.get_all("Set-Cookie") or []
    finally:
        conn.close()


class Browser:
    """Just enough of a browser to log in and keep the session cookie."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookies: dict[str, str] = {}

    def call(self, method: str, path: str, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        all_headers = dict(headers or {})
        if self.cookies:
            all_headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        status, data, set_cookies = request(self.port, method, path, body, all_headers)
        for raw in set_cookies:
            jar = SimpleCookie()
            jar.load(raw)
            for name, morsel in jar.items():
                self.cookies[name] = morsel.value
        return status, data

    def login(self, username: str) -> str:
        """Log in through the form; returns the page's X-CSRFToken value."""
        _, page = self.call("GET", "/login")
        token = re.search(rb'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
        form = f"username={username}&password={PASSWORD}&csrf_token={token.decode()}".encode()
        status, _ = self.call("POST", "/login", form,
                              {"Content-Type": "application/x-www-form-urlencoded"})
        if status != 303:
            raise SystemExit(f"login failed with HTTP {status}")
        _, page = self.call("GET", "/")
        return re.search(rb'"X-CSRFToken": "([^"]+)"', page).group(1).decode()


# --- load -----------------------------------------------------------------------------------


def load(port: int, path: str, headers: dict[str, str], step_ids: list[int],
         seconds: float, method: str = "PUT") -> tuple[list[float], int, int]:
    """``len(step_ids)`` clients, each rating its own step in a loop for ``seconds``
    (``method`` GET: plain GETs of ``path`` instead). Returns (latencies in ms, requests,
    errors)."""
    latencies: list[list[float]] = [[] for _ in step_ids]
    errors = [0] * len(step_ids)
    stop = time.monotonic() + seconds
    barrier = threading.Barrier(len(step_ids))

    def client(i: int) -> None:
        barrier.wait()
        n = 0
        while time.monotonic() < stop:
            n += 1
            negative = n % 2 == 0
            body = json.dumps({
                "targetType": "diagnostic_step", "targetId": step_ids[i],
                "rating": "negative" if negative else "positive",
                "reason": "incomplete" if negative else None,
                "comment": f"round {n}: 检查日志 🔍" if negative else None,
            }).encode()
            started = time.perf_counter()
            try:
                if method == "GET":
                    status, _, _ = request(port, "GET", path, None, headers)
                else:
                    status, _, _ = request(port, method, path, body,
                                           {**headers, "Content-Type": "application/json"})
            except OSError:
                status = 0
            latencies[i].append((time.perf_counter() - started) * 1000)
            if status != 200:
                errors[i] += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(len(step_ids))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    flat = [x for per in latencies for x in per]
    return flat, len(flat), sum(errors)


def server_cpu_seconds(proc: subprocess.Popen) -> float | None:
    """User + system CPU seconds of a gunicorn master and its workers so far (Linux
    ``/proc``; ``None`` elsewhere): per request, the server's own cost, which the other
    load on a shared machine moves far less than the rates."""
    try:
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        ticks = 0
        for pid in [str(proc.pid), *children]:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
    except OSError:
        return None
    return ticks / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = max(0, min(len(ordered) - 1, int(-(-p * len(ordered) // 100)) - 1))
    return ordered[index]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="length of one measured round")
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds per server")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--database-url", default=None,
                        help="a scratch PostgreSQL database (its tables are dropped and recreated; "
                             "both apps use it); default: SQLite files in a temp dir")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-feedback-") as tmp:
        if args.database_url:
            app_url = ref_url = args.database_url
        else:
            app_url = f"sqlite:///{Path(tmp) / 'reviewapp.sqlite'}"
            ref_url = str(Path(tmp) / "reference.sqlite")
        secret_key = secrets.token_hex(32)
        username, step_ids = prepare_reviewapp(app_url, secret_key, args.concurrency)
        prepare_reference(ref_url)

        app_port, ref_port = free_port(), free_port()
        servers = {
            "reviewapp": start_gunicorn("app:app", app_port, {
                "REVIEWAPP_DATABASE_URL": app_url, "REVIEWAPP_SECRET_KEY": secret_key,
            }, REPO),
            "reference": start_gunicorn("feedback:reference_app()", ref_port, {
                "BENCH_REFERENCE_DB": ref_url,
            }, Path(__file__).resolve().parent),
        }
        try:
            wait_ready(app_port, "/api/health", servers["reviewapp"])
            wait_ready(ref_port, "/health", servers["reference"])
            browser = Browser(app_port)
            csrf = browser.login(username)
            app_headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in browser.cookies.items()),
                           "X-CSRFToken": csrf}
            # "floor": the same reviewapp server answering GET /api/health (no login
            # lookup, one SELECT 1): what the app's stack costs before any feedback work.
            targets = {
                "reference": (ref_port, "/feedback", {}, "PUT"),
                "reviewapp": (app_port, "/api/feedback/targets", app_headers, "PUT"),
                "floor": (app_port, "/api/health", app_headers, "GET"),
            }
            for name, (port, path, headers, method) in targets.items():  # warm-up
                _, _, errors = load(port, path, headers, step_ids, 1.0, method)
                if errors:
                    raise SystemExit(f"{name}: {errors} errors during warm-up")

            totals: dict[str, dict[str, Any]] = {
                name: {"latencies": [], "requests": 0, "errors": 0, "seconds": 0.0}
                for name in targets
            }
            for round_no in range(args.rounds):
                for name in ("reference", "reviewapp", "floor"):
                    port, path, headers, method = targets[name]
                    server = servers["reference" if name == "reference" else "reviewapp"]
                    cpu_before = server_cpu_seconds(server)
                    started = time.monotonic()
                    latencies, count, errors = load(port, path, headers, step_ids, args.seconds,
                                                    method)
                    elapsed = time.monotonic() - started
                    cpu_after = server_cpu_seconds(server)
                    total = totals[name]
                    total["latencies"] += latencies
                    total["requests"] += count
                    total["errors"] += errors
                    total["seconds"] += elapsed
                    if cpu_before is not None and cpu_after is not None:
                        total.setdefault("cpu", 0.0)
                        total["cpu"] += cpu_after - cpu_before
                    print(f"round {round_no + 1} {name:9s}: {count / elapsed:7.1f} req/s  "
                          f"p99 {percentile(latencies, 99):6.1f} ms  errors {errors}")
        finally:
            for proc in servers.values():
                proc.terminate()
            for proc in servers.values():
                proc.wait(timeout=30)

    database = "PostgreSQL" if args.database_url else "SQLite (WAL)"
    print(f"\nfeedback upsert, {database}, gunicorn 2 sync workers, concurrency "
          f"{args.concurrency}, {args.rounds} x {args.seconds:g} s per target, alternating")
    summary = {}
    for name in ("reference", "reviewapp", "floor"):
        total = totals[name]
        rate = total["requests"] / total["seconds"]
        p50, p99 = percentile(total["latencies"], 50), percentile(total["latencies"], 99)
        summary[name] = (rate, p99)
        cpu = (f"   server CPU {total['cpu'] / total['requests'] * 1e6:5.0f} us/request"
               if "cpu" in total and total["requests"] else "")
        print(f"  {name:9s}: {rate:7.1f} req/s   p50 {p50:6.1f} ms   p99 {p99:6.1f} ms   "
              f"requests {total['requests']}   errors {total['errors']}{cpu}")
    floor_ratio = summary["floor"][0] / summary["reference"][0]
    print(f"  floor: reviewapp's GET /api/health runs at {floor_ratio:.2f} x the reference's rate")
    if "cpu" in totals["reviewapp"] and "cpu" in totals["reference"]:
        per = {name: totals[name]["cpu"] / totals[name]["requests"] for name in ("reference", "reviewapp")}
        print(f"  server CPU per request: reviewapp {per['reviewapp'] / per['reference']:.2f} x the reference's")
    rate_ratio = summary["reviewapp"][0] / summary["reference"][0]
    p99_ratio = summary["reviewapp"][1] / summary["reference"][1]
    print(f"  rate ratio {rate_ratio:.2f} (target >= 0.50: {'met' if rate_ratio >= 0.5 else 'NOT met'})"
          f"   p99 ratio {p99_ratio:.2f} (target <= 2.00: {'met' if p99_ratio <= 2 else 'NOT met'})")
    return 1 if totals["reviewapp"]["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
