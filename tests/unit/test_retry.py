"""``retry_on_conflict``: which lost races are run again, and how often."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy.exc import IntegrityError, OperationalError

from reviewapp.db_setup import is_disk_full
from reviewapp.services.retry import ATTEMPTS, is_lost_race, retry_on_conflict


class _PgError(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


class _Session:
    def __init__(self) -> None:
        self.rollbacks = 0

    def rollback(self) -> None:
        self.rollbacks += 1


def _busy_snapshot() -> sqlite3.OperationalError:
    """The real SQLITE_BUSY_SNAPSHOT: a read transaction upgrading to a write after
    another connection committed (WAL)."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "snap.sqlite")
        a = sqlite3.connect(path, isolation_level=None)
        b = sqlite3.connect(path, isolation_level=None)
        try:
            a.execute("PRAGMA journal_mode=WAL")
            a.execute("CREATE TABLE t (x)")
            a.execute("BEGIN")
            a.execute("SELECT * FROM t").fetchall()
            b.execute("INSERT INTO t VALUES (1)")
            try:
                a.execute("INSERT INTO t VALUES (2)")
            except sqlite3.OperationalError as exc:
                return exc
            raise AssertionError("no SQLITE_BUSY_SNAPSHOT")
        finally:
            a.close()
            b.close()


def _operational(sqlstate: str) -> OperationalError:
    return OperationalError("UPDATE diagnosis_run", None, _PgError(sqlstate))


@pytest.mark.parametrize(("error", "expected"), [
    (IntegrityError("INSERT", None, _PgError("23505")), True),
    (_operational("40P01"), True),   # deadlock_detected
    (_operational("40001"), True),   # serialization_failure
    (_operational("57P01"), False),  # admin_shutdown: the database is going away
    (_operational("55P03"), False),  # lock_not_available: waited long enough, answer 503
    (OperationalError("BEGIN", None, sqlite3.OperationalError("database is locked")), False),
    (OperationalError("INSERT", None, _busy_snapshot()), True),  # a stale read snapshot
])
def test_is_lost_race(error: Exception, expected: bool) -> None:
    assert is_lost_race(error) is expected


def test_a_deadlock_is_rolled_back_and_run_again() -> None:
    session, calls = _Session(), []

    def work() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise _operational("40P01")
        return "done"

    assert retry_on_conflict(session, work) == "done"
    assert (len(calls), session.rollbacks) == (2, 1)


def test_gives_up_after_the_attempts_and_other_errors_pass_at_once() -> None:
    session = _Session()
    with pytest.raises(OperationalError):
        retry_on_conflict(session, lambda: (_ for _ in ()).throw(_operational("40001")))
    assert session.rollbacks == ATTEMPTS
    other = _Session()
    with pytest.raises(OperationalError):
        retry_on_conflict(other, lambda: (_ for _ in ()).throw(_operational("57P01")))
    assert other.rollbacks == 0


def test_is_disk_full() -> None:
    full = OperationalError("INSERT", None, sqlite3.OperationalError("database or disk is full"))
    assert is_disk_full(full)
    assert is_disk_full(OperationalError("INSERT", None, _PgError("53100")))
    assert not is_disk_full(_operational("40P01"))
    assert not is_disk_full(
        OperationalError("BEGIN", None, sqlite3.OperationalError("database is locked")))
