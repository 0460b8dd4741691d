"""SQLite transaction policy (SPEC 11): writers declare intent and wait for the lock.

These tests use their own SQLite file in both test legs: the policy only exists there.
"""

from __future__ import annotations

import sqlite3
import threading

import pytest
from sqlalchemy import Column, Integer, MetaData, Table, bindparam, create_engine, select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from reviewapp import db_setup
from reviewapp.db_setup import install_engine_hooks, write_intent
from reviewapp.prepared import Prepared


@pytest.fixture
def sqlite_file(tmp_path):
    path = tmp_path / "policy.sqlite"
    engine = create_engine(f"sqlite:///{path}")
    install_engine_hooks(engine)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (x INTEGER)")
    yield path, engine
    engine.dispose()


def _hold_write_lock(path):
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    return holder


def test_writer_waits_for_the_lock_then_writes(sqlite_file):
    path, engine = sqlite_file
    holder = _hold_write_lock(path)
    holder.execute("INSERT INTO t VALUES (1)")
    release = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
    release.start()
    with write_intent(), engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO t VALUES (2)")
    release.join()
    holder.close()
    with engine.connect() as conn:
        assert conn.execute(text("SELECT x FROM t ORDER BY x")).scalars().all() == [1, 2]
        # SQLite's own wait is back in place for later (deferred) transactions.
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == db_setup.BUSY_TIMEOUT_MS


def test_writer_gives_up_after_the_wait_with_a_storage_error(sqlite_file, monkeypatch):
    path, engine = sqlite_file
    monkeypatch.setattr(db_setup, "WRITE_LOCK_WAIT_S", 0.05)
    holder = _hold_write_lock(path)
    try:
        with pytest.raises(OperationalError, match="locked"):
            with write_intent(), engine.begin() as conn:
                conn.exec_driver_sql("INSERT INTO t VALUES (3)")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM t")).scalar() == 0


def test_readers_do_not_wait_for_a_writer(sqlite_file):
    path, engine = sqlite_file
    holder = _hold_write_lock(path)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM t")).scalar() == 0
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_configured_busy_timeout_bounds_the_writer_wait(tmp_path):
    """``install_engine_hooks(engine, busy_timeout_ms)`` (config ``SQLITE_BUSY_TIMEOUT_MS``):
    the connection's busy timeout is that value, and a writer facing a held lock gives up
    with a storage error after about that long, not after the 15 s default."""
    import time

    engine = create_engine(f"sqlite:///{tmp_path / 'short.sqlite'}")
    install_engine_hooks(engine, busy_timeout_ms=200)
    install_engine_hooks(engine, busy_timeout_ms=200)  # idempotent: one set of hooks
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (x INTEGER)")
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 200
    holder = _hold_write_lock(tmp_path / "short.sqlite")
    try:
        started = time.monotonic()
        with pytest.raises(OperationalError, match="locked"):
            with write_intent(), engine.begin() as conn:
                conn.exec_driver_sql("INSERT INTO t VALUES (1)")
        assert 0.2 <= time.monotonic() - started < 5
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        engine.dispose()


def test_the_apps_connections_carry_their_settings(session):
    """The app's own connections (either test leg): PostgreSQL runs without JIT (a page's
    badly estimated statement compiled for 2.5 s to run 40 ms, issue 18); SQLite has its
    foreign keys on."""
    connection = session.connection()
    if connection.dialect.name == "postgresql":
        assert connection.exec_driver_sql("SHOW jit").scalar() == "off"
    else:
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_a_read_transaction_reads_one_snapshot(sqlite_file):
    """Without write intent a transaction still begins (plain ``BEGIN`` on the DBAPI
    connection): a second read in it does not see a row another connection committed
    meanwhile; the next transaction does."""
    path, engine = sqlite_file
    other = sqlite3.connect(path, isolation_level=None)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM t")).scalar() == 0
            other.execute("INSERT INTO t VALUES (1)")
            assert conn.execute(text("SELECT count(*) FROM t")).scalar() == 0
            conn.rollback()
            assert conn.execute(text("SELECT count(*) FROM t")).scalar() == 1
    finally:
        other.close()


def test_a_failed_begin_is_a_storage_error(sqlite_file):
    """A ``BEGIN`` the database refuses is raised as SQLAlchemy's ``OperationalError``
    (answered with 503 by the web layer), not as the driver's own exception."""
    _, engine = sqlite_file
    with engine.connect() as conn:
        conn.connection.driver_connection.execute("BEGIN")  # already in a transaction
        with pytest.raises(OperationalError, match="within a transaction"):
            conn.execute(text("SELECT 1"))


def test_a_read_apart_runs_outside_the_session_and_takes_no_lock(sqlite_file):
    """``engine_apart``: under write intent with no transaction open, the session's
    engine (SQLite); a one-statement read on it (``Prepared.one_or_none_apart``) opens no
    session transaction and reads while another writer holds the lock; the session's
    write takes the lock after it."""
    path, engine = sqlite_file
    table = Table("t", MetaData(), Column("x", Integer))
    read = Prepared(select(table.c.x).where(table.c.x == bindparam("x")))
    with engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO t VALUES (7)")
    holder = _hold_write_lock(path)
    try:
        with Session(engine) as session:
            assert db_setup.engine_apart(session) is None  # no write intent: the session's
            with write_intent():
                assert db_setup.engine_apart(session) is engine
                assert read.one_or_none_apart(engine, {"x": 7}).x == 7
                assert read.one_or_none_apart(engine, {"x": 8}) is None
                assert not session.in_transaction()
                holder.execute("ROLLBACK")
                session.connection()  # BEGIN IMMEDIATE: a transaction open, reads go into it
                assert db_setup.engine_apart(session) is None
                session.rollback()
    finally:
        if holder.in_transaction:
            holder.execute("ROLLBACK")
        holder.close()
