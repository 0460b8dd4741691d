"""Retry a unit of work that lost a race (PostgreSQL, concurrent writers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session

T = TypeVar("T")
ATTEMPTS = 3
# PostgreSQL SQLSTATEs that mean "this transaction lost to a concurrent one; running it
# again is safe": deadlock_detected, serialization_failure.
RETRYABLE_SQLSTATES = frozenset({"40P01", "40001"})
# SQLite's SQLITE_BUSY_SNAPSHOT: a deferred (read) transaction tried to write after another
# connection committed; its snapshot is stale, waiting cannot help, a fresh transaction can.
SQLITE_BUSY_SNAPSHOT = 517


def is_lost_race(error: BaseException) -> bool:
    """Whether ``error`` is a unique-key race, a PostgreSQL deadlock / serialization
    failure, or SQLite's stale read snapshot (SQLITE_BUSY_SNAPSHOT, a read transaction
    upgrading to a write after another writer committed): the transaction is rolled back
    and may simply be run again. Plain SQLITE_BUSY (the lock wait ran out) is not."""
    if isinstance(error, IntegrityError):
        return True
    if isinstance(error, DBAPIError):
        if getattr(error.orig, "sqlite_errorcode", None) == SQLITE_BUSY_SNAPSHOT:
            return True
        return getattr(error.orig, "sqlstate", None) in RETRYABLE_SQLSTATES
    return False


def retry_on_conflict(session: Session, work: Callable[[], T]) -> T:
    """Run ``work`` (which commits); when it loses a race — a unique key taken by a
    concurrent insert, or a PostgreSQL deadlock / serialization failure — roll back and
    run it again: the second pass sees the winner's committed rows and takes the update
    path. On SQLite writers are serialised by ``BEGIN IMMEDIATE``; a caller without the
    write intent whose read snapshot went stale is run again in a fresh transaction.
    After ``ATTEMPTS`` the error propagates (answered as 503).
    """
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return work()
        except DBAPIError as exc:
            if not is_lost_race(exc):
                raise
            session.rollback()
            if attempt == ATTEMPTS:
                raise
    raise AssertionError("unreachable")
