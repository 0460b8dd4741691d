"""The one keyset-pagination recipe of every list page (runs, triage queue, cases):
a sort order is a table row — a label and its keys — and a page is read after the
cursor of the previous one, in one query, however deep (SPEC 8).

A ``SortKey`` is a SQL expression that is never NULL (wrap nullable columns in
``coalesce``), its direction, how to read its value from a row of the page, and the type
a cursor value binds back to. The last key of an order is unique (the id), so rows
sharing every other value (equal timestamps) are neither skipped nor repeated. A cursor
names its order: one made for another order, or tampered with, is ``ValidationFailed``
(field ``cursor``) — so is one holding a value its key's column cannot hold (an integer
outside the column type's range, which would overflow the database driver: a 500; a
float or a bool for an integer; a timestamp without offset or outside year 1..9999 in
UTC; text with NUL, not UTF-8, or longer than the column).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Integer,
    Select,
    SmallInteger,
    String,
    bindparam,
    select,
    union_all,
)
from sqlalchemy.orm import Session

from ..domain.pagination import decode_keyset, encode_keyset
from ..errors import ValidationFailed
from ..queries import keyset_after


@dataclass(frozen=True)
class SortKey:
    """One key of a sort order: ``expression`` (not NULL), ``descending``, ``value`` (the
    key's value of a row, as the expression computes it) and ``kind`` (``int``, ``str``
    or ``datetime``: what a cursor value binds back to; datetimes travel as UTC ISO text).
    An ``int`` key's expression must be typed ``Integer`` (or ``SmallInteger`` /
    ``BigInteger``): its range is what a cursor value is checked against. Raises
    ``TypeError`` otherwise."""

    expression: Any
    descending: bool
    value: Callable[[Any], Any]
    kind: type = int

    def __post_init__(self) -> None:
        if self.kind is int and not isinstance(getattr(self.expression, "type", None), Integer):
            raise TypeError(f"an int sort key needs an Integer expression, not {self.expression!r}")

    def bound(self, value: Any) -> Any:
        """A cursor's stored ``value`` for this key as a bind parameter, checked against
        the column: ``ValueError`` / ``TypeError`` for one it cannot hold."""
        if self.kind is datetime:
            at = datetime.fromisoformat(str(value))
            if at.tzinfo is None:
                raise ValueError("naive")
            return at.astimezone(UTC)  # OverflowError past year 1..9999
        if self.kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError("not an integer")
            low, high = _int_range(self.expression.type)
            if not low <= value <= high:
                raise ValueError("out of the column's range")
            return value
        if not isinstance(value, str) or "\x00" in value:
            raise TypeError("not text")
        value.encode()  # UnicodeEncodeError (a ValueError): a lone surrogate
        length = getattr(getattr(self.expression, "type", None), "length", None)
        if isinstance(self.expression.type, String) and length is not None and len(value) > length:
            raise ValueError("longer than the column")
        return value


@dataclass(frozen=True)
class SortOrder:
    """A named order of a list: ``label`` for people, ``keys`` the unique key last.
    ``identity``: the listed entity's own id column when the last key is a copy of it
    read from another table of the statement (a kept list's ``run_pk``): what ``ordered``
    joins merged rows back on (``None``: the last key itself)."""

    name: str
    label: str
    keys: tuple[SortKey, ...]
    identity: Any = None

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
            return [key.bound(value) for value, key in zip(values, self.keys)]
        except (TypeError, ValueError, OverflowError):
            raise ValidationFailed("cursor", "malformed cursor") from None

    def after(self, row: Any, *, reverse: bool = False) -> Any:
        """WHERE: the row comes after ``row`` in this order (``reverse``: before it)."""
        return keyset_after(self.pairs(), self.bind(self.values(row)), reverse=reverse)

    def after_params(self, prefix: str, *, reverse: bool = False) -> Any:
        """``after`` with the row's key values as bound parameters ``:<prefix>0``,
        ``:<prefix>1`` ... (``params`` gives their values): a statement built once serves
        every row."""
        values = [bindparam(f"{prefix}{i}", type_=key.expression.type)
                  for i, key in enumerate(self.keys)]
        return keyset_after(self.pairs(), values, reverse=reverse)

    def params(self, prefix: str, row: Any) -> dict[str, Any]:
        """The values of ``after_params(prefix)``'s parameters for ``row``."""
        return {f"{prefix}{i}": value
                for i, value in enumerate(self.bind(self.values(row)))}

    def encode(self, row: Any) -> str:
        """The cursor of the page that follows ``row``."""
        return encode_keyset(self.name, self.values(row))

    def position(self, cursor: str) -> list[Any]:
        """The key values ``cursor`` holds, checked and bound as ``decode`` binds them (a
        list computed in Python pages with them). Raises ``ValidationFailed`` (field
        ``cursor``) for a cursor that is malformed or made for another order."""
        try:
            raw = decode_keyset(cursor, self.name, len(self.keys))
        except ValueError:
            raise ValidationFailed("cursor", "malformed cursor") from None
        return self.bind(raw)

    def decode(self, cursor: str) -> Any:
        """WHERE: the rows after ``cursor``. Raises ``ValidationFailed`` for a cursor that
        is malformed or made for another order."""
        return keyset_after(self.pairs(), self.position(cursor))


def _stored(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    return value


def _int_range(column_type: Integer) -> tuple[int, int]:
    """The values an integer column type holds: PostgreSQL's smallint, integer (also
    ``models.base.MAX_ID``) and bigint; SQLite's integers are 64-bit, so the narrower
    PostgreSQL range is the one both databases hold."""
    bits = 16 if isinstance(column_type, SmallInteger) else (
        64 if isinstance(column_type, BigInteger) else 32)
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def ordered(stmts: Select[Any] | Sequence[Select[Any]], order: SortOrder, limit: int, *,
            reverse: bool = False, rows: Select[Any] | None = None) -> Select[Any]:
    """The first ``limit`` rows of ``stmts`` in ``order`` (``reverse``: the opposite way).

    ``stmts`` is one statement, or several selecting the same entity over disjoint row
    sets (one per workspace, say): each is then read as its own ordered range of at most
    ``limit`` rows — an index range when an index gives the order within it — and the
    ranges are merged by the keys (UNION ALL, then ORDER BY ... LIMIT over at most
    ``limit`` x the number of statements rows). The merged statement joins back to the
    entity on the order's last key (its unique id), so it yields the same records; a
    statement of several entities (joins) passes ``rows``, the same select without the
    conditions, which the merged ids then pick from."""
    if isinstance(stmts, Select):
        stmts = [stmts]
    if len(stmts) == 1:
        return stmts[0].order_by(*order.order_by(reverse=reverse)).limit(limit)
    keys = [key.expression.label(f"k{j}") for j, key in enumerate(order.keys)]
    arms = []
    for stmt in stmts:
        arm = (stmt.with_only_columns(*keys, maintain_column_froms=True)
               .order_by(*order.order_by(reverse=reverse)).limit(limit).subquery())
        arms.append(select(*arm.c))
    merged = union_all(*arms).subquery()
    merge_order = [merged.c[f"k{j}"].desc() if key.descending != reverse
                   else merged.c[f"k{j}"].asc() for j, key in enumerate(order.keys)]
    identity = order.keys[-1].expression if order.identity is None else order.identity
    on = identity == merged.c[f"k{len(order.keys) - 1}"]
    if rows is not None:
        return rows.join(merged, on).order_by(*merge_order).limit(limit)
    first = stmts[0]
    entity = first.column_descriptions[0]["entity"]
    return (select(*[d["expr"] for d in first.column_descriptions]).select_from(merged)
            .join(entity, on)
            .order_by(*merge_order).limit(limit))


def page(session: Session, stmt: Select[Any] | Sequence[Select[Any]], order: SortOrder,
         cursor: str | None,
         limit: int, *, last: Callable[[Any], Any] = lambda record: record,
         scalars: bool = False, rows: Select[Any] | None = None) -> tuple[list[Any], str | None]:
    """One page of ``stmt`` in ``order`` after ``cursor`` (``None``: the first page):
    (records, the next page's cursor or ``None`` on the last page). ``scalars`` reads
    the first column only (ORM objects); ``last`` picks the row the keys are read from
    out of a record. ``stmt`` may be several statements over disjoint rows (one per
    workspace): they are merged (``ordered``, which takes ``rows``). One query. Raises ``ValidationFailed`` for
    a bad cursor."""
    stmts = [stmt] if isinstance(stmt, Select) else list(stmt)
    if cursor:
        after = order.decode(cursor)
        stmts = [s.where(after) for s in stmts]
    stmt = ordered(stmts, order, limit + 1, rows=rows)
    records = list(session.scalars(stmt)) if scalars else session.execute(stmt).all()
    if len(records) <= limit:
        return records, None
    records = records[:limit]
    return records, order.encode(last(records[-1]))


def previous(session: Session, stmt: Select[Any] | Sequence[Select[Any]], order: SortOrder,
             first: Any, limit: int, *, scalars: bool = False) -> tuple[bool, str | None]:
    """The page before the one that starts with row ``first`` (read with ``page``):
    (whether there is one, its cursor — ``None`` when it is the first page). One query:
    up to ``limit`` + 1 rows before ``first``, read backwards; the row just before the
    previous page is the one whose cursor opens it. ``stmt`` as in ``page``."""
    before = order.after(first, reverse=True)
    stmts = [stmt] if isinstance(stmt, Select) else list(stmt)
    stmt = ordered([s.where(before) for s in stmts], order, limit + 1, reverse=True)
    records = list(session.scalars(stmt)) if scalars else session.execute(stmt).all()
    if not records:
        return False, None
    if len(records) <= limit:
        return True, None
    return True, order.encode(records[limit])
