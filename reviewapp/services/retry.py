"""Retry a unit of work that lost an insert race (PostgreSQL, concurrent writers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

T = TypeVar("T")
ATTEMPTS = 3


def retry_on_conflict(session: Session, work: Callable[[], T]) -> T:
    """Run ``work`` (which commits); when it loses a race on a unique key, roll back and
    run it again: the second pass sees the winner's committed row and takes the update
    path. SQLite never gets here (writers are serialised by ``BEGIN IMMEDIATE``).
    After ``ATTEMPTS`` the ``IntegrityError`` propagates (answered as 503).
    """
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return work()
        except IntegrityError:
            session.rollback()
            if attempt == ATTEMPTS:
                raise
    raise AssertionError("unreachable")
