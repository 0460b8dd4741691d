"""Migrations: one head, and ``upgrade`` on an empty database gives exactly the models'
schema (no drift), on the database under test (SQLite, or PostgreSQL in the second leg)."""

from __future__ import annotations

import re

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from flask_migrate import downgrade, upgrade
from sqlalchemy import CheckConstraint, create_engine, inspect

from reviewapp import REPO_ROOT, create_app
from reviewapp.extensions import db
from reviewapp.search_index import include_name

from .conftest import PG_URL
from .databases import private_postgres


def test_single_head():
    from alembic.config import Config

    config = Config(str(REPO_ROOT / "migrations" / "alembic.ini"))
    config.set_main_option("script_location", str(REPO_ROOT / "migrations"))
    heads = ScriptDirectory.from_config(config).get_heads()
    assert len(heads) == 1, heads


@pytest.fixture
def empty_database_url(tmp_path):
    if not PG_URL:
        yield f"sqlite:///{tmp_path / 'migrate.sqlite'}"
        return
    with private_postgres(PG_URL, "reviewapp_mig") as url:
        yield url


# SQLite cannot reflect an index on an expression (the runs list's score orders), so
# Alembic leaves those out of the comparison there and says so; PostgreSQL compares them,
# and ``test_sqlite_has_the_expression_indexes`` checks SQLite's by their definitions.
@pytest.mark.filterwarnings(
    "ignore:autogenerate skipping metadata-specified expression-based index:UserWarning")
@pytest.mark.filterwarnings(
    "ignore:Skipped unsupported reflection of expression-based index")
def test_upgrade_on_empty_database_matches_models(empty_database_url, tmp_path):
    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": empty_database_url})
    with app.app_context():
        upgrade(directory=str(REPO_ROOT / "migrations"))
        engine = create_engine(empty_database_url)
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={
                "compare_type": True, "include_name": include_name})
            diff = compare_metadata(context, db.metadata)
            tables = set(db.metadata.tables)
            present = {name for name in conn.dialect.get_table_names(conn)
                       if include_name(name, "table", {})} - {"alembic_version"}
        engine.dispose()
        db.engine.dispose()
    assert diff == []
    assert present == tables


def _expression_indexes() -> dict[str, str]:
    """The models' indexes on an expression, by name, as SQLite's DDL writes them."""
    from sqlalchemy.dialects import sqlite
    from sqlalchemy.schema import CreateIndex

    found = {}
    for table in db.metadata.tables.values():
        for index in table.indexes:
            if any(not hasattr(e, "table") for e in index.expressions):
                found[index.name] = str(CreateIndex(index).compile(dialect=sqlite.dialect()))
    return found


def test_sqlite_has_the_expression_indexes(tmp_path):
    """The indexes on an expression (which Alembic cannot compare on SQLite) exist after
    ``upgrade``, on the same expressions as the models'."""
    url = f"sqlite:///{tmp_path / 'expressions.sqlite'}"
    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": url})
    with app.app_context():
        upgrade(directory=str(REPO_ROOT / "migrations"))
        db.engine.dispose()
    wanted = _expression_indexes()
    engine = create_engine(url)
    with engine.connect() as conn:
        stored = {name: sql for name, sql in conn.exec_driver_sql(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index'") if name in wanted}
    engine.dispose()
    assert {"ix_diagnosis_run_workspace_score_high", "ix_diagnosis_run_workspace_score_low"} <= set(wanted)
    normal = {name: re.sub(r"\s+", "", sql.lower()) for name, sql in stored.items()}
    assert normal == {name: re.sub(r"\s+", "", sql.lower()) for name, sql in wanted.items()}


def test_sqlite_rebuilds_keep_feedback_ids_unreused(tmp_path):
    """A migration that rebuilds ``user_feedback`` on SQLite (batch mode) keeps
    AUTOINCREMENT: the history refers to deleted rows by id, so ids are never reused
    (models/feedback.py). ``compare_metadata`` does not see this option."""
    url = f"sqlite:///{tmp_path / 'autoinc.sqlite'}"
    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": url})
    with app.app_context():
        upgrade(directory=str(REPO_ROOT / "migrations"))
        db.engine.dispose()
    engine = create_engine(url)
    with engine.connect() as conn:
        sql = conn.exec_driver_sql(
            "SELECT sql FROM sqlite_master WHERE name = 'user_feedback'").scalar_one()
    engine.dispose()
    assert "AUTOINCREMENT" in sql
    assert "'tool_call', 'conversation_turn'" in sql


def test_the_category_merge_keeps_every_value(tmp_path):
    """The migration that merged triage's and cases' fault categories (SPEC 7): ``OTHER``
    becomes ``GENERAL``; a value outside the merged list stays on its row and joins its
    workspace's own list, so nothing typed is lost; other workspaces keep the default."""
    import json

    from sqlalchemy import text

    url = f"sqlite:///{tmp_path / 'merge.sqlite'}"
    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": url})
    with app.app_context():
        upgrade(directory=str(REPO_ROOT / "migrations"), revision="2eeb0f957fea")
        engine = create_engine(url)
        with engine.begin() as conn:
            for ws in (1, 2):
                conn.execute(text("INSERT INTO workspace (id, slug, name, settings) "
                                  "VALUES (:id, :slug, 'W', '{}')"), {"id": ws, "slug": f"w{ws}"})
                conn.execute(text("INSERT INTO diagnosis_session (id, session_id, workspace_id, kind) "
                                  "VALUES (:id, :sid, :ws, 'chat')"), {"id": ws, "sid": f"s{ws}", "ws": ws})
            for pk, ws, cat in ((1, 1, "OTHER"), (2, 1, "RETRIEVAL_MISS"), (3, 1, "MY_TYPO"), (4, 2, None)):
                conn.execute(text(
                    "INSERT INTO diagnosis_run (id, run_id, workspace_id, diagnosis_session_id, kind, query, "
                    "status, tool_call_count, failed_tool_call_count) "
                    "VALUES (:pk, :rid, :ws, :ws, 'chat', 'q', 'SUCCESS', 0, 0)"), {"pk": pk, "rid": f"r{pk}", "ws": ws})
                conn.execute(text("INSERT INTO triage_item (workspace_id, run_pk, state, opened_reason, version, "
                                  "fault_category) VALUES (:ws, :pk, 'new', 'not_useful', 1, :cat)"),
                             {"ws": ws, "pk": pk, "cat": cat})
            conn.execute(text("INSERT INTO case_library (case_id, workspace_id, diagnosis_id, source_type, "
                              "fault_category, title, created_by, version) "
                              "VALUES ('c1', 1, 'r1', 'AUTO', 'STORAGE', 't', 'system', 1)"))
        upgrade(directory=str(REPO_ROOT / "migrations"))
        with engine.connect() as conn:
            triage = dict(conn.execute(text("SELECT run_pk, fault_category FROM triage_item")).all())
            case = conn.execute(text("SELECT fault_category FROM case_library")).scalar()
            settings = {i: json.loads(s) for i, s in conn.execute(text("SELECT id, settings FROM workspace"))}
        engine.dispose()
        db.engine.dispose()
    assert triage == {1: "GENERAL", 2: "RETRIEVAL_MISS", 3: "MY_TYPO", 4: None}
    assert case == "STORAGE"
    assert settings[1]["fault_categories"][-2:] == ["MY_TYPO", "STORAGE"]
    assert "RETRIEVAL_MISS" in settings[1]["fault_categories"]
    assert "fault_categories" not in settings[2]


def test_sqlite_upgrade_keeps_the_rows_of_child_tables(tmp_path):
    """A batch-mode rebuild of a parent table (user_account in 5b1e0a9c4d27) must not
    cascade: upgrading a database with a member and a rating keeps both (it emptied
    membership and user_feedback while foreign keys were enforced during migrations)."""
    url = f"sqlite:///{tmp_path / 'children.sqlite'}"
    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": url})
    directory = str(REPO_ROOT / "migrations")
    with app.app_context():
        upgrade(directory=directory, revision="2eeb0f957fea")
        db.engine.dispose()
    engine = create_engine(url)
    now = "2026-12-01 00:00:00"
    with engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO workspace (id, slug, name, settings, created_at, updated_at) "
                             "VALUES (1, 'w1', 'W1', '{}', ?, ?)", (now, now))
        conn.exec_driver_sql("INSERT INTO user_account (id, username, password_hash, active, "
                             "session_token, created_at, updated_at) VALUES (1, 'u1', 'x', 1, 't', ?, ?)",
                             (now, now))
        conn.exec_driver_sql("INSERT INTO membership (id, user_id, workspace_id, role, created_at, "
                             "updated_at) VALUES (1, 1, 1, 'lead', ?, ?)", (now, now))
    engine.dispose()
    with app.app_context():
        upgrade(directory=directory)
        db.engine.dispose()
    engine = create_engine(url)
    with engine.connect() as conn:
        counts = [conn.exec_driver_sql(f"SELECT count(*) FROM {t}").scalar_one()
                  for t in ("workspace", "user_account", "membership")]
    engine.dispose()
    assert counts == [1, 1, 1]


def test_queue_item_completion_backfill(tmp_path):
    """7c2d41a9e0b3 stores each queue item's count of answer raters and its completion.
    By hand: run 1 (chat) has its answer (message 12, the last assistant text; message 11
    is an earlier turn) rated by users 1 and 2, a citation of it by user 3 and the earlier
    turn by user 3 -> 2 raters; run 2 (aiops with a report) has its report rated by user
    3 and its message by user 1 -> 1 rater; run 3 has none. Queue 1 needs 2 reviewers,
    queue 2 needs 1."""
    url = f"sqlite:///{tmp_path / 'completion.sqlite'}"
    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": url})
    directory = str(REPO_ROOT / "migrations")
    with app.app_context():
        upgrade(directory=directory, revision="5b1e0a9c4d27")
        db.engine.dispose()
    engine = create_engine(url)
    now = "2026-12-01 00:00:00"
    with engine.begin() as conn:
        sql = conn.exec_driver_sql
        sql("INSERT INTO workspace (id, slug, name, settings, created_at, updated_at) "
            "VALUES (1, 'w1', 'W1', '{}', ?, ?)", (now, now))
        for uid in (1, 2, 3):
            sql("INSERT INTO user_account (id, username, password_hash, active, session_token, "
                "created_at, updated_at) VALUES (?, ?, 'x', 1, ?, ?, ?)",
                (uid, f"u{uid}", f"t{uid}", now, now))
        sql("INSERT INTO diagnosis_session (id, session_id, workspace_id, kind) "
            "VALUES (1, 's1', 1, 'chat')")
        for pk, kind in ((1, "chat"), (2, "aiops"), (3, "chat")):
            sql("INSERT INTO diagnosis_run (id, run_id, workspace_id, diagnosis_session_id, kind, "
                "query, status, tool_call_count, failed_tool_call_count) "
                "VALUES (?, ?, 1, 1, ?, 'q', 'SUCCESS', 0, 0)", (pk, f"r{pk}", kind))
        for mid, run, ordinal, text in ((11, 1, 1, "First turn."), (12, 1, 3, "The answer."),
                                        (13, 1, 4, "  "), (21, 2, 1, "Conclusion."),
                                        (31, 3, 1, "Answer.")):
            sql("INSERT INTO message (id, run_pk, ordinal, role, content, metadata, created_at, "
                "updated_at) VALUES (?, ?, ?, 'assistant', ?, '{}', ?, ?)",
                (mid, run, ordinal, text, now, now))
        sql("INSERT INTO diagnostic_report (id, run_pk, content, created_at, updated_at) "
            "VALUES (5, 2, '{}', ?, ?)", (now, now))
        for author, run, ttype, tid, subject in (
                (1, 1, "chat_message", 12, ""), (2, 1, "chat_message", 12, ""),
                (3, 1, "citation", 12, "c1"), (3, 1, "conversation_turn", 11, ""),
                (3, 2, "diagnostic_report", 5, ""), (1, 2, "chat_message", 21, "")):
            sql("INSERT INTO user_feedback (author_id, workspace_id, run_pk, target_type, "
                "target_id, subject_key, rating, created_at, updated_at) "
                "VALUES (?, 1, ?, ?, ?, ?, 'positive', ?, ?)",
                (author, run, ttype, tid, subject, now, now))
        for qid, needed in ((1, 2), (2, 1)):
            sql("INSERT INTO review_queue (id, workspace_id, name, rule, sample_percent, "
                "reviewers_per_run, blind, reservation_minutes, created_at, updated_at) "
                "VALUES (?, 1, ?, '{}', 100, ?, 0, 10, ?, ?)", (qid, f"q{qid}", needed, now, now))
            for run in (1, 2, 3):
                sql("INSERT INTO review_queue_item (queue_id, run_pk, source, created_at, "
                    "updated_at) VALUES (?, ?, 'rule', ?, ?)", (qid, run, now, now))
    engine.dispose()
    with app.app_context():
        upgrade(directory=directory)
        db.engine.dispose()
    engine = create_engine(url)
    with engine.connect() as conn:
        rows = {(q, r): (n, done is not None) for q, r, n, done in conn.exec_driver_sql(
            "SELECT queue_id, run_pk, ratings_count, completed_at FROM review_queue_item")}
    engine.dispose()
    assert rows == {(1, 1): (2, True), (1, 2): (1, False), (1, 3): (0, False),
                    (2, 1): (2, True), (2, 2): (1, True), (2, 3): (0, False)}


def test_the_search_index_migration_indexes_the_runs_already_there(empty_database_url):
    """7c3e5a1f0b29 fills ``run_search`` for the runs that exist: folded query and
    answer, and the run id, session id and tool calls joined by the separator;
    4b7e2c9d1a56 moves each call's text into its own ``run_search_call`` row (and back on
    downgrade); the index then finds them (on the database under test). On SQLite the
    triggers that forget a deleted run's or call's rows are there at the head (a later
    rebuild of diagnosis_run or tool_call_audit would drop them)."""
    import json

    from sqlalchemy import select, text

    from reviewapp import search_index
    from reviewapp.models import Run

    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": empty_database_url})
    directory = str(REPO_ROOT / "migrations")
    with app.app_context():
        upgrade(directory=directory, revision="3e6019ba2422")
        db.engine.dispose()
    engine = create_engine(empty_database_url)
    sqlite = engine.dialect.name == "sqlite"
    arguments = "CAST(:args AS jsonb)" if not sqlite else ":args"
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO workspace (id, slug, name, settings) VALUES (1, 'w1', 'W', '{}')"))
        conn.execute(text("INSERT INTO diagnosis_session (id, session_id, workspace_id, kind) "
                          "VALUES (1, 'Sess-1', 1, 'chat')"))
        for pk, query, answer in ((1, "Lieferadresse Hauptstraße", "ÉCHEC"), (2, "订单服务超时", None)):
            conn.execute(text(
                "INSERT INTO diagnosis_run (id, run_id, workspace_id, diagnosis_session_id, kind, query, "
                "answer, status, tool_call_count, failed_tool_call_count) "
                "VALUES (:pk, :rid, 1, 1, 'chat', :q, :a, 'SUCCESS', 0, 0)"),
                {"pk": pk, "rid": f"R-{pk}", "q": query, "a": answer})
        conn.execute(text(
            "INSERT INTO tool_call_audit (workspace_id, id, run_pk, chat_session_id, ordinal, tool_name, "
            f"status, arguments, result_summary, compensated) VALUES (1, 'c1', 2, 1, 0, 'Search', "
            f"'completed', {arguments}, 'Flight ZZX903', false)"),
            {"args": json.dumps({"city": "東京"})})  # stored as the app stores JSON
    engine.dispose()
    key = "rowid" if sqlite else "run_pk"

    def index_rows():
        engine = create_engine(empty_database_url)
        with engine.connect() as conn:
            rows = {pk: (q, a, o) for pk, q, a, o in conn.execute(
                text(f"SELECT {key}, query, answer, other FROM run_search ORDER BY {key}"))}
        engine.dispose()
        return rows

    with app.app_context():
        upgrade(directory=directory, revision="7c3e5a1f0b29")
        db.engine.dispose()
    at_7c3e = {
        1: ("lieferadresse hauptstrasse", "échec", "r-1\x1fsess-1"),
        2: ("订单服务超时", "", 'r-2\x1fsess-1\x1fsearch\x1f{"city": "東京"}\x1fflight zzx903'),
    }
    assert index_rows() == at_7c3e
    with app.app_context():
        upgrade(directory=directory)
        db.engine.dispose()
    # At the head (4b7e2c9d1a56) the call's text is in its own row, the run keeps its ids.
    engine = create_engine(empty_database_url)
    with engine.connect() as conn:
        rows = {pk: (q, a, o) for pk, q, a, o in conn.execute(
            text(f"SELECT {key}, query, answer, other FROM run_search ORDER BY {key}"))}
        call_rows = conn.execute(text("SELECT workspace_id, call_id, run_pk, text FROM run_search_call")).all()
        found = {term: sorted(conn.scalars(select(Run.id).where(search_index.TextMatch(Run.id, term))))
                 for term in ("hauptstrasse", "échec", "服务超", "zzx903", "sess-1", "r-2", "nowhere")}
        triggers = sorted(conn.scalars(text(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'run_search%'"))) \
            if sqlite else SEARCH_TRIGGERS
    engine.dispose()
    assert rows == {1: ("lieferadresse hauptstrasse", "échec", "r-1\x1fsess-1"),
                    2: ("订单服务超时", "", "r-2\x1fsess-1")}
    assert [tuple(row) for row in call_rows] == [(1, "c1", 2, 'search\x1f{"city": "東京"}\x1fflight zzx903')]
    assert found == {"hauptstrasse": [1], "échec": [1], "服务超": [2], "zzx903": [2],
                     "sess-1": [1, 2], "r-2": [2], "nowhere": []}
    assert triggers == SEARCH_TRIGGERS
    # Downgrading 4b7e2c9d1a56 puts the call's text back into its run's row.
    with app.app_context():
        downgrade(directory=directory, revision="7c4d2e9a1b30")
        db.engine.dispose()
    assert index_rows() == at_7c3e


SEARCH_TRIGGERS = ["run_search_call_added", "run_search_call_changed", "run_search_call_forget_call",
                   "run_search_call_forget_run", "run_search_call_removed", "run_search_forget"]


def _check_literals(sqltext: str) -> tuple[str, ...]:
    """The quoted values a CHECK constraint lists, sorted (PostgreSQL writes them back as
    ``'a'::character varying``, SQLite as written)."""
    return tuple(sorted(re.findall(r"'([^']*)'", sqltext)))


def test_upgrade_gives_the_vocabulary_check_constraints_the_models_derive(empty_database_url):
    """``compare_metadata`` does not compare CHECK constraints: a code added to a registry
    (domain/target_types.py, verdicts.py, triage_flow.py ...) without a migration would
    pass it and fail at the first insert. The migrated database's CHECK constraints list
    the same codes as the models' (issue 12: migrations are frozen, so this compares)."""
    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": empty_database_url})
    with app.app_context():
        upgrade(directory=str(REPO_ROOT / "migrations"))
        engine = create_engine(empty_database_url)
        with engine.connect() as conn:
            inspector = inspect(conn)
            migrated = {name: sorted(lits for c in inspector.get_check_constraints(name)
                                     if (lits := _check_literals(c["sqltext"])))
                        for name in db.metadata.tables}
        engine.dispose()
        db.engine.dispose()
    models = {name: sorted(lits for c in table.constraints if isinstance(c, CheckConstraint)
                           if (lits := _check_literals(str(c.sqltext))))
              for name, table in db.metadata.tables.items()}
    assert migrated == models
    assert ("chat_message", "citation", "conversation_turn", "diagnostic_report",
            "diagnostic_step", "tool_call") in models["user_feedback"]
    assert ("new", "resolved", "triaged", "wont_fix") in models["triage_item"]


def test_the_rateable_backfill(empty_database_url):
    """9c1f4e7b2a60 fills ``diagnosis_run.rateable`` for existing runs (on the database
    under test): finished and with an assistant message with text (not blanks only), a
    step or a report. By hand, run by run."""
    from sqlalchemy import text

    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": empty_database_url})
    directory = str(REPO_ROOT / "migrations")
    with app.app_context():
        upgrade(directory=directory, revision="d7e3a9c1f542")
        db.engine.dispose()
    runs = {  # pk: (kind, status, assistant text or None, user text, step, report, rateable)
        1: ("chat", "SUCCESS", "The answer.", None, False, False, True),
        2: ("chat", "RUNNING", "The answer.", None, False, False, False),
        3: ("chat", "SUCCESS", " \u3000\n", None, False, False, False),
        4: ("chat", "FAILED", None, "Only the question.", False, False, False),
        5: ("aiops", "FAILED", None, None, True, False, True),
        6: ("aiops", "SUCCESS", None, None, False, True, True),
        7: ("chat", "SUCCESS", None, None, False, False, False),
    }
    engine = create_engine(empty_database_url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO workspace (id, slug, name, settings) VALUES (1, 'w1', 'W', '{}')"))
        conn.execute(text("INSERT INTO diagnosis_session (id, session_id, workspace_id, kind) "
                          "VALUES (1, 's1', 1, 'chat')"))
        for pk, (kind, status, answer, question, step, report, _) in runs.items():
            conn.execute(text(
                "INSERT INTO diagnosis_run (id, run_id, workspace_id, diagnosis_session_id, kind, "
                "query, status, tool_call_count, failed_tool_call_count) "
                "VALUES (:pk, :rid, 1, 1, :kind, 'q', :status, 0, 0)"),
                {"pk": pk, "rid": f"r{pk}", "kind": kind, "status": status})
            for ordinal, (role, content) in enumerate((("user", question), ("assistant", answer))):
                if content is not None:
                    conn.execute(text(
                        "INSERT INTO message (run_pk, ordinal, role, content, metadata) "
                        "VALUES (:pk, :o, :role, :content, '{}')"),
                        {"pk": pk, "o": ordinal, "role": role, "content": content})
            if step:
                conn.execute(text("INSERT INTO diagnostic_step (run_pk, ordinal, name) "
                                  "VALUES (:pk, 0, 'Check disk')"), {"pk": pk})
            if report:
                conn.execute(text("INSERT INTO diagnostic_report (run_pk, content) "
                                  "VALUES (:pk, '# Disk full')"), {"pk": pk})
    engine.dispose()
    with app.app_context():
        upgrade(directory=directory)
        db.engine.dispose()
    engine = create_engine(empty_database_url)
    with engine.connect() as conn:
        stored = {pk: bool(flag) for pk, flag in conn.execute(
            text("SELECT id, rateable FROM diagnosis_run"))}
    engine.dispose()
    assert stored == {pk: row[-1] for pk, row in runs.items()}


def test_queue_items_with_nothing_to_rate_leave(empty_database_url):
    """6a7ddba9d1a7 takes out the open queue items of finished runs with no answer-level
    target (an AIOps run's report, else an assistant message with text), which could
    never complete, with their assignments (on the database under test). By hand, run by
    run; a complete item and a RUNNING run's item stay."""
    from sqlalchemy import text

    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": empty_database_url})
    directory = str(REPO_ROOT / "migrations")
    with app.app_context():
        upgrade(directory=directory, revision="f4c2a8e1d937")
        db.engine.dispose()
    runs = {  # pk: (kind, status, assistant text or None, step, report, has a target)
        1: ("chat", "SUCCESS", "The answer.", False, False, True),
        2: ("aiops", "FAILED", None, True, False, False),  # demo-aiops-disk-pressure
        3: ("aiops", "SUCCESS", None, True, True, True),
        4: ("chat", "SUCCESS", None, False, True, False),  # a chat run's report is no answer
        5: ("chat", "RUNNING", None, False, False, False),  # may still answer: stays
        6: ("aiops", "FAILED", " \u3000\n", True, False, False),
        7: ("aiops", "SUCCESS", "Conclusion.", True, False, True),
    }
    now = "2026-12-01 00:00:00+00:00"
    engine = create_engine(empty_database_url)
    with engine.begin() as conn:
        sql = lambda stmt, **values: conn.execute(text(stmt), values)  # noqa: E731
        sql("INSERT INTO workspace (id, slug, name, settings) VALUES (1, 'w1', 'W', '{}')")
        sql("INSERT INTO user_account (id, username, password_hash, active, session_token, "
            "created_at, updated_at) VALUES (1, 'ann', 'x', :t, 't1', :now, :now)", t=True, now=now)
        sql("INSERT INTO diagnosis_session (id, session_id, workspace_id, kind) "
            "VALUES (1, 's1', 1, 'chat')")
        for pk, (kind, status, answer, step, report, _) in runs.items():
            sql("INSERT INTO diagnosis_run (id, run_id, workspace_id, diagnosis_session_id, kind, "
                "query, status, tool_call_count, failed_tool_call_count) "
                "VALUES (:pk, :rid, 1, 1, :kind, 'q', :status, 0, 0)",
                pk=pk, rid=f"r{pk}", kind=kind, status=status)
            if answer is not None:
                sql("INSERT INTO message (run_pk, ordinal, role, content, metadata) "
                    "VALUES (:pk, 1, 'assistant', :content, '{}')", pk=pk, content=answer)
            if step:
                sql("INSERT INTO diagnostic_step (run_pk, ordinal, name) VALUES (:pk, 0, 'Look')",
                    pk=pk)
            if report:
                sql("INSERT INTO diagnostic_report (run_pk, content) VALUES (:pk, '# Disk')", pk=pk)
        for qid in (1, 2):
            sql("INSERT INTO review_queue (id, workspace_id, name, rule, sample_percent, "
                "reviewers_per_run, blind, reservation_minutes, created_at, updated_at) "
                "VALUES (:q, 1, :name, '{}', 100, 1, :f, 10, :now, :now)",
                q=qid, name=f"q{qid}", f=False, now=now)
        items = {(1, pk): (10 + pk, None) for pk in runs}  # (queue, run): (item id, completed)
        items |= {(2, 2): (22, now), (2, 4): (24, None)}
        for (qid, pk), (item_id, done) in items.items():
            sql("INSERT INTO review_queue_item (id, queue_id, run_pk, source, ratings_count, "
                "completed_at, created_at, updated_at) "
                "VALUES (:i, :q, :pk, 'rule', :n, :done, :now, :now)",
                i=item_id, q=qid, pk=pk, n=1 if done else 0, done=done, now=now)
        for item_id in (11, 12, 24):
            sql("INSERT INTO review_queue_assignment (item_id, user_id, created_at, updated_at) "
                "VALUES (:i, 1, :now, :now)", i=item_id, now=now)
    engine.dispose()
    with app.app_context():
        upgrade(directory=directory)
        db.engine.dispose()
    engine = create_engine(empty_database_url)
    with engine.connect() as conn:
        left = sorted(conn.execute(text("SELECT queue_id, run_pk FROM review_queue_item")).all())
        assigned = sorted(i for (i,) in conn.execute(
            text("SELECT item_id FROM review_queue_assignment")))
    engine.dispose()
    assert [tuple(row) for row in left] == [(1, 1), (1, 3), (1, 5), (1, 7), (2, 2)]
    assert assigned == [11]


def test_named_queue_recount_backfill(tmp_path):
    """9e4b7d2c1a58 counts a named queue's items again with its reviewers only. By hand:
    queue 1 names user 1 (N = 2); run 1's answer is rated by users 1 and 3 (3 not named:
    an admin from the run page) -> 1, no longer complete; run 2's by users 1 and 4, 4 not
    named any more but still assigned the item they rated (a departed reviewer's
    finished work) -> 2, kept as a former rater, complete. Queue 2 is open to all
    (N = 2): run 1 stays 2, complete, its time unchanged."""
    url = f"sqlite:///{tmp_path / 'named.sqlite'}"
    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": url})
    directory = str(REPO_ROOT / "migrations")
    with app.app_context():
        upgrade(directory=directory, revision="6a7ddba9d1a7")
        db.engine.dispose()
    engine = create_engine(url)
    now = "2026-12-01 00:00:00"
    with engine.begin() as conn:
        sql = conn.exec_driver_sql
        sql("INSERT INTO workspace (id, slug, name, settings, created_at, updated_at) "
            "VALUES (1, 'w1', 'W1', '{}', ?, ?)", (now, now))
        for uid in (1, 3, 4):
            sql("INSERT INTO user_account (id, username, password_hash, active, session_token, "
                "created_at, updated_at) VALUES (?, ?, 'x', 1, ?, ?, ?)",
                (uid, f"u{uid}", f"t{uid}", now, now))
        sql("INSERT INTO diagnosis_session (id, session_id, workspace_id, kind) "
            "VALUES (1, 's1', 1, 'chat')")
        for pk in (1, 2):
            sql("INSERT INTO diagnosis_run (id, run_id, workspace_id, diagnosis_session_id, kind, "
                "query, status, tool_call_count, failed_tool_call_count) "
                "VALUES (?, ?, 1, 1, 'chat', 'q', 'SUCCESS', 0, 0)", (pk, f"r{pk}"))
            sql("INSERT INTO message (id, run_pk, ordinal, role, content, metadata, created_at, "
                "updated_at) VALUES (?, ?, 1, 'assistant', 'The answer.', '{}', ?, ?)",
                (10 * pk, pk, now, now))
        for author, run in ((1, 1), (3, 1), (1, 2), (4, 2)):
            sql("INSERT INTO user_feedback (author_id, workspace_id, run_pk, target_type, "
                "target_id, subject_key, rating, created_at, updated_at) "
                "VALUES (?, 1, ?, 'chat_message', ?, '', 'positive', ?, ?)",
                (author, run, 10 * run, now, now))
        for qid, scope in ((1, "named"), (2, "all")):
            sql("INSERT INTO review_queue (id, workspace_id, name, rule, sample_percent, "
                "reviewers_per_run, blind, reservation_minutes, reviewers, assignment, dealt, "
                "dispute_rule, created_at, updated_at) "
                "VALUES (?, 1, ?, '{}', 100, 2, 0, 10, ?, 'by_hand', 0, 'tie', ?, ?)",
                (qid, f"q{qid}", scope, now, now))
        sql("INSERT INTO review_queue_reviewer (queue_id, user_id, position, created_at, "
            "updated_at) VALUES (1, 1, 0, ?, ?)", (now, now))
        for iid, qid, run in ((1, 1, 1), (2, 1, 2), (3, 2, 1)):
            sql("INSERT INTO review_queue_item (id, queue_id, run_pk, source, ratings_count, "
                "completed_at, created_at, updated_at) VALUES (?, ?, ?, 'rule', 2, ?, ?, ?)",
                (iid, qid, run, now, now, now))
        sql("INSERT INTO review_queue_assignment (item_id, user_id, created_at, updated_at) "
            "VALUES (2, 4, ?, ?)", (now, now))
    engine.dispose()
    with app.app_context():
        upgrade(directory=directory)
        db.engine.dispose()
    engine = create_engine(url)
    with engine.connect() as conn:
        rows = {i: (n, done) for i, n, done in conn.exec_driver_sql(
            "SELECT id, ratings_count, completed_at FROM review_queue_item")}
        former = conn.exec_driver_sql(
            "SELECT queue_id, run_pk, user_id FROM review_queue_former_rater").all()
    engine.dispose()
    assert rows == {1: (1, None), 2: (2, now), 3: (2, now)}
    assert former == [(1, 2, 4)]
