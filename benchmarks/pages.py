"""Benchmark of the review pages (issue 6). Prints figures; asserts nothing.

1. Run page server time, p50 over repeated requests through the WSGI app, for a run with
   20 tool calls and one with 500 (2,000-character outputs): ratio 500 / 20 (target <= 3).
2. Requests per second under gunicorn (2 workers, 8 concurrent keep-alive clients, all on
   127.0.0.1) for the 20-call run page and for a bare reference page that lists 50 rows
   from the same database with one query and one small template: ratio (target >= 0.3).
3. Runs list p50 at 10,000 and at 1,000,000 runs: ratio (target <= 1.3).

SQLite (the embedded default). Run: ``.venv/bin/python benchmarks/pages.py`` (about
three minutes, most of it building the million-run database). ``--quick`` uses 100,000
instead of 1,000,000 runs; ``--run-page`` runs parts 1 and 2 only.
"""

from __future__ import annotations

import http.client
import os
import re
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PASSWORD = "bench-password-123"
SECRET = "bench-secret-key"


def _app(db_path: Path, **extra: Any):
    from reviewapp import create_app

    return create_app({"SECRET_KEY": SECRET, "DATABASE_URL": f"sqlite:///{db_path}",
                       "WTF_CSRF_ENABLED": False, "RATELIMIT_ENABLED": False, **extra})


def _calls(n: int, prefix: str) -> list[dict[str, Any]]:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    return [{
        "id": f"{prefix}-{i}", "tool_name": f"tool_{i % 9}",
        "status": "failed" if i % 11 == 0 else "completed",
        "arguments": {"query": f"lookup {i}", "limit": 20},
        "output": (f"result line {i} ") * 200, "error": "Error: timeout" if i % 11 == 0 else None,
        "started_at": (start + timedelta(seconds=i)).isoformat(),
        "completed_at": (start + timedelta(seconds=i, milliseconds=700)).isoformat(),
        "retrieval": {"match_level": "L1", "hit_count": 2, "evidence_refs": []} if i % 5 == 0 else None,
    } for i in range(n)]


def build_run_page_db(path: Path) -> tuple[int, int]:
    """A workspace, a reviewer, 50 plain runs, one 20-call and one 500-call run."""
    from reviewapp.actors import Actor, Role
    from reviewapp.extensions import db
    from reviewapp.services import admin, runs

    app = _app(path)
    with app.app_context():
        db.create_all()
        system = Actor.system_actor()
        ws = admin.create_workspace(db.session, system, "bench", "Bench")
        admin.create_user(db.session, system, "bench", PASSWORD, ws.id, Role.REVIEWER.value)
        for i in range(50):
            runs.upsert_run(db.session, system, ws.id, f"plain-{i}", {"query": f"Plain question {i}?",
                            "answer": "An answer.", "status": "SUCCESS"})
        pks = []
        for n in (20, 500):
            doc = {"query": f"Run with {n} calls?", "answer": "**Answer** with [a link](https://x.example.com).",
                   "status": "SUCCESS", "tool_calls": _calls(n, f"c{n}"),
                   "messages": [{"id": "u", "role": "user", "content": "Q?"},
                                {"id": "a", "role": "assistant", "content": "A.", "metadata": {"citations": [
                                    {"id": f"c{j}", "title": f"Doc {j}", "source": "kb://x", "excerpt": "e"}
                                    for j in range(5)]}}]}
            pks.append(runs.upsert_run(db.session, system, ws.id, f"calls-{n}", doc).run.id)
        db.engine.dispose()
    return pks[0], pks[1]


def _login(client) -> None:
    response = client.post("/login", data={"username": "bench", "password": PASSWORD})
    assert response.status_code == 303, response.status_code


def paired_p50_ms(a: tuple[Any, str], b: tuple[Any, str], repeat: int) -> tuple[float, float]:
    """p50 of two pages measured in alternation, so a busy machine slows both alike."""
    for client, path in (a, b):
        for _ in range(3):
            client.get(path)
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for side, (client, path) in enumerate((a, b)):
            t0 = time.perf_counter()
            response = client.get(path)
            times[side].append((time.perf_counter() - t0) * 1000)
            assert response.status_code == 200, (path, response.status_code)
    return statistics.median(times[0]), statistics.median(times[1])


# ---- gunicorn -----------------------------------------------------------------------

REFERENCE_TEMPLATE = """<!doctype html><html lang="en"><head><title>runs</title></head><body>
<table>{% for r in rows %}<tr><td>{{ r[0] }}</td><td>{{ r[1] }}</td><td>{{ r[2] }}</td><td>{{ r[3] }}</td></tr>{% endfor %}</table>
</body></html>"""


def reference_app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    """The bare reference: one query for 50 rows, one small Jinja template."""
    global _reference_template
    try:
        template = _reference_template
    except NameError:
        from jinja2 import Template

        template = _reference_template = Template(REFERENCE_TEMPLATE)
    connection = sqlite3.connect(os.environ["BENCH_DB"])
    rows = connection.execute("SELECT run_id, query, status, created_at FROM diagnosis_run "
                              "ORDER BY created_at DESC, id DESC LIMIT 50").fetchall()
    connection.close()
    body = template.render(rows=rows).encode()
    start_response("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                              ("Content-Length", str(len(body)))])
    return [body]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(target: str, db_path: Path) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    env = {**os.environ, "BENCH_DB": str(db_path), "REVIEWAPP_DATABASE_URL": f"sqlite:///{db_path}",
           "REVIEWAPP_SECRET_KEY": SECRET, "REVIEWAPP_RATELIMIT_ENABLED": "false"}
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "-w", "2", "-b", f"127.0.0.1:{port}",
         "--chdir", str(REPO), "--log-level", "warning", target],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("gunicorn did not start: " + proc.stderr.read().decode()[-2000:])


def _session_cookie(port: int) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("GET", "/login")
    response = conn.getresponse()
    html = response.read().decode()
    cookie = response.getheader("Set-Cookie").split(";")[0]
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', html).group(1)
    body = f"username=bench&password={PASSWORD}&csrf_token={token}"
    conn.request("POST", "/login", body=body, headers={
        "Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie})
    response = conn.getresponse()
    response.read()
    assert response.status == 303, response.status
    return response.getheader("Set-Cookie").split(";")[0]


def requests_per_second(port: int, path: str, cookie: str | None, seconds: float = 6.0,
                        concurrency: int = 8) -> float:
    """Completed requests per second from ``concurrency`` keep-alive clients."""
    done = [0] * concurrency
    headers = {"Cookie": cookie} if cookie else {}
    stop = 0.0

    def worker(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while time.perf_counter() < stop:
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            response.read()
            assert response.status == 200, response.status
            done[i] += 1
        conn.close()

    # Warm both workers up first.
    warm = http.client.HTTPConnection("127.0.0.1", port)
    for _ in range(10):
        warm.request("GET", path, headers=headers)
        warm.getresponse().read()
    t0 = time.perf_counter()
    stop = t0 + seconds
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(done) / (time.perf_counter() - t0)


# ---- runs list at scale --------------------------------------------------------------

def build_list_db(path: Path, count: int) -> None:
    """``count`` runs in one workspace, inserted in bulk (the ingest path would take hours)."""
    from reviewapp.actors import Actor, Role
    from reviewapp.extensions import db
    from reviewapp.services import admin

    app = _app(path)
    with app.app_context():
        db.create_all()
        system = Actor.system_actor()
        ws = admin.create_workspace(db.session, system, "bench", "Bench")
        admin.create_user(db.session, system, "bench", PASSWORD, ws.id, Role.REVIEWER.value)
        ws_id = ws.id
        db.engine.dispose()
    conn = sqlite3.connect(path)
    now = "2026-01-01 00:00:00.000000"
    conn.execute("INSERT INTO diagnosis_session (session_id, workspace_id, kind, created_at, updated_at) "
                 "VALUES ('bench-session', ?, 'chat', ?, ?)", (ws_id, now, now))
    session_pk = conn.execute("SELECT id FROM diagnosis_session").fetchone()[0]
    base = datetime(2025, 1, 1)
    batch = 50_000
    kinds, statuses, verdicts = ("chat", "aiops"), ("SUCCESS", "SUCCESS", "FAILED"), ("PASS", "LOW_CONFID", "REJECT", None)
    for start in range(0, count, batch):
        rows = []
        for i in range(start, min(count, start + batch)):
            # Many runs share a timestamp (every 4 in a row): the keyset must cope.
            at = (base + timedelta(seconds=(i // 4) * 7)).strftime("%Y-%m-%d %H:%M:%S.%f")
            rows.append((f"run-{i}", ws_id, session_pk, kinds[i % 2], f"Question number {i} about service {i % 97}?",
                         f"Answer {i}.", statuses[i % 3], (i * 37) % 101 if i % 10 else None,
                         verdicts[i % 4], i % 13, i % 3, at, at))
        conn.executemany(
            "INSERT INTO diagnosis_run (run_id, workspace_id, diagnosis_session_id, kind, query, answer, status, "
            "evidence_score, verifier_verdict, tool_call_count, failed_tool_call_count, created_at, updated_at) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        conn.commit()
    conn.execute("ANALYZE")
    conn.commit()
    conn.close()


def main() -> None:
    quick = "--quick" in sys.argv
    big = 100_000 if quick else 1_000_000
    work = Path(tempfile.mkdtemp(prefix="reviewapp-bench-"))
    print(f"work folder: {work}")

    # 1. run page, through the WSGI app
    pages_db = work / "pages.sqlite"
    pk20, pk500 = build_run_page_db(pages_db)
    app = _app(pages_db)
    client = app.test_client()
    _login(client)
    t20, t500 = paired_p50_ms((client, f"/runs/{pk20}"), (client, f"/runs/{pk500}"), 40)
    size20 = len(client.get(f"/runs/{pk20}").data)
    size500 = len(client.get(f"/runs/{pk500}").data)
    print(f"run page p50: 20 calls {t20:.1f} ms ({size20 / 1024:.0f} KiB), "
          f"500 calls {t500:.1f} ms ({size500 / 1024:.0f} KiB); ratio 500/20 = {t500 / t20:.2f} (target <= 3)")

    # 2. gunicorn, 2 workers, concurrency 8; three alternating windows per server
    rps: dict[str, list[float]] = {"run": [], "reference": []}
    for _ in range(3):
        proc, port = _serve("reviewapp:create_app()", pages_db)
        try:
            rps["run"].append(requests_per_second(port, f"/runs/{pk20}", _session_cookie(port), 4.0))
        finally:
            proc.terminate()
            proc.wait(10)
        proc, port = _serve("benchmarks.pages:reference_app", pages_db)
        try:
            rps["reference"].append(requests_per_second(port, "/", None, 4.0))
        finally:
            proc.terminate()
            proc.wait(10)
    rps_run, rps_ref = statistics.median(rps["run"]), statistics.median(rps["reference"])
    print(f"gunicorn -w 2, 8 clients: run page (20 calls) {rps_run:.0f} req/s, "
          f"reference page (50 rows) {rps_ref:.0f} req/s; ratio = {rps_run / rps_ref:.2f} (target >= 0.3)")
    if "--run-page" in sys.argv:
        return

    # 3. runs list at 10,000 and at `big` runs, measured in alternation
    clients = {}
    for count in (10_000, big):
        path = work / f"list-{count}.sqlite"
        t0 = time.perf_counter()
        build_list_db(path, count)
        print(f"built a database of {count:,} runs in {time.perf_counter() - t0:.0f} s")
        clients[count] = _app(path).test_client()
        _login(clients[count])
    for label, path in (("default list", "/"), ("kind=aiops", "/?kind=aiops"),
                        ("verifier PASS, score >= 50", "/?verdict=PASS&score_min=50")):
        small, large = paired_p50_ms((clients[10_000], path), (clients[big], path), 40)
        print(f"runs list, {label}: p50 {small:.1f} ms at 10,000 runs, {large:.1f} ms at "
              f"{big:,} runs; ratio {large / small:.2f} (target <= 1.3)")
    small, large = paired_p50_ms((clients[10_000], _third_page(clients[10_000])),
                                 (clients[big], _third_page(clients[big])), 40)
    print(f"runs list, third page (keyset cursor): p50 {small:.1f} ms / {large:.1f} ms; "
          f"ratio {large / small:.2f}")
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


def _third_page(client) -> str:
    path = "/"
    for _ in range(2):
        html = client.get(path).get_data(as_text=True)
        path = re.search(r'href="(/\?cursor=[^"]+)"', html).group(1).replace("&amp;", "&")
    return path


if __name__ == "__main__":
    main()
