"""Benchmark: re-scoring 10,000 runs of 20 tool calls each in SQLite (issue 4).

Seeds a fresh SQLite database with bulk inserts (not through the API), then prints:

* runs/s of the pure scoring function (``domain.evidence.score_evidence``) alone;
* runs/s of ``flask runs rescore`` end to end, as a separate process (interpreter start,
  app start, reading, scoring, gatekeeper, AIOps checks, writing), first on unscored runs
  (every run changes) and again (nothing changes: idempotence);
* the peak RSS of that process.

Targets: pure >= 50,000 runs/s; end to end >= 2,000 runs/s; peak RSS < 300 MB.
Usage: ``.venv/bin/python benchmarks/rescore.py [--runs N] [--calls N]``.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from sqlalchemy import insert

from reviewapp import create_app
from reviewapp.domain.evidence import ToolCallFact, score_evidence
from reviewapp.extensions import db
from reviewapp.models import (
    DiagnosisSession,
    DiagnosticReport,
    Message,
    Run,
    ToolCall,
    Workspace,
)

TOOLS = ["query_logs", "query_metrics", "get_user_details", "list_pods", "describe_node",
         "change_log", "trace_search", "http_probe"]
BASE = datetime(2026, 11, 1, tzinfo=UTC)


def _tool_calls(rnd: random.Random, run_pk: int, workspace_id: int, parent: dict,
                n: int) -> list[dict]:
    """``n`` calls: one retrieval call (L0 / L1 / miss), the rest mixed successes and failures."""
    rows = []
    start = BASE + timedelta(minutes=run_pk)
    for i in range(n):
        status = "failed" if rnd.random() < 0.1 else "completed"
        retrieval = i == 0
        level = rnd.choice(["L0", "L1", None]) if retrieval else None
        hits = (rnd.randint(1, 5) if level else 0) if retrieval else None
        refs = ([{"ref": f"kb://doc/{run_pk}", "excerpt": f"evidence {run_pk} text"}]
                if level else []) if retrieval else None
        began = start + timedelta(seconds=i)
        rows.append({
            "workspace_id": workspace_id, "id": f"call-{run_pk}-{i}", "run_pk": run_pk, **parent,
            "ordinal": i + 1, "tool_name": "knowledge_search" if retrieval else rnd.choice(TOOLS),
            "status": status, "arguments": {"query": f"q{i}", "limit": 20},
            "result_summary": (None if status == "failed"
                               else f"result {i} of run {run_pk}: " + "x" * 120),
            "error_message": "Error: upstream 503" if status == "failed" else None,
            "started_at": began, "completed_at": began + timedelta(milliseconds=350),
            "duration_ms": 350, "compensated": False, "match_level": level, "hit_count": hits,
            "evidence_refs": refs,
        })
    return rows


def seed(url: str, runs: int, calls: int) -> list[list[ToolCallFact]]:
    """Bulk-insert ``runs`` runs of ``calls`` tool calls; return their evidence facts."""
    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench", "TESTING": True})
    rnd = random.Random(4)
    facts: list[list[ToolCallFact]] = []
    with app.app_context():
        db.create_all()
        conn = db.session
        conn.execute(insert(Workspace.__table__),
                     [{"id": 1, "slug": "bench", "name": "Bench", "settings": {}}])
        chunk = 1000
        for first in range(1, runs + 1, chunk):
            pks = range(first, min(first + chunk, runs + 1))
            sessions, run_rows, messages, reports, call_rows = [], [], [], [], []
            for pk in pks:
                aiops = pk % 10 == 0
                kind = "aiops" if aiops else "chat"
                sessions.append({"id": pk, "session_id": f"s-{pk}", "workspace_id": 1,
                                 "kind": kind})
                run_rows.append({
                    "id": pk, "run_id": f"run-{pk}", "workspace_id": 1, "diagnosis_session_id": pk,
                    "kind": kind, "query": f"question {pk}", "answer": f"answer {pk}",
                    "status": "FAILED" if pk % 25 == 0 else "SUCCESS",
                    "alert": {"alertname": "HighErrorRate", "service": f"svc-{pk}",
                              "other_active_alerts": ["DiskPressure node-7"]} if aiops else None,
                    "started_at": BASE, "finished_at": BASE + timedelta(minutes=2),
                    "tool_call_count": calls, "failed_tool_call_count": 0,
                })
                messages.append({"run_pk": pk, "message_id": "u1", "ordinal": 1, "role": "user",
                                 "content": f"question {pk}", "metadata": {}})
                messages.append({"run_pk": pk, "message_id": "a1", "ordinal": 2,
                                 "role": "assistant",
                                 "content": f"answer {pk}", "metadata": {"citations": [
                                     {"id": "c1", "evidence_ref": f"kb://doc/{pk}",
                                      "excerpt": "evidence"},
                                     {"id": "c2", "excerpt": f"result 3 of run {pk}"}]}})
                if aiops:
                    reports.append({"run_pk": pk,
                                    "content": f"## HighErrorRate on svc-{pk}\nRoot cause."})
                parent = ({"chat_session_id": None, "diagnostic_task_id": pk} if aiops
                          else {"chat_session_id": pk, "diagnostic_task_id": None})
                rows = _tool_calls(rnd, pk, 1, parent, calls)
                call_rows.extend(rows)
                facts.append([ToolCallFact(r["status"], r["match_level"], r["hit_count"],
                                           r["evidence_refs"] is not None) for r in rows])
            conn.execute(insert(DiagnosisSession.__table__), sessions)
            conn.execute(insert(Run.__table__), run_rows)
            conn.execute(insert(Message.__table__), messages)
            if reports:
                conn.execute(insert(DiagnosticReport.__table__), reports)
            conn.execute(insert(ToolCall.__table__), call_rows)
            conn.commit()
        db.session.remove()
        db.engine.dispose()
    return facts


def bench_pure(facts: list[list[ToolCallFact]], statuses: list[str]) -> float:
    best = 0.0
    for _ in range(3):
        t0 = time.perf_counter()
        for status, calls in zip(statuses, facts, strict=True):
            score_evidence(status, calls)
        best = max(best, len(facts) / (time.perf_counter() - t0))
    return best


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_flask(url: str, *args: str) -> tuple[float, float, str, int]:
    """Run ``flask *args`` in its own process: (wall s, CPU s, last output line, peak RSS
    KiB of the largest child so far: ru_maxrss of RUSAGE_CHILDREN, KiB on Linux)."""
    env = {**os.environ, "REVIEWAPP_DATABASE_URL": url, "FLASK_APP": str(REPO / "app.py")}
    flask = str(Path(sys.executable).with_name("flask"))
    cpu0, t0 = _child_cpu(), time.perf_counter()
    proc = subprocess.run([flask, *args], env=env, cwd=REPO, capture_output=True, text=True,
                          check=True)
    elapsed, cpu = time.perf_counter() - t0, _child_cpu() - cpu0
    lines = proc.stdout.strip().splitlines() or [""]
    return elapsed, cpu, lines[-1], resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.sqlite'}"
        t0 = time.perf_counter()
        facts = seed(url, args.runs, args.calls)
        seconds = time.perf_counter() - t0
        print(f"seeded {args.runs:,} runs x {args.calls} tool calls in {seconds:.1f} s")
        statuses = ["FAILED" if (i + 1) % 25 == 0 else "SUCCESS" for i in range(len(facts))]
        pure = bench_pure(facts, statuses)
        print(f"pure score_evidence:            {pure:>10,.0f} runs/s   (target >= 50,000)")
        del facts

        start_wall, start_cpu, _, _ = run_flask(url, "runs", "--help")
        print(f"process start alone (flask runs --help): {start_wall:.2f} s wall, "
              f"{start_cpu:.2f} s CPU")
        for label in ("1st, every run changes", "2nd, idempotent"):
            wall, cpu, out, rss_kib = run_flask(url, "runs", "rescore")
            print(f"flask runs rescore ({label}): {args.runs / wall:>7,.0f} runs/s wall "
                  f"({wall:.2f} s), {args.runs / cpu:>7,.0f} runs/s CPU ({cpu:.2f} s)"
                  "   (target >= 2,000)")
            inside = float(out.rsplit(" in ", 1)[1].split()[0])
            print(f"  {out}  -> {args.runs / inside:,.0f} runs/s inside the command")
        print(f"peak RSS of the rescore process: {rss_kib / 1024:,.0f} MB   (target < 300)")
        print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
              "(wall figures include waiting for the CPU)")


if __name__ == "__main__":
    main()
