"""The one keyset-pagination recipe of every list page (runs, triage queue, cases):
a sort order is a table row — a label and its keys — and a page is read after the
cursor of the previous one, in one query, however deep (SPEC 8).

A ``SortKey`` is a SQL expression that is never NULL (wrap nullable columns in
``coalesce``), its direction, how to read its value from a row of the page, and the type
a cursor value binds back to. The last key of an order is unique (the id), so rows
sharing every other value (equal timestamps) are neither skipped nor repeated. A cursor
names its order: one made for another order, or tampered with, is ``ValidationFailed``
(field ``cursor``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select
from sqlalchemy.orm import Session

from ..domain.pagination import decode_keyset, encode_keyset
from ..errors import ValidationFailed
from ..queries import keyset_after


@dataclass(frozen=True)
class SortKey:
    """One key of a sort order: ``expression`` (not NULL), ``descending``, ``value`` (the
    key's value of a row, as the expression computes it) and ``kind`` (``int``, ``str``
    or ``datetime``: what a cursor value binds back to; datetimes travel as UTC ISO text)."""

    expression: Any
    descending: bool
    value: Callable[[Any], Any]
    kind: type = int


@dataclass(frozen=True)
class SortOrder:
    """A named order of a list: ``label`` for people, ``keys`` the unique key last."""

    name: str
    label: str
    keys: tuple[SortKey, ...]

    def order_by(self, *, reverse: bool = False) -> list[Any]:
        """The ORDER BY clauses (``reverse``: the opposite direction, for "previous")."""
        return [key.expression.desc() if key.descending != reverse else key.expression.asc()
                for key in self.keys]

    def pairs(self) -> list[tuple[Any, bool]]:
        """(expression, descending) pairs, as ``queries.keyset_after`` takes them."""
        return [(key.expression, key.descending) for key in self.keys]

    def values(self, row: Any) -> list[Any]:
        """``row``'s key values as a cursor stores them (datetimes as UTC ISO text)."""
        return [_stored(key.value(row)) for key in self.keys]

    def bind(self, values: Sequence[Any]) -> list[Any]:
        """Stored cursor values back to bind parameters. Raises ``ValidationFailed``."""
        try:
            return [_bound(value, key.kind) for value, key in zip(values, self.keys)]
        except (TypeError, ValueError):
            raise ValidationFailed("cursor", "malformed cursor") from None

    def after(self, row: Any, *, reverse: bool = False) -> Any:
        """WHERE: the row comes after ``row`` in this order (``reverse``: before it)."""
        return keyset_after(self.pairs(), self.bind(self.values(row)), reverse=reverse)

    def encode(self, row: Any) -> str:
        """The cursor of the page that follows ``row``."""
        return encode_keyset(self.name, self.values(row))

    def decode(self, cursor: str) -> Any:
        """WHERE: the rows after ``cursor``. Raises ``ValidationFailed`` for a cursor that
        is malformed or made for another order."""
        try:
            raw = decode_keyset(cursor, self.name, len(self.keys))
        except ValueError:
            raise ValidationFailed("cursor", "malformed cursor") from None
        return keyset_after(self.pairs(), self.bind(raw))


def _stored(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    return value


def _bound(value: Any, kind: type) -> Any:
    if kind is datetime:
        at = datetime.fromisoformat(str(value))
        if at.tzinfo is None:
            raise ValueError("naive")
        return at
    if kind is int:
        return int(value)
    if not isinstance(value, str):
        raise TypeError("not text")
    return value


def page(session: Session, stmt: Select[Any], order: SortOrder, cursor: str | None,
         limit: int, *, last: Callable[[Any], Any] = lambda record: record,
         scalars: bool = False) -> tuple[list[Any], str | None]:
    """One page of ``stmt`` in ``order`` after ``cursor`` (``None``: the first page):
    (records, the next page's cursor or ``None`` on the last page). ``scalars`` reads
    the first column only (ORM objects); ``last`` picks the row the keys are read from
    out of a record. One query. Raises ``ValidationFailed`` for a bad cursor."""
    if cursor:
        stmt = stmt.where(order.decode(cursor))
    stmt = stmt.order_by(*order.order_by()).limit(limit + 1)
    records = list(session.scalars(stmt)) if scalars else session.execute(stmt).all()
    if len(records) <= limit:
        return records, None
    records = records[:limit]
    return records, order.encode(last(records[-1]))


def previous(session: Session, stmt: Select[Any], order: SortOrder, first: Any, limit: int, *,
             scalars: bool = False) -> tuple[bool, str | None]:
    """The page before the one that starts with row ``first`` (read with ``page``):
    (whether there is one, its cursor — ``None`` when it is the first page). One query:
    up to ``limit`` + 1 rows before ``first``, read backwards; the row just before the
    previous page is the one whose cursor opens it."""
    stmt = stmt.where(order.after(first, reverse=True)).order_by(
        *order.order_by(reverse=True)).limit(limit + 1)
    records = list(session.scalars(stmt)) if scalars else session.execute(stmt).all()
    if not records:
        return False, None
    if len(records) <= limit:
        return True, None
    return True, order.encode(records[limit])
