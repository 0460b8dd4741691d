"""Redaction cost (issue 11): microseconds per KB, and the single-event ingest rate.

1. ``services.secret_scan.redact_text`` (the rules of ``domain.redaction`` on RE2) on
   ordinary tool output and on each adversarial family of
   ``tests/unit/test_redaction_linear.py`` at 100 KB and at 1 MB: CPU microseconds per
   KB (best of a few runs) and the 1 MB / 100 KB ratio (10 is linear; the test fails
   past 15). Then each family at ``MAX_CONTENT_LENGTH`` (the bound is ~2 s).
2. Single tool-call events per second through reviewapp (every event redacted) beside
   the bare reference app of ``benchmarks/ingest.py``, in this same run, alternating the
   two slot by slot. Target: reviewapp >= 50 % of the reference.

    .venv/bin/python benchmarks/redaction.py [--seconds 5] [--rounds 2] [--skip-ingest]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks._servers import stop_servers
from benchmarks.ingest import Client, free_port, prepare_reviewapp, start_server
from reviewapp.config import Config
from reviewapp.services.secret_scan import redact_text
from tests.unit.test_redaction_linear import FAMILIES, ORDINARY


def cpu(text: str, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        redact_text(text)
        best = min(best, time.process_time() - start)
    return best


def redaction_table() -> None:
    print(f"{'input':<34}{'us/KB 100K':>12}{'us/KB 1M':>10}{'1M/100K':>9}{'s at max body':>15}")
    size = Config.MAX_CONTENT_LENGTH
    for name, make in {"ordinary tool output": ORDINARY, **FAMILIES}.items():
        small, large = cpu(make(100_000), 5), cpu(make(1_000_000), 3)
        at_max = cpu(make(size), 1)
        print(f"{name:<34}{small / 100 * 1e6:>12.2f}{large / 1000 * 1e6:>10.2f}"
              f"{large / small:>9.1f}{at_max:>15.2f}", flush=True)
    print(f"(CPU time; max body = MAX_CONTENT_LENGTH = {size:,} bytes)")


def ingest_rates(seconds: float, rounds: int, concurrency: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="reviewapp-redaction-bench-"))
    servers: list[subprocess.Popen] = []
    try:
        env, token = prepare_reviewapp(folder, concurrency)
        ports = {"reviewapp": free_port(), "reference": free_port()}
        servers.append(start_server("app:app", REPO, env, ports["reviewapp"]))
        ref_env = {**os.environ, "REFERENCE_DATABASE_URL": f"sqlite:///{folder / 'reference.sqlite'}"}
        servers.append(start_server("reference_app:app", REPO / "benchmarks", ref_env, ports["reference"]))
        clients = {name: Client(port, token, concurrency) for name, port in ports.items()}
        for client in clients.values():
            client.run("single", 2.0, "warm")
        rates: dict[str, list[float]] = {"reviewapp": [], "reference": []}
        for round_no in range(rounds):
            order = ("reviewapp", "reference") if round_no % 2 == 0 else ("reference", "reviewapp")
            for name in order:
                slot = clients[name].run("single", seconds, f"r{round_no}")
                rates[name].append(slot.events / slot.seconds)
                print(f"  single round {round_no + 1} {name:<9} {rates[name][-1]:8.0f} events/s"
                      f"  errors {slot.errors}", flush=True)
        ratio = statistics.fmean(rates["reviewapp"]) / statistics.fmean(rates["reference"])
        print(f"single events: reviewapp {statistics.fmean(rates['reviewapp']):.0f}/s, reference "
              f"{statistics.fmean(rates['reference']):.0f}/s: {ratio:.0%} of the reference "
              f"(target >= 50 %: {'met' if ratio >= 0.5 else 'NOT met'})")
    finally:
        stop_servers(servers, folder)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0, help="length of one ingest slot")
    parser.add_argument("--rounds", type=int, default=2, help="ingest slots per app")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--skip-ingest", action="store_true")
    args = parser.parse_args()
    redaction_table()
    if not args.skip_ingest:
        print()
        ingest_rates(args.seconds, args.rounds, args.concurrency)
    return 0


if __name__ == "__main__":
    sys.exit(main())
