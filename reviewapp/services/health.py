"""Health check."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from ..errors import Unavailable


def check_database(session: Session) -> None:
    """Run ``SELECT 1``. Raises ``Unavailable`` when the database does not answer."""
    try:
        session.execute(text("SELECT 1"))
        session.rollback()
    except SQLAlchemyError:
        session.rollback()
        raise Unavailable() from None
