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


def is_lost_race(error: BaseException) -> bool:
    """Whether ``error`` is a unique-key race or a PostgreSQL deadlock / serialization
    failure: the transaction was rolled back and may simply be run again."""
    if isinstance(error, IntegrityError):
        return True
    if isinstance(error, DBAPIError):
        return getattr(error.orig, "sqlstate", None) in RETRYABLE_SQLSTATES
    return False


def retry_on_conflict(session: Session, work: Callable[[], T]) -> T:
    """Run ``work`` (which commits); when it loses a race — a unique key taken by a
    concurrent insert, or a PostgreSQL deadlock / serialization failure — roll back and
    run it again: the second pass sees the winner's committed rows and takes the update
    path. SQLite never gets here (writers are serialised by ``BEGIN IMMEDIATE``).
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
