"""Export benchmark (issue 7): rows/s and peak RSS growth of the streamed exports.

Builds SQLite databases with N cases and 3N feedback rows (N = 10,000 and 100,000 by
default; bulk-inserted here, not through the services), then exports cases and feedback
as CSV and JSONL

* through the CLI (``flask export ... --out FILE``, invoked in-process), and
* through the HTTP endpoint (a real werkzeug server on localhost; the client reads the
  streamed body in 64 KiB pieces and throws it away),

each in a fresh child process, so one measurement cannot inherit another's memory. Peak
RSS growth is the highest resident set size seen while the export ran (sampled every
5 ms, and the kernel's VmHWM after resetting it, whichever is higher) minus the RSS just
before it started. Rates are given per wall-clock second and per CPU second of the
process (on a shared machine the second is the steadier figure). It also checks that the
HTTP body is byte-for-byte the CLI's file.

Usage: ``.venv/bin/python benchmarks/export.py [--sizes 10000,100000] [--workdir DIR]``.
Targets: >= 20,000 rows/s; RSS growth <= 50 MB whatever the row count.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PAGE = os.sysconf("SC_PAGE_SIZE")
TEXTS = [
    "Connection pool exhausted after the PostgreSQL failover; PoolTimeout in payment-api.",
    "订单服务 p99 延迟升高，数据库慢查询导致连接池耗尽。",
    "Rollback checkout-service to 2026.11.27-1 🚀 then watch memory 👀",
    "הפריסה נכשלה בשרת; restart the pods and check the runbook.",
    "=HYPERLINK(\"http://example.invalid\",\"formula-looking comment\")",
    "Multi-line answer:\n1. check logs\n2. check metrics\n3. roll back",
]


# --------------------------------------------------------------------------- data


def build_database(path: Path, n_cases: int, feedback_per_case: int = 3) -> dict[str, int]:
    """A fresh SQLite database with one workspace, an admin, reviewers, ``n_cases`` runs
    each with a case and ``feedback_per_case`` ratings. Returns row counts."""
    from sqlalchemy import insert

    from reviewapp import create_app
    from reviewapp.extensions import db
    from reviewapp.models import (
        Case,
        DiagnosisSession,
        Feedback,
        Membership,
        Message,
        Run,
        User,
        Workspace,
    )
    from reviewapp.services.admin import hash_password

    if path.exists():
        path.unlink()
    app = create_app({"DATABASE_URL": f"sqlite:///{path}", "SECRET_KEY": "bench"})
    rng = random.Random(42)
    base = datetime(2026, 1, 1, tzinfo=UTC)
    with app.app_context():
        db.create_all()
        s = db.session
        s.execute(insert(Workspace), [{"id": 1, "slug": "bench", "name": "Bench", "settings": {}}])
        pw = hash_password("bench-password")
        users = [{"id": 1, "username": "admin", "password_hash": pw, "active": True,
                  "session_token": "t0"}]
        users += [{"id": i, "username": f"reviewer{i} 评审", "password_hash": pw, "active": True,
                   "session_token": f"t{i}"} for i in range(2, 2 + feedback_per_case)]
        s.execute(insert(User), users)
        s.execute(insert(Membership), [{"user_id": u["id"], "workspace_id": 1,
                                        "role": "admin" if u["id"] == 1 else "reviewer"}
                                       for u in users])
        step = 10_000
        fid = 0
        for start in range(0, n_cases, step):
            ids = range(start + 1, min(n_cases, start + step) + 1)
            at = {i: base + timedelta(seconds=i * 7) for i in ids}
            s.execute(insert(DiagnosisSession), [
                {"id": i, "session_id": f"s-{i}", "workspace_id": 1, "kind": "chat",
                 "created_at": at[i], "updated_at": at[i]} for i in ids])
            s.execute(insert(Run), [
                {"id": i, "run_id": f"run-{i:07d}", "workspace_id": 1, "diagnosis_session_id": i,
                 "kind": "chat" if i % 3 else "aiops", "query": TEXTS[i % 6][:80] + f" #{i}",
                 "answer": TEXTS[(i + 1) % 6], "status": "SUCCESS",
                 "feedback": "useful" if i % 4 else "not_useful",
                 "evidence_score": (i * 13) % 101, "verifier_verdict": ("PASS", "REJECT", None)[i % 3],
                 "tool_call_count": 2, "failed_tool_call_count": i % 2,
                 "created_at": at[i], "updated_at": at[i]} for i in ids])
            s.execute(insert(Message), [
                {"id": i, "run_pk": i, "ordinal": 1, "role": "assistant", "content": TEXTS[i % 6],
                 "meta": {}, "created_at": at[i], "updated_at": at[i]} for i in ids])
            s.execute(insert(Case), [
                {"case_id": f"00000000-0000-4000-8000-{i:012d}", "workspace_id": 1,
                 "diagnosis_id": f"run-{i:07d}", "run_pk": i,
                 "source_type": "AUTO" if i % 5 else "MANUAL",
                 "fault_category": ("GENERAL", "DATABASE", "NETWORK", "DEPLOYMENT")[i % 4],
                 "title": TEXTS[i % 6][:100], "root_cause": TEXTS[(i + 2) % 6],
                 "solution": TEXTS[(i + 3) % 6], "error_code": ("PoolTimeout", "HTTP_502", None)[i % 3],
                 "service": ("payment-api", "checkout-service", "订单服务")[i % 3],
                 "created_by": "system", "version": 1, "created_at": at[i], "updated_at": at[i]}
                for i in ids])
            rows = []
            for i in ids:
                for k in range(feedback_per_case):
                    fid += 1
                    negative = rng.random() < 0.4
                    rows.append({
                        "id": fid, "author_id": 2 + k, "workspace_id": 1, "run_pk": i,
                        "target_type": "chat_message", "target_id": i, "subject_key": "",
                        "rating": "negative" if negative else "positive",
                        "reason": "incorrect" if negative else None,
                        "comment": TEXTS[(i + k) % 6] if rng.random() < 0.5 else None,
                        "correction": TEXTS[(i + k + 1) % 6] if negative and rng.random() < 0.3 else None,
                        "created_at": at[i] + timedelta(seconds=k),
                        "updated_at": at[i] + timedelta(seconds=k)})
            s.execute(insert(Feedback), rows)
            s.commit()
        db.engine.dispose()
    return {"cases": n_cases, "feedback": fid}


# --------------------------------------------------------------------------- memory


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * PAGE


def _hwm() -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


class PeakSampler:
    """Samples the resident set size every 5 ms on a thread; ``peak`` is the highest seen."""

    def __init__(self) -> None:
        self.peak = _rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _rss())
            time.sleep(0.005)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss())


# --------------------------------------------------------------------------- child


def child(db_path: str, kind: str, fmt: str, via: str, out: str) -> dict[str, object]:
    """One measured export in this (fresh) process."""
    import gc
    import http.client
    import urllib.parse

    from reviewapp import create_app

    app = create_app({"DATABASE_URL": f"sqlite:///{db_path}", "SECRET_KEY": "bench",
                      "WTF_CSRF_ENABLED": False, "RATELIMIT_ENABLED": False})
    server = None
    cookie = ""
    if via == "http":
        from werkzeug.serving import WSGIRequestHandler, make_server

        WSGIRequestHandler.log_request = lambda *a, **k: None  # quiet
        server = make_server("127.0.0.1", 0, app, threaded=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        conn = http.client.HTTPConnection("127.0.0.1", server.server_port)
        body = urllib.parse.urlencode({"username": "admin", "password": "bench-password"})
        conn.request("POST", "/login", body, {"Content-Type": "application/x-www-form-urlencoded"})
        response = conn.getresponse()
        response.read()
        cookie = response.getheader("Set-Cookie", "").split(";", 1)[0]
        conn.close()
    else:
        runner = app.test_cli_runner()
        runner.invoke(args=["export", kind, "--format", fmt, "--out", out + ".warm",
                            "--date-from", "2100-01-01"] if kind == "feedback" else
                      ["export", kind, "--format", fmt, "--out", out + ".warm", "--q", "no such text"])
    gc.collect()
    baseline = _rss()
    hwm_reset = _reset_hwm()
    rows = 0
    size = 0
    started, cpu_started = time.perf_counter(), time.process_time()
    with PeakSampler() as sampler:
        if via == "cli":
            result = runner.invoke(args=["export", kind, "--format", fmt, "--out", out])
            if result.exit_code != 0:
                raise SystemExit(f"CLI export failed: {result.output}")
            size = os.path.getsize(out)
            rows = int(result.output.strip().splitlines()[-1].split()[0])
        else:
            conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=600)
            conn.request("GET", f"/exports/{kind}.{fmt}", headers={"Cookie": cookie})
            response = conn.getresponse()
            if response.status != 200:
                raise SystemExit(f"HTTP export failed: {response.status} {response.read()[:300]!r}")
            rows = int(response.getheader("X-Export-Rows", "0"))
            digest = hashlib.sha256()
            while chunk := response.read(65536):
                size += len(chunk)
                digest.update(chunk)
            conn.close()
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    peak = sampler.peak
    hwm = _hwm() if hwm_reset else None
    if hwm:
        peak = max(peak, hwm)
    if server is not None:
        server.shutdown()
    result: dict[str, object] = {
        "kind": kind, "fmt": fmt, "via": via, "rows": rows, "bytes": size,
        "seconds": round(elapsed, 3), "rows_per_s": round(rows / elapsed) if elapsed else None,
        "cpu_seconds": round(cpu, 3), "rows_per_cpu_s": round(rows / cpu) if cpu else None,
        "baseline_mb": round(baseline / 2**20, 1), "peak_growth_mb": round((peak - baseline) / 2**20, 1),
        "hwm_reset": hwm_reset,
    }
    if via == "http":
        result["sha256"] = digest.hexdigest()
    else:
        with open(out, "rb") as fh:
            result["sha256"] = hashlib.sha256(fh.read()).hexdigest()
    return result


# --------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="case counts (feedback = 3x)")
    parser.add_argument("--workdir", default=None, help="keep databases and outputs here")
    parser.add_argument("--child", nargs=5, metavar=("DB", "KIND", "FMT", "VIA", "OUT"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="reviewapp-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    results = []
    for n in (int(x) for x in args.sizes.split(",")):
        db_path = workdir / f"bench-{n}.sqlite"
        started = time.perf_counter()
        counts = build_database(db_path, n)
        print(f"== {counts['cases']:,} cases, {counts['feedback']:,} feedback rows "
              f"(built in {time.perf_counter() - started:.1f} s, {db_path.stat().st_size / 2**20:.0f} MB)")
        print(f"   {'export':<9} {'format':<6} {'via':<5} {'rows':>8} {'MB':>7} {'s':>7} "
              f"{'rows/s':>8} {'rows/CPU-s':>11} {'RSS growth MB':>14}")
        for kind in ("cases", "feedback"):
            for fmt in ("csv", "jsonl"):
                digests = {}
                for via in ("cli", "http"):
                    out = str(workdir / f"{kind}-{n}.{fmt}")
                    proc = subprocess.run(
                        [sys.executable, __file__, "--child", str(db_path), kind, fmt, via, out],
                        capture_output=True, text=True, cwd=REPO,
                        env={**os.environ, "FLASK_APP": "app.py"},
                    )
                    if proc.returncode != 0:
                        raise SystemExit(proc.stderr[-3000:])
                    r = json.loads(proc.stdout.strip().splitlines()[-1])
                    r["n"] = n
                    results.append(r)
                    digests[via] = r["sha256"]
                    print(f"   {kind:<9} {fmt:<6} {via:<5} {r['rows']:>8,} {r['bytes'] / 2**20:>7.1f} "
                          f"{r['seconds']:>7.2f} {r['rows_per_s']:>8,} {r['rows_per_cpu_s']:>11,} "
                          f"{r['peak_growth_mb']:>14.1f}")
                same = "identical" if digests["cli"] == digests["http"] else "DIFFERENT"
                print(f"   {'':<9} {'':<6} CLI file and HTTP body: {same}")
    worst_rate = min(r["rows_per_s"] for r in results)
    worst_cpu_rate = min(r["rows_per_cpu_s"] for r in results)
    worst_rss = max(r["peak_growth_mb"] for r in results)
    print(f"\nslowest: {worst_rate:,} rows/s wall clock, {worst_cpu_rate:,} rows per CPU second "
          f"(target >= 20,000 rows/s); largest RSS growth: {worst_rss:.1f} MB (target <= 50 MB)")
    print(f"load average while running: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
          "(the wall-clock rate shares the CPUs with everything else)")
    print(f"databases and outputs in {workdir}")


if __name__ == "__main__":
    main()
