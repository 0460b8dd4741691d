"""Reading what a service sent and how the database plans it, for the plan tests (issue
18: a list must walk an index, never scan its table): ``sent`` records the statements a
call sends, ``explain`` gives the plan of one of them on either database."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import event

from reviewapp.extensions import db


def sent(call: Callable[[], Any]) -> tuple[Any, list[tuple[str, Any]]]:
    """``call()``'s result and the statements it sent, in order, as (SQL text, parameters)."""
    seen: list[tuple[str, Any]] = []

    def record(conn, cursor, statement, parameters, context, executemany):  # noqa: ANN001
        seen.append((statement, parameters))

    event.listen(db.engine, "before_cursor_execute", record)
    try:
        result = call()
    finally:
        event.remove(db.engine, "before_cursor_execute", record)
    return result, seen


def explain_rows(session, statement: str, parameters: Any) -> list[Any]:
    """The plan's rows: PostgreSQL's ``EXPLAIN`` lines, SQLite's ``EXPLAIN QUERY PLAN``
    rows (id, parent, notused, detail)."""
    connection = session.connection()
    word = "EXPLAIN " if connection.dialect.name == "postgresql" else "EXPLAIN QUERY PLAN "
    return connection.exec_driver_sql(word + statement, parameters).all()


def explain(session, statement: str, parameters: Any) -> str:
    """The plan as text, one line a step: PostgreSQL's lines, SQLite's details."""
    column = 0 if session.connection().dialect.name == "postgresql" else 3
    return "\n".join(row[column] for row in explain_rows(session, statement, parameters))
