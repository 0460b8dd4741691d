"""Per-connection database settings (SPEC 11): SQLite in WAL mode with foreign keys;
PostgreSQL without JIT compilation.

SQLite transactions: readers use plain (deferred) ``BEGIN`` and never block anybody in
WAL mode. A unit of work that will write declares it with ``write_intent()`` (the web
layer does so for every non-GET request), and its transaction then starts with ``BEGIN
IMMEDIATE``: the writer waits for the lock up front (``busy_timeout``) instead of failing
with "database is locked" when a read transaction tries to upgrade after another writer
committed.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import scoped_session

_immediate: ContextVar[bool] = ContextVar("reviewapp_sqlite_immediate", default=False)

BUSY_TIMEOUT_MS = 15000  # SQLite's own wait for a lock (deferred transactions)
WRITE_LOCK_WAIT_S = BUSY_TIMEOUT_MS / 1000  # how long BEGIN IMMEDIATE waits for the lock
WRITE_LOCK_POLL_S = 0.0005


@contextmanager
def write_intent() -> Iterator[None]:
    """Within this block, SQLite transactions begin with ``BEGIN IMMEDIATE``."""
    token = _immediate.set(True)
    try:
        yield
    finally:
        _immediate.reset(token)


@contextmanager
def read_intent() -> Iterator[None]:
    """Within this block, SQLite transactions begin with plain ``BEGIN`` even inside a
    state-changing request: for a read that must not queue behind writers (WAL readers
    never wait). The block must end its transaction before it is left."""
    token = _immediate.set(False)
    try:
        yield
    finally:
        _immediate.reset(token)


def engine_apart(session: Any) -> Engine | None:
    """The engine to run a read at the start of a state-changing unit of work on, apart
    from its write transaction (issue 18, request stack), or ``None``: read in the
    session's transaction.

    On SQLite under ``write_intent`` with no transaction open on ``session`` yet, the
    read goes to a pooled connection of the engine outside the session, one statement in
    autocommit (``Prepared.one_or_none_apart``): it takes no write lock, so the unit's
    parsing and validation run outside any transaction and its write starts a fresh
    ``BEGIN IMMEDIATE`` that holds the lock only while it writes. No session transaction
    is opened and committed for it (~0.2 ms of CPU a request: SessionTransaction,
    Connection, begin and commit). Anywhere else (PostgreSQL, where BEGIN takes no
    lock; a read-only request; a transaction already open) ``None``."""
    if not _immediate.get():
        return None
    own = session() if isinstance(session, scoped_session) else session
    if own.in_transaction():
        return None
    engine = own.get_bind()
    return engine if engine.dialect.name == "sqlite" else None


def set_write_intent(value: bool) -> Any:
    """Set the write intent for the current context; returns a token for ``reset_write_intent``."""
    return _immediate.set(value)


def reset_write_intent(token: Any) -> None:
    _immediate.reset(token)


def _sqlite_on_connect(dbapi_connection: Any, connection_record: Any,
                       busy_timeout_ms: int | None = None) -> None:
    # Let SQLAlchemy emit BEGIN itself (see _sqlite_on_begin) instead of pysqlite's
    # implicit transactions.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms or BUSY_TIMEOUT_MS)}")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _sqlite_on_begin(conn: Any, busy_timeout_ms: int | None = None) -> None:
    raw = conn.connection.driver_connection
    if not _immediate.get():
        _begin_deferred(raw)
        return
    _begin_immediate(raw, busy_timeout_ms)


def _begin_deferred(raw: sqlite3.Connection) -> None:
    """Plain ``BEGIN`` on the DBAPI connection itself, like ``BEGIN IMMEDIATE``: through
    ``exec_driver_sql`` it cost ~40 us of SQLAlchemy's statement machinery on every read
    transaction (issue 18, request stack; statement counts never include BEGIN). An
    error is wrapped as SQLAlchemy wraps it (``errors.py`` answers a storage error with
    503)."""
    try:
        raw.execute("BEGIN")
    except sqlite3.Error as exc:
        raise DBAPIError.instance("BEGIN", None, exc, sqlite3.Error) from exc


def _begin_immediate(raw: sqlite3.Connection, busy_timeout_ms: int | None = None) -> None:
    """``BEGIN IMMEDIATE``, waiting for the write lock in steps of ``WRITE_LOCK_POLL_S``
    for up to ``WRITE_LOCK_WAIT_S`` seconds (or ``busy_timeout_ms`` when the engine was
    given one), then raising ``OperationalError`` ("database is locked").

    SQLite's own busy handler backs off to sleeps of 100 ms: under steady write traffic
    a waiting process keeps sleeping while the holder takes the lock again, so a request
    can wait for hundreds of milliseconds for a lock that is free most of the time. A
    short, constant poll hands the lock over within a fraction of a millisecond.
    """
    busy_ms = int(busy_timeout_ms or BUSY_TIMEOUT_MS)
    wait_s = busy_timeout_ms / 1000 if busy_timeout_ms else WRITE_LOCK_WAIT_S
    raw.execute("PRAGMA busy_timeout=0")
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                raw.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    # Raised from the "begin" event, outside SQLAlchemy's own wrapping:
                    # wrap it so the edge maps it like any storage error (503).
                    raise OperationalError("BEGIN IMMEDIATE", None, exc) from exc
            time.sleep(WRITE_LOCK_POLL_S)
    finally:
        raw.execute(f"PRAGMA busy_timeout={busy_ms}")


def _postgres_on_connect(dbapi_connection: Any, connection_record: Any) -> None:
    """PostgreSQL: no JIT compilation. A page's statement whose filter the planner cannot
    estimate (``lower(title) LIKE '%deploy%'`` under a LIMIT) is costed far above
    ``jit_above_cost`` and spent 2.5 s compiling to run 40 ms (issue 18, cases search at
    a million runs); the app's statements are short index reads, where JIT never pays."""
    autocommit = dbapi_connection.autocommit
    dbapi_connection.autocommit = True
    with dbapi_connection.cursor() as cursor:
        cursor.execute("SET jit = off")
    dbapi_connection.autocommit = autocommit


def install_engine_hooks(engine: Engine, busy_timeout_ms: int | None = None) -> None:
    """Attach the SQLite pragmas and BEGIN policy to ``engine``; on PostgreSQL turn JIT
    off for its connections (``_postgres_on_connect``).

    ``busy_timeout_ms``: how long a writer waits for the lock before the request fails
    with a storage error (503); ``None`` keeps ``BUSY_TIMEOUT_MS`` (config
    ``SQLITE_BUSY_TIMEOUT_MS``). Installed once per engine.
    """
    if getattr(engine, "_reviewapp_hooks", False):
        return
    if engine.dialect.name == "postgresql":
        event.listen(engine, "connect", _postgres_on_connect)
        engine._reviewapp_hooks = True  # type: ignore[attr-defined]
    if engine.dialect.name != "sqlite":
        return

    def on_connect(dbapi_connection: Any, connection_record: Any) -> None:
        _sqlite_on_connect(dbapi_connection, connection_record, busy_timeout_ms)

    def on_begin(conn: Any) -> None:
        _sqlite_on_begin(conn, busy_timeout_ms)

    event.listen(engine, "connect", on_connect)
    event.listen(engine, "begin", on_begin)
    engine._reviewapp_hooks = True  # type: ignore[attr-defined]


DISK_FULL_MESSAGE = ("The database is full (no space left on its disk, or its size limit "
                     "reached); nothing was saved. Free space and try again.")


def is_disk_full(error: BaseException) -> bool:
    """Whether a storage error means "out of space": SQLite ``SQLITE_FULL`` ("database or
    disk is full") or PostgreSQL ``disk_full`` (SQLSTATE 53100)."""
    orig = getattr(error, "orig", None) or error
    if getattr(orig, "sqlstate", None) == "53100":
        return True
    return isinstance(orig, sqlite3.OperationalError) and "database or disk is full" in str(orig)
