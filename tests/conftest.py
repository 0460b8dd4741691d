"""Fixtures: a fresh database per test (SQLite file, or PostgreSQL when
``REVIEWAPP_TEST_DB_URL`` is set), the app, a client, a CLI runner, factories, login."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from reviewapp import create_app
from reviewapp.extensions import db

from . import package_guard
from .databases import private_postgres
from .factories import Factories

PG_URL = os.environ.get("REVIEWAPP_TEST_DB_URL")


def pytest_configure(config: pytest.Config) -> None:
    package_guard.install()


@pytest.fixture(scope="session", autouse=True)
def _package_tree_unchanged() -> Iterator[None]:
    """No test (nor a subprocess one starts) leaves a file added to or removed from
    ``reviewapp/``."""
    before = package_guard.snapshot()
    yield
    changed = package_guard.changes(before, package_guard.snapshot())
    if changed:
        pytest.fail(f"the test session wrote into the package tree (use tmp_path): {changed}")


@pytest.fixture(autouse=True)
def _no_write_into_the_package() -> Iterator[None]:
    """This test (any thread of it) opened for writing, renamed, removed ... nothing in
    ``reviewapp/`` (the audit hook of ``package_guard``)."""
    package_guard.take_violations()
    yield
    written = package_guard.take_violations()
    if written:
        pytest.fail(f"this test wrote into the package tree (use tmp_path): {written}")


def pytest_report_header(config: pytest.Config) -> str:
    return f"reviewapp test database: {'PostgreSQL ' + make_url(PG_URL).render_as_string() if PG_URL else 'SQLite (file per test)'}"


@pytest.fixture(scope="session")
def database_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Per test session: a schema built once. SQLite: a template file copied per test.
    PostgreSQL: a private database for this session (and xdist worker), dropped at the end."""
    if PG_URL:
        with private_postgres(PG_URL, "reviewapp_test") as url:
            app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": url})
            with app.app_context():
                db.create_all()
                db.engine.dispose()
            yield url
    else:
        path = tmp_path_factory.mktemp("template") / "template.sqlite"
        app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": f"sqlite:///{path}"})
        with app.app_context():
            db.create_all()
            db.engine.dispose()
        yield str(path)


def _truncate_all(url: str) -> None:
    engine = create_engine(url)
    tables = ", ".join(f'"{t.name}"' for t in db.metadata.sorted_tables)
    with engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    engine.dispose()


@pytest.fixture
def database_url(database_template: str, tmp_path: Path) -> str:
    """A clean database for one test."""
    if PG_URL:
        _truncate_all(database_template)
        return database_template
    target = tmp_path / "test.sqlite"
    shutil.copyfile(database_template, target)
    return f"sqlite:///{target}"


@pytest.fixture
def app_config(database_url: str, tmp_path: Path) -> dict[str, Any]:
    """The test mapping; tests may change it before ``app`` is built."""
    return {
        "TESTING": True,
        "SECRET_KEY": "test-secret-key",
        "DATABASE_URL": database_url,
        "WTF_CSRF_ENABLED": False,
        "RATELIMIT_ENABLED": False,
        "SERVER_NAME": None,
    }


@pytest.fixture
def app(app_config: dict[str, Any], tmp_path: Path):
    app = create_app(app_config)
    app.instance_path = str(tmp_path / "instance")
    with app.app_context():
        yield app
        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def app_factory(app_config: dict[str, Any]):
    """``app_factory(**overrides)``: another app on the same database (e.g. CSRF on);
    its engine is disposed after the test."""
    created = []

    def _build(**overrides: Any):
        other = create_app({**app_config, **overrides})
        created.append(other)
        return other

    yield _build
    for other in created:
        with other.app_context():
            db.engine.dispose()


@pytest.fixture
def session(app):
    """The app's SQLAlchemy session (what services receive)."""
    return db.session


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def make(session) -> Factories:
    """Factories: ``make.workspace()``, ``make.user()``, ``make.run()`` ..."""
    return Factories(session)


@pytest.fixture
def ws(make):
    """A fresh workspace (a module may define its own ``ws`` with other settings)."""
    return make.workspace()


@pytest.fixture
def login(client):
    """``login(user)`` logs the test client in as ``user`` (password from the factory)."""
    from .factories import DEFAULT_PASSWORD

    def _login(user, password: str = DEFAULT_PASSWORD, c=None):
        c = c or client
        response = c.post("/login", data={"username": user.username, "password": password})
        assert response.status_code == 303, response.status_code
        return c

    return _login


def _read_through(app):
    """The app as a WSGI callable that reads each response whole and closes it
    before the server writes a byte.

    Werkzeug's development server skips the response's ``close()`` when the
    browser drops the connection while the server drains the request (a
    favicon fetch cut short by a navigation): the static file was then left
    open, and its ``ResourceWarning`` failed whichever test the collector ran
    in (CI, stop 28). Read whole, nothing is left open whatever the socket does.
    """
    def served(environ, start_response):
        body = app(environ, start_response)
        try:
            return [b"".join(body)]
        finally:
            if hasattr(body, "close"):
                body.close()

    return served


@pytest.fixture
def live_server(app) -> Iterator[str]:
    """The test app served on 127.0.0.1 (a free port) from a background thread."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, _read_through(app), threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="live-server", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(timeout=10)
