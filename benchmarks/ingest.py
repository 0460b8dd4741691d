"""Ingest throughput: reviewapp against a bare reference app (issue 3).

Both apps run under the same server settings: gunicorn, 2 sync workers, 127.0.0.1,
SQLite (WAL) in a fresh temporary folder. A client with 8 concurrent threads sends
tool-call events for a bounded time per slot, alternating the two apps slot by slot
(round 1: reviewapp then reference, round 2: reference then reviewapp, ...), first as
single events (a started, then the completed of the same call), then as batches of
100 (50 calls of one run, started + completed each). It prints events/s and latency p50 / p99 per
mode and app, and reviewapp's figures as a ratio of the reference's. Each app gets an unrecorded warm-up first (gunicorn opens its
port before its workers have imported the app).

Targets on SQLite: single events >= 50 % of the reference's rate; batches >= 5,000
events/s.

    .venv/bin/python benchmarks/ingest.py [--seconds 6] [--rounds 3] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BIN = Path(sys.executable).parent

from benchmarks._servers import free_port, stop_servers, wait_until_up

RUNS_PER_THREAD = 50


def prepare_reviewapp(folder: Path, concurrency: int) -> tuple[dict[str, str], str]:
    """A migrated database with a workspace, a token and RUNNING runs; returns (env, token)."""
    env = {**os.environ, "REVIEWAPP_DATABASE_URL": f"sqlite:///{folder / 'reviewapp.sqlite'}",
           "REVIEWAPP_SECRET_KEY": "bench", "FLASK_APP": "app.py"}
    subprocess.run([str(BIN / "flask"), "db", "upgrade"], cwd=REPO, env=env, check=True,
                   capture_output=True)
    script = f"""
from reviewapp import create_app
from reviewapp.actors import Actor
from reviewapp.extensions import db
from reviewapp.services import admin, runs
app = create_app()
with app.app_context():
    system = Actor.system_actor()
    ws = admin.create_workspace(db.session, system, "bench", "Bench")
    for t in range({concurrency}):
        for r in range({RUNS_PER_THREAD}):
            runs.upsert_run(db.session, system, ws.id, f"bench-{{t}}-{{r}}",
                            {{"query": "benchmark run", "status": "RUNNING", "kind": "aiops"}})
    print(admin.create_token(db.session, system, ws.id, "bench").secret)
"""
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, check=True,
                         capture_output=True, text=True)
    return env, out.stdout.strip().splitlines()[-1]


def start_server(module: str, cwd: Path, env: dict[str, str], port: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [str(BIN / "gunicorn"), "--workers", "2", "--bind", f"127.0.0.1:{port}",
         "--log-level", "warning", module],
        cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    wait_until_up(port)
    return proc


@dataclass
class Slot:
    events: int = 0
    requests: int = 0
    errors: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)


class Client:
    """Sends event bodies at fixed concurrency for a bounded time."""

    def __init__(self, port: int, token: str, concurrency: int) -> None:
        self.port, self.token, self.concurrency = port, token, concurrency
        self.counters = [0] * concurrency  # per thread: calls sent so far (ids stay unique)

    def _body(self, thread: int, mode: str, prefix: str) -> tuple[bytes, int]:
        n = self.counters[thread]
        if mode == "single":
            call, phase = divmod(n, 2)
            self.counters[thread] += 1
            event = self._event(thread, call, "started" if phase == 0 else "completed", prefix)
            return json.dumps(event).encode(), 1
        self.counters[thread] += 50
        # An agent buffers the events of one run: 50 calls of one run, started + completed.
        run = f"bench-{thread}-{n // 50 % RUNS_PER_THREAD}"
        batch = [{**self._event(thread, call, kind, prefix), "run_id": run}
                 for kind in ("started", "completed") for call in range(n, n + 50)]
        return json.dumps(batch).encode(), len(batch)

    @staticmethod
    def _event(thread: int, call: int, kind: str, prefix: str) -> dict:
        event = {"id": f"{prefix}-{thread}-{call}", "run_id": f"bench-{thread}-{call % RUNS_PER_THREAD}",
                 "event": kind, "tool_name": "query_logs",
                 "timestamp": f"2026-05-01T12:{call // 60 % 60:02d}:{call % 60:02d}Z"}
        if kind == "started":
            event["arguments"] = {"service": "checkout", "query": "level:error", "limit": 100}
        else:
            event["output"] = {"lines": 42, "top": "OOMKilled checkout-7f9c (exit 137)"}
        return event

    def run(self, mode: str, seconds: float, prefix: str) -> Slot:
        slot = Slot()
        lock = threading.Lock()
        deadline = time.monotonic() + seconds
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self.token}"}

        def worker(thread: int) -> None:
            local = Slot()
            while time.monotonic() < deadline:
                body, count = self._body(thread, mode, prefix)
                began = time.perf_counter()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                try:
                    conn.request("POST", "/api/ingest/tool-events", body=body, headers=headers)
                    response = conn.getresponse()
                    response.read()
                    ok = response.status == 200
                finally:
                    conn.close()
                local.latencies.append(time.perf_counter() - began)
                local.requests += 1
                if ok:
                    local.events += count
                else:
                    local.errors += 1
            with lock:
                slot.events += local.events
                slot.requests += local.requests
                slot.errors += local.errors
                slot.latencies.extend(local.latencies)

        threads = [threading.Thread(target=worker, args=(t,)) for t in range(self.concurrency)]
        began = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        slot.seconds = time.perf_counter() - began
        return slot


def p(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=6.0, help="length of one slot")
    parser.add_argument("--rounds", type=int, default=3, help="slots per app and mode")
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="reviewapp-bench-"))
    servers: list[subprocess.Popen] = []
    try:
        env, token = prepare_reviewapp(folder, args.concurrency)
        ports = {"reviewapp": free_port(), "reference": free_port()}
        servers.append(start_server("app:app", REPO, env, ports["reviewapp"]))
        ref_env = {**os.environ, "REFERENCE_DATABASE_URL": f"sqlite:///{folder / 'reference.sqlite'}"}
        servers.append(start_server("reference_app:app", REPO / "benchmarks", ref_env, ports["reference"]))
        clients = {name: Client(port, token, args.concurrency) for name, port in ports.items()}
        # gunicorn opens its port before its workers have imported the app: warm both
        # workers of each app up (unrecorded) so that boot time is not measured.
        for client in clients.values():
            for mode in ("single", "batch"):
                client.run(mode, 2.0, f"warm-{mode}")

        results: dict[tuple[str, str], list[Slot]] = {}
        for mode in ("single", "batch100"):
            for round_no in range(args.rounds):
                order = ("reviewapp", "reference") if round_no % 2 == 0 else ("reference", "reviewapp")
                for name in order:
                    slot = clients[name].run("single" if mode == "single" else "batch", args.seconds, f"r{round_no}")
                    results.setdefault((mode, name), []).append(slot)
                    print(f"  {mode:<8} round {round_no + 1} {name:<9} {slot.events / slot.seconds:9.0f} events/s"
                          f"  errors {slot.errors}", flush=True)

        print()
        print(f"gunicorn 2 workers, 127.0.0.1, SQLite WAL, concurrency {args.concurrency}, "
              f"{args.rounds} x {args.seconds:.0f} s per app and mode, alternating")
        print(f"{'mode':<9}{'app':<11}{'events/s':>10}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}"
              f"{'rate vs ref':>13}{'p99 vs ref':>12}")
        for mode in ("single", "batch100"):
            summary = {}
            for name in ("reviewapp", "reference"):
                slots = results[(mode, name)]
                seconds = sum(s.seconds for s in slots)
                latencies = [x for s in slots for x in s.latencies]
                summary[name] = (sum(s.events for s in slots) / seconds, sum(s.requests for s in slots) / seconds,
                                 p(latencies, 0.50), p(latencies, 0.99), sum(s.errors for s in slots))
            for name in ("reviewapp", "reference"):
                rate, rps, p50, p99, errors = summary[name]
                ratio = rate / summary["reference"][0]
                p99_ratio = p99 / summary["reference"][3]
                print(f"{mode:<9}{name:<11}{rate:>10.0f}{rps:>9.0f}{p50:>9.1f}{p99:>9.1f}{errors:>8}"
                      f"{ratio:>12.0%}{p99_ratio:>11.2f}x")
        single_ratio = (statistics.fmean(s.events / s.seconds for s in results[("single", "reviewapp")])
                        / statistics.fmean(s.events / s.seconds for s in results[("single", "reference")]))
        batch_rate = (sum(s.events for s in results[("batch100", "reviewapp")])
                      / sum(s.seconds for s in results[("batch100", "reviewapp")]))
        print()
        print(f"target single >= 50% of reference: {'met' if single_ratio >= 0.5 else 'NOT met'} ({single_ratio:.0%})")
        print(f"target batches >= 5,000 events/s: {'met' if batch_rate >= 5000 else 'NOT met'} ({batch_rate:.0f})")
        return 0
    finally:
        stop_servers(servers, folder)


if __name__ == "__main__":
    sys.exit(main())
