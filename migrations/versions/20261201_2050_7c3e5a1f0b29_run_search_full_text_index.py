"""The runs list's text search through the databases' own full-text engines (issue 18,
SPEC 8): ``run_search``, one row per run with its folded query, answer and other text
(run id, session id, tool calls' names, arguments, results, errors).

SQLite: an FTS5 table with the ``trigram`` tokenizer (substrings, punctuation and CJK are
found; case-sensitive on text folded by Python's ``str.casefold``) and a trigger that
removes a deleted run's row. PostgreSQL: ``pg_trgm`` and a table with one GIN trigram
index over the three fields. Existing runs are indexed here, in batches; from now on the
services keep the rows (``reviewapp/services/run_text.py``).

A later migration that rebuilds ``diagnosis_run`` on SQLite (batch mode) drops the
trigger with the old table: it must create it again (tests/test_migrations.py checks).

Revision ID: 7c3e5a1f0b29
Revises: 3e6019ba2422
Create Date: 2026-12-01 20:50:00

"""
import json

import sqlalchemy as sa
from alembic import op

revision = '7c3e5a1f0b29'
down_revision = '3e6019ba2422'
branch_labels = None
depends_on = None

# As ``reviewapp/domain/search_text.py`` and ``reviewapp/search_index.py`` had them when
# this migration was written (a migration does not follow later edits of the app).
SEPARATOR = "\x1f"
SQLITE_DDL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS run_search USING fts5("
    "query, answer, other, tokenize = 'trigram case_sensitive 1')",
    "CREATE TRIGGER IF NOT EXISTS run_search_forget AFTER DELETE ON diagnosis_run "
    "BEGIN DELETE FROM run_search WHERE rowid = old.id; END",
)
POSTGRESQL_DDL = (
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE TABLE IF NOT EXISTS run_search ("
    "run_pk integer PRIMARY KEY REFERENCES diagnosis_run (id) ON DELETE CASCADE, "
    "query text NOT NULL DEFAULT '', answer text NOT NULL DEFAULT '', "
    "other text NOT NULL DEFAULT '')",
    "CREATE INDEX IF NOT EXISTS ix_run_search_text ON run_search "
    "USING gin ((query || E'\\x1f' || answer || E'\\x1f' || other) gin_trgm_ops)",
)
BATCH = 2000


def _fold(text):
    if not text:
        return ""
    return text.casefold().replace(SEPARATOR, " ")


def _arguments(value, stored_as_text):
    if value is None:
        return ""
    if stored_as_text:  # SQLite returns the stored JSON text, PostgreSQL the value
        value = json.loads(value)
    return json.dumps(value, ensure_ascii=False)


def _backfill(conn, key, stored_as_text):
    last = 0
    while True:
        runs = conn.execute(sa.text(
            "SELECT r.id, r.query, r.answer, r.run_id, s.session_id FROM diagnosis_run r "
            "JOIN diagnosis_session s ON s.id = r.diagnosis_session_id "
            "WHERE r.id > :last ORDER BY r.id LIMIT :n"), {"last": last, "n": BATCH}).all()
        if not runs:
            return
        pks = [row[0] for row in runs]
        calls = {}
        for run_pk, name, arguments, result, error in conn.execute(sa.text(
                "SELECT run_pk, tool_name, arguments, result_summary, error_message "
                "FROM tool_call_audit WHERE run_pk IN :pks ORDER BY run_pk, ordinal, id"
        ).bindparams(sa.bindparam("pks", expanding=True)), {"pks": pks}):
            calls.setdefault(run_pk, []).extend([name, _arguments(arguments, stored_as_text), result, error])
        rows = []
        for pk, query, answer, run_id, session_id in runs:
            other = [run_id, session_id, *calls.get(pk, [])]
            rows.append({"run_pk": pk, "query": _fold(query), "answer": _fold(answer),
                         "other": SEPARATOR.join(_fold(part) for part in other if part)})
        conn.execute(sa.text(f"INSERT INTO run_search ({key}, query, answer, other) "
                             "VALUES (:run_pk, :query, :answer, :other)"), rows)
        last = pks[-1]


def upgrade():
    conn = op.get_bind()
    sqlite = conn.dialect.name == "sqlite"
    for statement in SQLITE_DDL if sqlite else POSTGRESQL_DDL:
        op.execute(statement)
    _backfill(conn, "rowid" if sqlite else "run_pk", sqlite)


def downgrade():
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS run_search_forget")
    op.execute("DROP TABLE IF EXISTS run_search")
