"""Real app processes for the race and fault tests: a private database (SQLite file in
WAL mode, or a private PostgreSQL database when ``REVIEWAPP_TEST_DB_URL`` is set), gunicorn
processes serving ``app:app`` on free 127.0.0.1 ports, concurrent firing with a barrier,
and database consistency checks.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import requests
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import Engine

from ..databases import private_postgres

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PG_URL = os.environ.get("REVIEWAPP_TEST_DB_URL")
SECRET = "race-secret-key"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def private_database(folder: Path) -> Iterator[str]:
    """A fresh database with the schema: a private PostgreSQL database (dropped at the
    end) on the PostgreSQL leg, else an SQLite file in ``folder`` (WAL mode). Yields its URL."""
    with ExitStack() as stack:
        url = (stack.enter_context(private_postgres(PG_URL, "reviewapp_race")) if PG_URL
               else f"sqlite:///{folder / 'race.sqlite'}")
        _create_schema(url)
        yield url


def _create_schema(url: str) -> None:
    from reviewapp import create_app
    from reviewapp.extensions import db

    app = create_app({"TESTING": True, "SECRET_KEY": SECRET, "DATABASE_URL": url})
    with app.app_context():
        db.create_all()
        if not PG_URL:
            with db.engine.connect() as conn:  # the connect hook sets WAL; make sure it stuck
                assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        db.engine.dispose()


def app_env(url: str, **extra: str) -> dict[str, str]:
    """Environment of an app process (or CLI) on database ``url``: shared secret key, CSRF
    and the login rate limit off (the tests drive forms without fetching tokens)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVIEWAPP_")}
    env.update({
        "REVIEWAPP_DATABASE_URL": url, "REVIEWAPP_SECRET_KEY": SECRET,
        "REVIEWAPP_WTF_CSRF_ENABLED": "false", "REVIEWAPP_RATELIMIT_ENABLED": "false",
        "FLASK_APP": "app.py", **extra,
    })
    return env


class AppServer:
    """One gunicorn master with ``workers`` gthread workers serving ``app:app`` on a free
    127.0.0.1 port; ``base`` is its URL. ``kill9`` sends SIGKILL to master and workers."""

    def __init__(self, url: str, log_dir: Path, *, workers: int = 1, threads: int = 4,
                 env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / f"gunicorn-{self.port}.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [str(BIN / "gunicorn"), "--workers", str(workers), "--threads", str(threads),
             "--worker-class", "gthread", "--bind", f"127.0.0.1:{self.port}",
             "--graceful-timeout", "2", "--timeout", "60", "app:app"],
            cwd=REPO, env=env or app_env(url), stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_up(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited: {self.log_path.read_text()[-2000:]}")
            try:
                if requests.get(f"{self.base}/api/health", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"server {self.base} did not come up: {self.log()[-2000:]}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill9(self) -> None:
        """SIGKILL the whole process group (master and workers): no cleanup runs."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill9()
        self._log.close()


def start_servers(url: str, log_dir: Path, count: int = 2, **kwargs: Any) -> list[AppServer]:
    servers = [AppServer(url, log_dir, **kwargs) for _ in range(count)]
    try:
        for server in servers:
            server.wait_up()
    except Exception:
        for server in servers:
            server.stop()
        raise
    return servers


def login(base: str, username: str, password: str) -> dict[str, str]:
    """Log in through the form on ``base``; returns the cookies of the session."""
    with requests.Session() as s:
        r = s.post(f"{base}/login", data={"username": username, "password": password},
                   allow_redirects=False, timeout=30)
        assert r.status_code == 303, (r.status_code, r.text[:300])
        return s.cookies.get_dict()


def fire(calls: Sequence[Callable[[], requests.Response]]) -> list[requests.Response]:
    """Run every call in its own thread, released together by a barrier; responses in order."""
    barrier = threading.Barrier(len(calls))

    def run(call: Callable[[], requests.Response]) -> requests.Response:
        barrier.wait(timeout=30)
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def client(cookies: dict[str, str] | None = None) -> requests.Session:
    """A fresh session (one per thread: ``requests.Session`` is not thread-safe)."""
    s = requests.Session()
    if cookies:
        s.cookies.update(cookies)
    return s


def engine_for(url: str) -> Engine:
    return create_engine(url, pool_pre_ping=True)


def check_consistency(url: str) -> dict[str, int]:
    """Integrity of the whole database; returns the row count per table.

    SQLite: ``PRAGMA integrity_check`` is ``ok`` and ``PRAGMA foreign_key_check`` is empty.
    PostgreSQL (whose constraints cannot be broken by a crash): every foreign key of every
    table resolves, checked with an anti-join per foreign key, and every table is readable.
    """
    engine = engine_for(url)
    try:
        with engine.connect() as conn:
            tables = sorted(inspect(conn).get_table_names())
            if engine.dialect.name == "sqlite":
                assert conn.exec_driver_sql("PRAGMA integrity_check").scalars().all() == ["ok"]
                assert conn.exec_driver_sql("PRAGMA foreign_key_check").all() == []
            else:
                for table in tables:
                    for fk in inspect(conn).get_foreign_keys(table):
                        cond = " AND ".join(f'c."{a}" IS NOT NULL'
                                            for a in fk["constrained_columns"])
                        join = " AND ".join(f'p."{b}" = c."{a}"' for a, b in
                                            zip(fk["constrained_columns"], fk["referred_columns"]))
                        orphans = conn.execute(text(
                            f'SELECT count(*) FROM "{table}" c WHERE {cond} AND NOT EXISTS '
                            f'(SELECT 1 FROM "{fk["referred_table"]}" p WHERE {join})')).scalar()
                        assert orphans == 0, (table, fk)
            return {t: conn.execute(text(f'SELECT count(*) FROM "{t}"')).scalar() for t in tables}
    finally:
        engine.dispose()


def truncate_all(url: str) -> None:
    """Empty every table of a PostgreSQL database (ids restart): a clean database for the
    next test without the checkpoint that DROP DATABASE costs."""
    from reviewapp.extensions import db

    engine = create_engine(url)
    try:
        tables = ", ".join(f'"{t.name}"' for t in db.metadata.sorted_tables)
        with engine.begin() as conn:
            conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    finally:
        engine.dispose()
