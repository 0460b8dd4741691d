"""The full-text index of run text, the part that differs by database (beside queries.py).

The text is folded (``domain.search_text.fold``) and kept in two structures, so a write
costs what its own text costs, never a whole run's:

* one row per run (``SEARCH_TABLE``) with three fields: ``query``, ``answer`` and
  ``other`` (run id and session id, ``domain.search_text.other_text`` without calls),
  rewritten by the services when they write a run (``services.run_text.store_run_text``);
* one row per tool call (``CALL_TABLE``: workspace, call id, run pk, and the call's name,
  arguments, result and error joined by ``SEPARATOR``, ``domain.search_text.call_text``),
  written when the call is created or its text changes
  (``services.run_text.store_call_text``).

A run holds a term when its row or one of its calls' rows does; a term never spans two
fields (it cannot contain ``SEPARATOR``), so this is the same as one row holding all the
run's text. The migration ``7c3e5a1f0b29`` made the run rows, ``4b7e2c9d1a56`` split the
calls out of them.

* SQLite: ``run_search``, an FTS5 table with the ``trigram`` tokenizer (case-sensitive,
  the text is already folded), rowid = ``diagnosis_run.id``. ``run_search_call`` a plain
  table (integer key, unique (workspace, call id), indexed by run) whose text an FTS5
  external-content table ``run_search_call_text`` indexes, kept in step by triggers. A
  term is an FTS5 phrase, so a row matches when the term is a substring of one field.
  Triggers remove the rows of a deleted run or call (foreign keys cannot point at a
  virtual table, and a table rebuild of a later migration would take them along).
* PostgreSQL: ``run_search`` a plain table (``run_pk`` references the run, ON DELETE
  CASCADE) with one ``pg_trgm`` GIN index over the three fields joined by
  ``SEPARATOR``; ``run_search_call`` (primary key workspace + call id, referencing the
  call ON DELETE CASCADE, indexed by run) with a ``pg_trgm`` GIN index over its text; a
  term is ``LIKE '%term%'`` on those expressions, which the indexes answer (substring
  semantics, like the LIKE search it replaces; a tsvector would find words, not the
  substrings and run-id fragments people type). The statement that reads the matches
  (``count_matches``, ``matching_runs``) asks each index without the words most of its
  rows hold (``index_patterns``) and checks the rows found for the whole term.

Neither structure is in the SQLAlchemy metadata: ``create_all`` gets them through
``install`` (a metadata event) and Alembic autogenerate skips ``SEARCH_TABLE*``.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import Integer, bindparam, event, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement
from sqlalchemy.sql.visitors import InternalTraversal
from sqlalchemy.types import NullType

from .domain.search_text import MIN_INDEXED_CHARS, RANK_ANSWER, RANK_OTHER, RANK_QUERY, SEPARATOR

SEARCH_TABLE = "run_search"
CALL_TABLE = "run_search_call"
_CALL_FTS = "run_search_call_text"  # SQLite: the FTS5 index of CALL_TABLE's text

SQLITE_DDL = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {SEARCH_TABLE} USING fts5("
    "query, answer, other, tokenize = 'trigram case_sensitive 1')",
    f"CREATE TRIGGER IF NOT EXISTS {SEARCH_TABLE}_forget AFTER DELETE ON diagnosis_run "
    f"BEGIN DELETE FROM {SEARCH_TABLE} WHERE rowid = old.id; END",
)
SQLITE_CALL_DDL = (
    f"CREATE TABLE IF NOT EXISTS {CALL_TABLE} (id INTEGER PRIMARY KEY, "
    "workspace_id integer NOT NULL, call_id varchar(160) NOT NULL, run_pk integer NOT NULL, "
    "text text NOT NULL DEFAULT '', UNIQUE (workspace_id, call_id))",
    f"CREATE INDEX IF NOT EXISTS ix_{CALL_TABLE}_run ON {CALL_TABLE} (run_pk)",
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {_CALL_FTS} USING fts5(text, content = '{CALL_TABLE}', "
    "content_rowid = 'id', tokenize = 'trigram case_sensitive 1')",
    f"CREATE TRIGGER IF NOT EXISTS {CALL_TABLE}_added AFTER INSERT ON {CALL_TABLE} "
    f"BEGIN INSERT INTO {_CALL_FTS} (rowid, text) VALUES (new.id, new.text); END",
    f"CREATE TRIGGER IF NOT EXISTS {CALL_TABLE}_removed AFTER DELETE ON {CALL_TABLE} "
    f"BEGIN INSERT INTO {_CALL_FTS} ({_CALL_FTS}, rowid, text) VALUES ('delete', old.id, old.text); END",
    f"CREATE TRIGGER IF NOT EXISTS {CALL_TABLE}_changed AFTER UPDATE ON {CALL_TABLE} "
    f"BEGIN INSERT INTO {_CALL_FTS} ({_CALL_FTS}, rowid, text) VALUES ('delete', old.id, old.text); "
    f"INSERT INTO {_CALL_FTS} (rowid, text) VALUES (new.id, new.text); END",
    f"CREATE TRIGGER IF NOT EXISTS {CALL_TABLE}_forget_call AFTER DELETE ON tool_call_audit "
    f"BEGIN DELETE FROM {CALL_TABLE} WHERE workspace_id = old.workspace_id AND call_id = old.id; END",
    f"CREATE TRIGGER IF NOT EXISTS {CALL_TABLE}_forget_run AFTER DELETE ON diagnosis_run "
    f"BEGIN DELETE FROM {CALL_TABLE} WHERE run_pk = old.id; END",
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
POSTGRESQL_CALL_DDL = (
    f"CREATE TABLE IF NOT EXISTS {CALL_TABLE} ("
    "workspace_id integer NOT NULL, call_id varchar(160) NOT NULL, run_pk integer NOT NULL, "
    "text text NOT NULL DEFAULT '', PRIMARY KEY (workspace_id, call_id), "
    "FOREIGN KEY (workspace_id, call_id) REFERENCES tool_call_audit (workspace_id, id) "
    "ON DELETE CASCADE)",
    f"CREATE INDEX IF NOT EXISTS ix_{CALL_TABLE}_run ON {CALL_TABLE} (run_pk)",
    f"CREATE INDEX IF NOT EXISTS ix_{CALL_TABLE}_text ON {CALL_TABLE} USING gin (text gin_trgm_ops)",
)
assert SEPARATOR == "\x1f"  # the E'\x1f' of the PostgreSQL expression


def include_name(name: str | None, type_: str, parent_names: Any) -> bool:
    """Alembic's ``include_name`` hook: False for the index's tables (and SQLite's
    shadow tables ``run_search_data`` ...), which no model describes."""
    return not (type_ == "table" and name is not None and name.startswith(SEARCH_TABLE))


def ddl(dialect: str) -> tuple[str, ...]:
    """The statements that create the index on ``dialect`` (sqlite | postgresql)."""
    if dialect == "sqlite":
        return SQLITE_DDL + SQLITE_CALL_DDL
    return POSTGRESQL_DDL + POSTGRESQL_CALL_DDL


def drop_ddl(dialect: str) -> tuple[str, ...]:
    """The statements that remove it."""
    if dialect == "sqlite":
        triggers = [f"{SEARCH_TABLE}_forget"] + [f"{CALL_TABLE}_{name}" for name in (
            "added", "removed", "changed", "forget_call", "forget_run")]
        return (*(f"DROP TRIGGER IF EXISTS {name}" for name in triggers),
                f"DROP TABLE IF EXISTS {_CALL_FTS}", f"DROP TABLE IF EXISTS {CALL_TABLE}",
                f"DROP TABLE IF EXISTS {SEARCH_TABLE}")
    return (f"DROP TABLE IF EXISTS {CALL_TABLE}", f"DROP TABLE IF EXISTS {SEARCH_TABLE}")


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


_WRITE_CALLS = text(
    f"INSERT INTO {CALL_TABLE} (workspace_id, call_id, run_pk, text) "
    "VALUES (:workspace_id, :call_id, :run_pk, :text) ON CONFLICT (workspace_id, call_id) "
    "DO UPDATE SET run_pk = excluded.run_pk, text = excluded.text")


def write_calls(connection: Connection, rows: list[dict[str, Any]]) -> None:
    """Insert or replace the rows of the tool calls ``rows`` name: each {workspace_id,
    call_id, run_pk, text}, the text already folded (``domain.search_text.call_text``).
    One statement (an upsert, executed for many rows); each row's cost is its own text.
    The calls must exist (PostgreSQL: foreign key)."""
    if rows:
        connection.execute(_WRITE_CALLS, rows)


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


def _matching_runs(dialect: str, value: str) -> str:
    """SQL: the run pks of the index entries holding the term (``value``: its FTS5 phrase
    on SQLite, its LIKE pattern on PostgreSQL, already compiled), the runs' own rows then
    their calls' rows (a run may come several times)."""
    if dialect == "sqlite":
        return (f"SELECT rowid AS run_pk FROM {SEARCH_TABLE} WHERE {SEARCH_TABLE} MATCH {value} UNION ALL "
                f"SELECT c.run_pk FROM {_CALL_FTS} JOIN {CALL_TABLE} AS c ON c.id = {_CALL_FTS}.rowid "
                f"WHERE {_CALL_FTS} MATCH {value}")
    return (f"SELECT run_pk FROM {SEARCH_TABLE} WHERE {_PG_TEXT} LIKE {value} UNION ALL "
            f"SELECT run_pk FROM {CALL_TABLE} WHERE text LIKE {value}")


@compiles(TextMatch, "sqlite")
def _match_sqlite(element: TextMatch, compiler: Any, **kw: Any) -> str:
    phrase = compiler.process(element.phrase, **kw)
    return f"{compiler.process(element.pk, **kw)} IN ({_matching_runs('sqlite', phrase)})"


@compiles(TextMatch, "postgresql")
def _match_postgresql(element: TextMatch, compiler: Any, **kw: Any) -> str:
    pattern = compiler.process(element.pattern, **kw)
    return f"{compiler.process(element.pk, **kw)} IN ({_matching_runs('postgresql', pattern)})"


@compiles(TextProbe, "sqlite")
def _probe_sqlite(element: TextProbe, compiler: Any, **kw: Any) -> str:
    # The run's stored row by rowid and instr(): FTS5's MATCH restricted to one rowid
    # costs ~0.6 ms a run (it walks the term's doclists), this a few microseconds.
    return _contains_sqlite(element, compiler, **kw)


@compiles(TextProbe, "postgresql")
def _probe_postgresql(element: TextProbe, compiler: Any, **kw: Any) -> str:
    # Scalar subqueries, not "EXISTS (...) OR EXISTS (...)": PostgreSQL may turn an EXISTS
    # under OR into a hashed subplan, which reads every index row holding the term (a
    # sequential scan of run_search) before the first run; a correlated scalar subquery
    # is asked per run by key, the calls' only when the run's own row does not hold it.
    pk = compiler.process(element.pk, **kw)
    return (f"coalesce((SELECT true FROM {SEARCH_TABLE} WHERE run_pk = {pk} "
            f"AND {_PG_TEXT} LIKE {compiler.process(element.pattern, **kw)}), "
            f"(SELECT true FROM {CALL_TABLE} AS c WHERE c.run_pk = {pk} "
            f"AND c.text LIKE {compiler.process(element.pattern, **kw)} LIMIT 1), false)")


# PostgreSQL: pg_trgm splits text into words at every character that is not a letter or
# a digit and indexes each word's trigrams, and a GIN scan reads the whole posting list
# of every trigram of its pattern (it does not skip through the long ones by the short
# ones). A word most rows hold (``run`` of ``run-500000``, every run id has it) then costs
# a posting list as long as the table while telling little apart. ``index_patterns`` asks
# the index without such words, and the rows it finds are checked for the whole term.
_PG_WORD = re.compile(r"[^\W_]+")  # pg_trgm's words: runs of letters and digits
# The rows of each table whose text tells which words are common: the newest ones (by run).
SAMPLE_ROWS = 500
_MAX_WORDS = 8  # a longer term is asked as it is (no sample)


def _sample_sql(words: int) -> str:
    counts = ", ".join(f"coalesce(sum((strpos(t, :w{i}) > 0)::int), 0)" for i in range(words))
    return (f"SELECT 0, count(*), {counts} FROM (SELECT {_PG_TEXT} AS t FROM {SEARCH_TABLE} "
            "ORDER BY run_pk DESC LIMIT :rows) AS s UNION ALL "
            f"SELECT 1, count(*), {counts} FROM (SELECT text AS t FROM {CALL_TABLE} "
            "ORDER BY run_pk DESC LIMIT :rows) AS c")


def index_patterns(connection: Connection, term: str) -> tuple[str, str]:
    """PostgreSQL: the LIKE patterns to ask the trigram indexes of the runs' rows and of
    the calls' rows for the folded ``term`` (``MIN_INDEXED_CHARS`` or more). A term of
    two to ``_MAX_WORDS`` pg_trgm words of ``MIN_INDEXED_CHARS`` or more characters is
    first looked for word by word in the newest ``SAMPLE_ROWS`` rows of each table (one
    query, its cost the same at any size). A word at least half of a table's sampled
    rows hold is left out of that table's pattern (its posting lists are at least half
    the table, and it at best halves the rows found): the pattern is the other words in
    the term's order (``%500000%`` for ``run-500000``), or the whole term
    (``like_pattern``) when no word or every word is that common. Every row holding the
    term matches its pattern (each word is part of the term, in order): the caller
    checks the rows found for the whole term. A word common in older rows only is kept,
    and costs what it costs today."""
    whole = like_pattern(term)
    words = list(dict.fromkeys(w for w in _PG_WORD.findall(term) if len(w) >= MIN_INDEXED_CHARS))
    if not 2 <= len(words) <= _MAX_WORDS:
        return whole, whole
    sampled = {row[0]: row[1:] for row in connection.execute(
        text(_sample_sql(len(words))),
        {"rows": SAMPLE_ROWS, **{f"w{i}": word for i, word in enumerate(words)}})}

    def pattern(table: int) -> str:
        rows, *hits = sampled[table]
        kept = [word for word, held in zip(words, hits, strict=True) if 2 * held < rows or not rows]
        return "%" + "%".join(kept) + "%" if 0 < len(kept) < len(words) else whole
    return pattern(0), pattern(1)


def _distinct_matches(dialect: str, recheck: tuple[bool, bool] = (False, False)) -> tuple[str, Any]:
    """SQL of the distinct run pks holding the term, at most ``:cap`` of them, read as
    they arrive (see ``count_matches``), and how to bind the term: SQLite ``:value`` its
    FTS5 phrase; PostgreSQL ``:runs`` / ``:calls`` the patterns of ``index_patterns``,
    the rows found checked for ``:term`` itself where ``recheck`` (runs, calls) says the
    pattern is not the whole term."""
    if dialect == "sqlite":
        matching = _matching_runs(dialect, ":value")
        return f"SELECT DISTINCT m.run_pk FROM ({matching}) AS m LIMIT :cap", fts_phrase
    runs, calls = (f" AND strpos({field}, :term) > 0" if check else ""
                   for field, check in zip((_PG_TEXT, "text"), recheck, strict=True))
    matching = (f"SELECT run_pk FROM {SEARCH_TABLE} WHERE {_PG_TEXT} LIKE :runs{runs} UNION ALL "
                f"SELECT run_pk FROM {CALL_TABLE} WHERE text LIKE :calls{calls}")
    return (f"WITH RECURSIVE m(run_pk) AS ({matching} UNION SELECT run_pk FROM m WHERE false) "
            "SELECT run_pk FROM m LIMIT :cap"), like_pattern


def _distinct_params(connection: Connection, term: str, cap: int) -> tuple[str, dict[str, Any]]:
    if connection.dialect.name == "sqlite":
        sql, bind = _distinct_matches("sqlite")
        return sql, {"value": bind(term), "cap": cap}
    runs, calls = index_patterns(connection, term)
    whole = like_pattern(term)
    sql, _ = _distinct_matches("postgresql", (runs != whole, calls != whole))
    return sql, {"runs": runs, "calls": calls, "term": term, "cap": cap}


def count_matches(connection: Connection, term: str, cap: int) -> int:
    """How many runs (of any workspace) hold ``term`` (at least ``MIN_INDEXED_CHARS``
    long) in their own row or a call's row, counted up to ``cap`` (a run once, however
    many of its rows hold it). Both databases stop reading rows after ``cap`` distinct
    runs, however many call rows hold the term: SQLite's DISTINCT drops repeats as rows
    arrive (and FTS5 reads its doclists as it goes); on PostgreSQL a DISTINCT (hash or
    sort) reads every match before its first row, so the matches go through a recursive
    CTE whose UNION drops repeats as they arrive (its recursive part adds nothing) and
    the LIMIT stops the heap scans after ``cap`` (a GIN bitmap scan still reads the
    posting lists of its pattern whole: ``index_patterns`` keeps them short). One query,
    plus ``index_patterns``' sample on PostgreSQL for a term of several words."""
    sql, params = _distinct_params(connection, term, cap)
    return int(connection.execute(text(f"SELECT count(*) FROM ({sql}) AS s"), params).scalar_one())


def matching_runs(connection: Connection, term: str, cap: int) -> list[int]:
    """The pks of the runs (of any workspace) that hold ``term`` (at least
    ``MIN_INDEXED_CHARS`` long), at most ``cap`` of them, in no particular order: the
    statement of ``count_matches`` returning the runs instead of their number."""
    sql, params = _distinct_params(connection, term, cap)
    return list(connection.execute(text(sql), params).scalars())


def _contains(function: str, term: Any, compiler: Any, **kw: Any) -> str:
    return " OR ".join(f"{function}(s.{field}, {compiler.process(term, **kw)}) > 0"
                       for field in ("query", "answer", "other"))


def _contains_either(function: str, key: str, element: _OnRun, compiler: Any, **kw: Any) -> str:
    """SQL: the run's own row or one of its calls' rows holds the term (``function``:
    instr | strpos), each looked up by the run's key."""
    pk = compiler.process(element.pk, **kw)
    return (f"(EXISTS (SELECT 1 FROM {SEARCH_TABLE} AS s WHERE s.{key} = {pk} "
            f"AND ({_contains(function, element.term, compiler, **kw)})) "
            f"OR EXISTS (SELECT 1 FROM {CALL_TABLE} AS c WHERE c.run_pk = {pk} "
            f"AND {function}(c.text, {compiler.process(element.term, **kw)}) > 0))")


@compiles(TextContains, "sqlite")
def _contains_sqlite(element: TextContains, compiler: Any, **kw: Any) -> str:
    return _contains_either("instr", "rowid", element, compiler, **kw)


@compiles(TextContains, "postgresql")
def _contains_postgresql(element: TextContains, compiler: Any, **kw: Any) -> str:
    return _contains_either("strpos", "run_pk", element, compiler, **kw)


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
