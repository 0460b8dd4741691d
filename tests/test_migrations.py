"""Migrations: one head, and ``upgrade`` on an empty database gives exactly the models'
schema (no drift), on the database under test (SQLite, or PostgreSQL in the second leg)."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from flask_migrate import upgrade
from sqlalchemy import create_engine

from reviewapp import REPO_ROOT, create_app
from reviewapp.extensions import db

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


def test_upgrade_on_empty_database_matches_models(empty_database_url, tmp_path):
    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": empty_database_url})
    with app.app_context():
        upgrade(directory=str(REPO_ROOT / "migrations"))
        engine = create_engine(empty_database_url)
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            diff = compare_metadata(context, db.metadata)
            tables = set(db.metadata.tables)
            present = set(conn.dialect.get_table_names(conn)) - {"alembic_version"}
        engine.dispose()
        db.engine.dispose()
    assert diff == []
    assert present == tables


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
