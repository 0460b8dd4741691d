"""Health check."""

from __future__ import annotations

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from ..errors import Unavailable


def check_database(session: Session) -> None:
    """Run ``SELECT 1`` on the session's connection (as the driver's own text: no ORM
    execution, no statement compilation). Raises ``Unavailable`` when the database does
    not answer."""
    try:
        session.connection().exec_driver_sql("SELECT 1")
        session.rollback()
    except SQLAlchemyError:
        session.rollback()
        raise Unavailable() from None
