"""The race tests' shared set-up (``test_races_http``, ``test_races_otel``): a private
database, two gunicorn processes on it, users logged in on each, an ingest token, and an
in-process app for seeding and reading; plus ``REPS`` and the no-5xx check."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from reviewapp import create_app
from reviewapp.actors import Actor, Role
from reviewapp.extensions import db
from reviewapp.models import Workspace
from reviewapp.services import admin

from ..factories import DEFAULT_PASSWORD, Factories
from .servers import SECRET, client, login, private_database, start_servers

REPS = int(os.environ.get("REVIEWAPP_RACE_REPS", "12"))
_seq = itertools.count(1)


class World:
    """The shared set-up: database, two servers, users with their login cookies per server,
    an ingest token, and an in-process app for seeding and for reading the database."""

    def __init__(self, url: str, servers: list, app: Any) -> None:
        self.url, self.servers, self.app = url, servers, app
        with app.app_context():
            make = Factories(db.session)
            self.ws = make.workspace()
            self.ws_id = self.ws.id
            self.users = {name: make.user(self.ws, role, username=f"{name}-{next(_seq)}")
                          for name, role in (("r1", Role.REVIEWER), ("r2", Role.REVIEWER),
                                             ("r3", Role.REVIEWER), ("lead", Role.LEAD))}
            self.usernames = {k: u.username for k, u in self.users.items()}
            self.user_ids = {k: u.id for k, u in self.users.items()}
            self.token = admin.create_token(db.session, Actor.system_actor(), self.ws_id,
                                            "race").secret
        # One login per user and server (each process checks the cookie on its own).
        self.cookies = {(name, i): login(s.base, self.usernames[name], DEFAULT_PASSWORD)
                        for name in self.usernames for i, s in enumerate(servers)}

    def base(self, i: int) -> str:
        return self.servers[i % len(self.servers)].base

    def as_user(self, name: str, i: int) -> requests.Session:
        return client(self.cookies[(name, i % len(self.servers))])

    def as_token(self) -> requests.Session:
        s = client()
        s.headers["Authorization"] = f"Bearer {self.token}"
        return s

    def run(self, **doc: Any) -> tuple[int, str, str]:
        """A fresh run through the services; returns (pk, run_id, session_id)."""
        n = next(_seq)
        run_id, session_id = f"race-run-{n}", f"race-session-{n}"
        with self.app.app_context():
            workspace = db.session.get(Workspace, self.ws_id)
            run = Factories(db.session).run(workspace, run_id, session_id=session_id, **doc)
            return run.id, run_id, session_id

    def read(self, fn: Any) -> Any:
        with self.app.app_context():
            try:
                return fn(db.session)
            finally:
                db.session.remove()


def serving_world(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[World]:
    """Body of a module-scoped ``world`` fixture: yields the ``World`` of a fresh private
    database (folder ``name``) and two servers; afterwards checks that no server logged a
    Traceback, stops them and disposes of the engine."""
    folder = tmp_path_factory.mktemp(name)
    with private_database(folder) as url:
        app = create_app({"TESTING": True, "SECRET_KEY": SECRET, "DATABASE_URL": url})
        servers = start_servers(url, folder)
        try:
            yield World(url, servers, app)
            for server in servers:
                assert "Traceback" not in server.log(), server.log()[-3000:]
        finally:
            for server in servers:
                server.stop()
            with app.app_context():
                db.engine.dispose()


def no_5xx(responses: list[requests.Response]) -> None:
    bad = [(r.request.method, r.url, r.status_code, r.text[:300]) for r in responses
           if r.status_code >= 500]
    assert not bad, bad
