"""The full-text index of run text, the part that differs by database (beside queries.py).

One row per run holds its folded text (``domain.search_text.fold``) in three fields:
``query``, ``answer`` and ``other`` (run id, session id, tool calls' names, arguments,
results and errors). The services rewrite a run's row whenever they write its text
(``services.run_text.store_run_text``); the migration ``7c3e5a1f0b29`` made the rows
of the runs that existed before.

* SQLite: ``run_search``, an FTS5 table with the ``trigram`` tokenizer (case-sensitive,
  the text is already folded), rowid = ``diagnosis_run.id``. A term is an FTS5 phrase, so
  a run matches when the term is a substring of one field. A trigger removes the row of
  a deleted run (foreign keys cannot point at a virtual table).
* PostgreSQL: ``run_search`` a plain table (``run_pk`` references the run, ON DELETE
  CASCADE) with one ``pg_trgm`` GIN index over the three fields joined by
  ``SEPARATOR``; a term is ``LIKE '%term%'`` on that expression, which the index answers
  (substring semantics, like the LIKE search it replaces; a tsvector would find words, not
  the substrings and run-id fragments people type).

Neither structure is in the SQLAlchemy metadata: ``create_all`` gets them through
``install`` (a metadata event) and Alembic autogenerate skips ``SEARCH_TABLE*``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Integer, bindparam, event, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement
from sqlalchemy.sql.visitors import InternalTraversal
from sqlalchemy.types import NullType

from .domain.search_text import RANK_ANSWER, RANK_OTHER, RANK_QUERY, SEPARATOR

SEARCH_TABLE = "run_search"

SQLITE_DDL = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {SEARCH_TABLE} USING fts5("
    "query, answer, other, tokenize = 'trigram case_sensitive 1')",
    f"CREATE TRIGGER IF NOT EXISTS {SEARCH_TABLE}_forget AFTER DELETE ON diagnosis_run "
    f"BEGIN DELETE FROM {SEARCH_TABLE} WHERE rowid = old.id; END",
)
_PG_TEXT = "(query || E'\\x1f' || answer || E'\\x1f' || other)"
POSTGRESQL_DDL = (
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    f"CREATE TABLE IF NOT EXISTS {SEARCH_TABLE} ("
    "run_pk integer PRIMARY KEY REFERENCES diagnosis_run (id) ON DELETE CASCADE, "
    "query text NOT NULL DEFAULT '', answer text NOT NULL DEFAULT '', "
    "other text NOT NULL DEFAULT '')",
    f"CREATE INDEX IF NOT EXISTS ix_{SEARCH_TABLE}_text ON {SEARCH_TABLE} "
    f"USING gin ({_PG_TEXT} gin_trgm_ops)",
)
assert SEPARATOR == "\x1f"  # the E'\x1f' of the PostgreSQL expression


def include_name(name: str | None, type_: str, parent_names: Any) -> bool:
    """Alembic's ``include_name`` hook: False for the index's tables (and SQLite's
    shadow tables ``run_search_data`` ...), which no model describes."""
    return not (type_ == "table" and name is not None and name.startswith(SEARCH_TABLE))


def ddl(dialect: str) -> tuple[str, ...]:
    """The statements that create the index on ``dialect`` (sqlite | postgresql)."""
    return SQLITE_DDL if dialect == "sqlite" else POSTGRESQL_DDL


def drop_ddl(dialect: str) -> tuple[str, ...]:
    """The statements that remove it."""
    if dialect == "sqlite":
        return (f"DROP TRIGGER IF EXISTS {SEARCH_TABLE}_forget", f"DROP TABLE IF EXISTS {SEARCH_TABLE}")
    return (f"DROP TABLE IF EXISTS {SEARCH_TABLE}",)


def install(metadata: Any) -> None:
    """Create the index after ``metadata.create_all`` and drop it before ``drop_all``."""
    def created(target: Any, connection: Connection, **kw: Any) -> None:
        for statement in ddl(connection.dialect.name):
            connection.execute(text(statement))

    def dropping(target: Any, connection: Connection, **kw: Any) -> None:
        for statement in drop_ddl(connection.dialect.name):
            connection.execute(text(statement))

    event.listen(metadata, "after_create", created)
    event.listen(metadata, "before_drop", dropping)


def write(connection: Connection, rows: list[dict[str, Any]]) -> None:
    """Replace the rows of the runs ``rows`` name: each {run_pk, query, answer, other},
    already folded. Two statements (a delete and a multi-row insert)."""
    if not rows:
        return
    key = "rowid" if connection.dialect.name == "sqlite" else "run_pk"
    connection.execute(text(f"DELETE FROM {SEARCH_TABLE} WHERE {key} IN :pks").bindparams(
        bindparam("pks", expanding=True)), {"pks": [row["run_pk"] for row in rows]})
    connection.execute(text(f"INSERT INTO {SEARCH_TABLE} ({key}, query, answer, other) "
                            "VALUES (:run_pk, :query, :answer, :other)"), rows)


def like_pattern(term: str) -> str:
    """``%term%`` with ``\\``, ``%`` and ``_`` escaped (LIKE ... ESCAPE '\\')."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def fts_phrase(term: str) -> str:
    """``term`` as one FTS5 phrase (a string in double quotes, quotes doubled): with the
    trigram tokenizer it matches where the term is a substring."""
    return '"' + term.replace('"', '""') + '"'


class _OnRun(ColumnElement[Any]):
    """A condition or value about the run whose primary key is ``pk`` and a folded search
    term. Cacheable: the term travels as bound parameters (``term``; ``phrase`` and
    ``pattern``, its FTS5 and LIKE forms), so a statement compiles once per shape."""

    inherit_cache = True
    _traverse_internals = [
        ("pk", InternalTraversal.dp_clauseelement),
        ("term", InternalTraversal.dp_clauseelement),
        ("phrase", InternalTraversal.dp_clauseelement),
        ("pattern", InternalTraversal.dp_clauseelement),
    ]
    # Not Boolean: SQLite (no native boolean) would get "(...) = 1", which hides the IN
    # from its planner and turns an index lookup into a scan of every run.
    type = NullType()

    def __init__(self, pk: Any, term: str) -> None:
        self.pk = pk
        self.term = bindparam(None, term, unique=True)
        self.phrase = bindparam(None, fts_phrase(term), unique=True)
        self.pattern = bindparam(None, like_pattern(term), unique=True)


class TextMatch(_OnRun):
    """Condition: the run has the term (at least ``MIN_INDEXED_CHARS`` long) in one of
    its indexed fields. Answered by the index."""

    inherit_cache = True


class TextProbe(_OnRun):
    """Condition: like ``TextMatch``, asked of the index once per run (by its id) instead
    of reading every match first: for a term that many runs hold, where the list's own
    order finds a page (and the capped count its cap) after a few runs."""

    inherit_cache = True


class TextContains(_OnRun):
    """Condition: like ``TextMatch`` for any term (also a short one), tested on the run's
    row of the index by primary key: for a bounded set of runs, not a whole list."""

    inherit_cache = True


class TextRank(_OnRun):
    """The rank of a run for the term (``domain.search_text.rank``, computed on the
    index's folded fields): ``RANK_QUERY`` | ``RANK_ANSWER`` | ``RANK_OTHER``, ``0`` for a
    run without an index row."""

    inherit_cache = True
    type = Integer()


@compiles(TextMatch, "sqlite")
def _match_sqlite(element: TextMatch, compiler: Any, **kw: Any) -> str:
    return (f"{compiler.process(element.pk, **kw)} IN (SELECT rowid FROM {SEARCH_TABLE} "
            f"WHERE {SEARCH_TABLE} MATCH {compiler.process(element.phrase, **kw)})")


@compiles(TextMatch, "postgresql")
def _match_postgresql(element: TextMatch, compiler: Any, **kw: Any) -> str:
    return (f"{compiler.process(element.pk, **kw)} IN (SELECT run_pk FROM {SEARCH_TABLE} "
            f"WHERE {_PG_TEXT} LIKE {compiler.process(element.pattern, **kw)})")


@compiles(TextProbe, "sqlite")
def _probe_sqlite(element: TextProbe, compiler: Any, **kw: Any) -> str:
    # The run's stored row by rowid and instr(): FTS5's MATCH restricted to one rowid
    # costs ~0.6 ms a run (it walks the term's doclists), this a few microseconds.
    return _contains_sqlite(element, compiler, **kw)


@compiles(TextProbe, "postgresql")
def _probe_postgresql(element: TextProbe, compiler: Any, **kw: Any) -> str:
    return (f"EXISTS (SELECT 1 FROM {SEARCH_TABLE} WHERE run_pk = {compiler.process(element.pk, **kw)} "
            f"AND {_PG_TEXT} LIKE {compiler.process(element.pattern, **kw)})")


def count_matches(connection: Connection, term: str, cap: int) -> int:
    """How many runs (of any workspace) hold ``term`` (at least ``MIN_INDEXED_CHARS``
    long), counted up to ``cap``: at most ``cap`` index entries are read."""
    if connection.dialect.name == "sqlite":
        sql = (f"SELECT count(*) FROM (SELECT 1 FROM {SEARCH_TABLE} WHERE {SEARCH_TABLE} "
               "MATCH :value LIMIT :cap)")
        value = fts_phrase(term)
    else:
        sql = f"SELECT count(*) FROM (SELECT 1 FROM {SEARCH_TABLE} WHERE {_PG_TEXT} LIKE :value LIMIT :cap) AS s"
        value = like_pattern(term)
    return int(connection.execute(text(sql), {"value": value, "cap": cap}).scalar_one())


def _contains(function: str, term: Any, compiler: Any, **kw: Any) -> str:
    return " OR ".join(f"{function}(s.{field}, {compiler.process(term, **kw)}) > 0"
                       for field in ("query", "answer", "other"))


@compiles(TextContains, "sqlite")
def _contains_sqlite(element: TextContains, compiler: Any, **kw: Any) -> str:
    return (f"EXISTS (SELECT 1 FROM {SEARCH_TABLE} AS s WHERE s.rowid = "
            f"{compiler.process(element.pk, **kw)} AND ({_contains('instr', element.term, compiler, **kw)}))")


@compiles(TextContains, "postgresql")
def _contains_postgresql(element: TextContains, compiler: Any, **kw: Any) -> str:
    return (f"EXISTS (SELECT 1 FROM {SEARCH_TABLE} AS s WHERE s.run_pk = "
            f"{compiler.process(element.pk, **kw)} AND ({_contains('strpos', element.term, compiler, **kw)}))")


def _rank(function: str, key: str, element: TextRank, compiler: Any, **kw: Any) -> str:
    first, second = compiler.process(element.term, **kw), compiler.process(element.term, **kw)
    return (f"coalesce((SELECT CASE WHEN {function}(s.query, {first}) > 0 THEN {RANK_QUERY} "
            f"WHEN {function}(s.answer, {second}) > 0 THEN {RANK_ANSWER} ELSE {RANK_OTHER} END "
            f"FROM {SEARCH_TABLE} AS s WHERE s.{key} = {compiler.process(element.pk, **kw)}), 0)")


@compiles(TextRank, "sqlite")
def _rank_sqlite(element: TextRank, compiler: Any, **kw: Any) -> str:
    return _rank("instr", "rowid", element, compiler, **kw)


@compiles(TextRank, "postgresql")
def _rank_postgresql(element: TextRank, compiler: Any, **kw: Any) -> str:
    return _rank("strpos", "run_pk", element, compiler, **kw)
