"""The search index gets one row per tool call (issue 18, the write path): a tool-call
event re-indexed the whole run (its row held every call's text), now it writes its own
call's row only.

``run_search_call`` holds each call's folded name, arguments, result and error (joined by
the separator) with its workspace, call id and run. SQLite: a plain table (integer key,
unique (workspace, call id), indexed by run), the FTS5 external-content table
``run_search_call_text`` (``trigram`` tokenizer) over its text, kept in step by triggers,
and triggers that remove the rows of a deleted call or run. PostgreSQL: the table with
primary key (workspace, call id) referencing the call ON DELETE CASCADE, an index by run
and a ``pg_trgm`` GIN index over the text.

Existing rows are converted here, in batches of runs: each call gets its row, and the
run's own row keeps only its run id and session id in ``other``. Downgrade puts the
calls' text back into the runs' rows and drops the new structures.

Revision ID: 4b7e2c9d1a56
Revises: 7c4d2e9a1b30
Create Date: 2026-12-02 04:30:00

"""
import json

import sqlalchemy as sa
from alembic import op

revision = '4b7e2c9d1a56'
down_revision = '7c4d2e9a1b30'
branch_labels = None
depends_on = None

# As ``reviewapp/domain/search_text.py`` and ``reviewapp/search_index.py`` had them when
# this migration was written (a migration does not follow later edits of the app).
SEPARATOR = "\x1f"
SQLITE_DDL = (
    "CREATE TABLE IF NOT EXISTS run_search_call (id INTEGER PRIMARY KEY, "
    "workspace_id integer NOT NULL, call_id varchar(160) NOT NULL, run_pk integer NOT NULL, "
    "text text NOT NULL DEFAULT '', UNIQUE (workspace_id, call_id))",
    "CREATE INDEX IF NOT EXISTS ix_run_search_call_run ON run_search_call (run_pk)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS run_search_call_text USING fts5(text, "
    "content = 'run_search_call', content_rowid = 'id', tokenize = 'trigram case_sensitive 1')",
    "CREATE TRIGGER IF NOT EXISTS run_search_call_added AFTER INSERT ON run_search_call "
    "BEGIN INSERT INTO run_search_call_text (rowid, text) VALUES (new.id, new.text); END",
    "CREATE TRIGGER IF NOT EXISTS run_search_call_removed AFTER DELETE ON run_search_call "
    "BEGIN INSERT INTO run_search_call_text (run_search_call_text, rowid, text) "
    "VALUES ('delete', old.id, old.text); END",
    "CREATE TRIGGER IF NOT EXISTS run_search_call_changed AFTER UPDATE ON run_search_call "
    "BEGIN INSERT INTO run_search_call_text (run_search_call_text, rowid, text) "
    "VALUES ('delete', old.id, old.text); "
    "INSERT INTO run_search_call_text (rowid, text) VALUES (new.id, new.text); END",
    "CREATE TRIGGER IF NOT EXISTS run_search_call_forget_call AFTER DELETE ON tool_call_audit "
    "BEGIN DELETE FROM run_search_call WHERE workspace_id = old.workspace_id AND call_id = old.id; END",
    "CREATE TRIGGER IF NOT EXISTS run_search_call_forget_run AFTER DELETE ON diagnosis_run "
    "BEGIN DELETE FROM run_search_call WHERE run_pk = old.id; END",
)
SQLITE_TRIGGERS = ("added", "removed", "changed", "forget_call", "forget_run")
POSTGRESQL_DDL = (
    "CREATE TABLE IF NOT EXISTS run_search_call ("
    "workspace_id integer NOT NULL, call_id varchar(160) NOT NULL, run_pk integer NOT NULL, "
    "text text NOT NULL DEFAULT '', PRIMARY KEY (workspace_id, call_id), "
    "FOREIGN KEY (workspace_id, call_id) REFERENCES tool_call_audit (workspace_id, id) "
    "ON DELETE CASCADE)",
    "CREATE INDEX IF NOT EXISTS ix_run_search_call_run ON run_search_call (run_pk)",
    "CREATE INDEX IF NOT EXISTS ix_run_search_call_text ON run_search_call "
    "USING gin (text gin_trgm_ops)",
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


def _joined(parts):
    return SEPARATOR.join(_fold(part) for part in parts if part)


def _batches(conn, stored_as_text):
    """Per batch of runs (id order): [(run pk, run id, session id)] and their calls
    [(workspace, call id, run pk, [name, arguments, result, error])] in call order."""
    last = 0
    while True:
        runs = conn.execute(sa.text(
            "SELECT r.id, r.run_id, s.session_id FROM diagnosis_run r "
            "JOIN diagnosis_session s ON s.id = r.diagnosis_session_id "
            "WHERE r.id > :last ORDER BY r.id LIMIT :n"), {"last": last, "n": BATCH}).all()
        if not runs:
            return
        calls = [(workspace_id, call_id, run_pk, [name, _arguments(arguments, stored_as_text), result, error])
                 for workspace_id, call_id, run_pk, name, arguments, result, error in conn.execute(sa.text(
                     "SELECT workspace_id, id, run_pk, tool_name, arguments, result_summary, error_message "
                     "FROM tool_call_audit WHERE run_pk IN :pks ORDER BY run_pk, ordinal, id"
                 ).bindparams(sa.bindparam("pks", expanding=True)), {"pks": [row[0] for row in runs]})]
        yield runs, calls
        last = runs[-1][0]


def _set_other(conn, key, rows):
    if rows:
        conn.execute(sa.text(f"UPDATE run_search SET other = :other WHERE {key} = :run_pk"), rows)


def upgrade():
    conn = op.get_bind()
    sqlite = conn.dialect.name == "sqlite"
    key = "rowid" if sqlite else "run_pk"
    for statement in SQLITE_DDL if sqlite else POSTGRESQL_DDL:
        op.execute(statement)
    for runs, calls in _batches(conn, sqlite):
        if not calls:
            continue
        conn.execute(sa.text(
            "INSERT INTO run_search_call (workspace_id, call_id, run_pk, text) "
            "VALUES (:workspace_id, :call_id, :run_pk, :text)"),
            [{"workspace_id": ws, "call_id": call_id, "run_pk": run_pk, "text": _joined(parts)}
             for ws, call_id, run_pk, parts in calls])
        with_calls = {run_pk for _, _, run_pk, _ in calls}
        _set_other(conn, key, [{"run_pk": pk, "other": _joined([run_id, session_id])}
                               for pk, run_id, session_id in runs if pk in with_calls])


def downgrade():
    conn = op.get_bind()
    sqlite = conn.dialect.name == "sqlite"
    key = "rowid" if sqlite else "run_pk"
    for runs, calls in _batches(conn, sqlite):
        parts = {}
        for _, _, run_pk, call_parts in calls:
            parts.setdefault(run_pk, []).extend(call_parts)
        _set_other(conn, key, [{"run_pk": pk, "other": _joined([run_id, session_id, *parts[pk]])}
                               for pk, run_id, session_id in runs if pk in parts])
    if sqlite:
        for name in SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS run_search_call_{name}")
        op.execute("DROP TABLE IF EXISTS run_search_call_text")
    op.execute("DROP TABLE IF EXISTS run_search_call")
