"""Hot-path statements run on the DBAPI cursor of the current SQLAlchemy connection.

SQLAlchemy's ``Connection.execute`` costs 40-250 us a statement on top of the database's
own work (cache lookup, an execution context, parameter and result objects, events),
against a few microseconds for the DBAPI cursor: a quarter of a rating's request
(issue 18, profiled). A ``Prepared`` statement is compiled once per dialect — SQL text,
parameter order, the column types' bind and result processors (``UTCDateTime``, JSON,
SQLite's datetime text) — and then run on the connection's own DBAPI connection, in the
transaction the session or connection already holds.

The engine's statement hooks keep seeing every statement: while anything listens to
``before_cursor_execute`` / ``after_cursor_execute`` (statement counters and timers,
``tests/test_query_counts.py``), the statement goes through ``exec_driver_sql`` with the
same SQL and parameters, so the listeners see it as before. A database error is raised
as SQLAlchemy's wrapped ``DBAPIError`` subclass, as ``Connection.execute`` raises it
(``errors.py`` maps storage errors to 503).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy.engine import Connection, Dialect, Engine
from sqlalchemy.exc import DBAPIError

from .db_setup import read_intent


class _Plan:
    """One statement compiled for one dialect."""

    __slots__ = ("sql", "names", "positional", "binds", "defaults", "row", "results")

    def __init__(self, stmt: Any, dialect: Dialect, column_keys: list[str] | None) -> None:
        compiled = stmt.compile(dialect=dialect, column_keys=column_keys)
        if compiled.post_compile_params or compiled.literal_execute_params:
            # An expanding ``IN`` is rendered per execution: not a fixed SQL text.
            raise ValueError("Prepared takes no expanding IN (...) list; bind each value")
        self.sql = compiled.string
        self.positional = compiled.positional
        self.names = tuple(compiled.positiontup or ()) if compiled.positional \
            else tuple(compiled.bind_names.values())
        binds = {compiled.bind_names[param]: param for param in compiled.bind_names}
        self.binds: dict[str, Callable[[Any], Any]] = {}
        self.defaults: dict[str, Any] = {}
        for name in self.names:
            param = binds[name]
            processor = param.type.dialect_impl(dialect).bind_processor(dialect)
            if processor is not None:
                self.binds[name] = processor
            if not param.required:
                self.defaults[name] = param.effective_value
        columns = _returned(stmt)
        self.row = namedtuple("Row", [c.key for c in columns], rename=True) if columns else None
        self.results = tuple(c.type.dialect_impl(dialect).result_processor(dialect, None)
                             for c in columns)

    def parameters(self, params: Mapping[str, Any]) -> Any:
        values = []
        for name in self.names:
            value = params[name] if name in params else self.defaults[name]
            processor = self.binds.get(name)
            values.append(value if processor is None else processor(value))
        return tuple(values) if self.positional else dict(zip(self.names, values, strict=True))

    def rows(self, raw: list[tuple]) -> list[Any]:
        out = []
        for values in raw:
            out.append(self.row._make([v if p is None else p(v)
                                       for v, p in zip(values, self.results, strict=True)]))
        return out


def _returned(stmt: Any) -> list[Any]:
    """The columns a statement returns: a SELECT's, or an INSERT's ``RETURNING``."""
    if getattr(stmt, "is_select", False):
        return list(stmt.selected_columns)
    returning = getattr(stmt, "_returning", ())
    return [c for element in returning for c in getattr(element, "columns", [element])]


class Prepared:
    """A Core statement (bound parameters only, no ORM entities) run on a connection's
    DBAPI cursor: ``rows(connection, params)`` -> a list of named tuples (the columns'
    keys; values converted as SQLAlchemy would: datetimes, JSON), ``execute`` for a
    statement without rows. Parameters by bind name; a value bound at build time (a
    literal) is used unless given; an expanding ``IN`` list is refused (``ValueError``). ``column_keys``: the
    columns an ``INSERT`` without ``values()`` sets (as ``Connection.execute`` derives
    them from its parameters)."""

    def __init__(self, stmt: Any, column_keys: list[str] | None = None) -> None:
        self.stmt = stmt
        self.column_keys = column_keys
        self._plans: dict[str, _Plan] = {}

    def _plan(self, dialect: Dialect) -> _Plan:
        plan = self._plans.get(dialect.name)
        if plan is None:
            plan = self._plans[dialect.name] = _Plan(self.stmt, dialect, self.column_keys)
        return plan

    def rows(self, connection: Connection, params: Mapping[str, Any]) -> list[Any]:
        """Run the statement in the connection's transaction; its rows (empty without)."""
        plan = self._plan(connection.dialect)
        values = plan.parameters(params)
        dispatch = connection.dispatch
        if dispatch.before_cursor_execute or dispatch.after_cursor_execute:
            result = connection.exec_driver_sql(plan.sql, values)
            return plan.rows(result.fetchall()) if plan.row is not None else []
        raw = connection.connection.driver_connection
        cursor = raw.cursor()
        try:
            cursor.execute(plan.sql, values)
            fetched = cursor.fetchall() if plan.row is not None else []
        except connection.dialect.loaded_dbapi.Error as exc:
            raise DBAPIError.instance(plan.sql, values, exc,
                                      connection.dialect.loaded_dbapi.Error) from exc
        finally:
            cursor.close()
        return plan.rows(fetched) if plan.row is not None else []

    def one_or_none(self, connection: Connection, params: Mapping[str, Any]) -> Any:
        """The statement's single row, or ``None``; more than one row is a bug (``AssertionError``)."""
        found = self.rows(connection, params)
        assert len(found) <= 1, f"{len(found)} rows from a one-row statement"
        return found[0] if found else None

    def one_or_none_apart(self, engine: Engine, params: Mapping[str, Any]) -> Any:
        """``one_or_none`` outside any session: on a connection of ``engine``'s pool, the
        statement its own read transaction (SQLite's autocommit, ``db_setup`` sets
        pysqlite's ``isolation_level`` to ``None``), the connection back in the pool
        after. For a read apart from a write transaction (``db_setup.engine_apart``).
        While statement listeners listen, it goes through an engine connection in a
        plain ``BEGIN`` (``read_intent``), so they see it as before."""
        plan = self._plan(engine.dialect)
        values = plan.parameters(params)
        dispatch = engine.dispatch
        if dispatch.before_cursor_execute or dispatch.after_cursor_execute:
            with read_intent(), engine.connect() as connection:
                fetched = connection.exec_driver_sql(plan.sql, values).fetchall()
                connection.commit()
        else:
            pooled = engine.raw_connection()
            try:
                cursor = pooled.driver_connection.cursor()
                try:
                    cursor.execute(plan.sql, values)
                    fetched = cursor.fetchall()
                except engine.dialect.loaded_dbapi.Error as exc:
                    raise DBAPIError.instance(plan.sql, values, exc,
                                              engine.dialect.loaded_dbapi.Error) from exc
                finally:
                    cursor.close()
            finally:
                pooled.close()
        found = plan.rows(fetched)
        assert len(found) <= 1, f"{len(found)} rows from a one-row statement"
        return found[0] if found else None

    def execute(self, connection: Connection, params: Mapping[str, Any]) -> None:
        """Run a statement that returns no rows."""
        self.rows(connection, params)
