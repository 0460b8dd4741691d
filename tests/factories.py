"""Test factories with keyword defaults and sequences; they go through the services."""

from __future__ import annotations

import itertools
import secrets
from functools import lru_cache
from typing import Any

from sqlalchemy.orm import Session

from reviewapp.actors import Actor, Role
from reviewapp.models import Membership, Run, User, Workspace
from reviewapp.services import admin, runs

DEFAULT_PASSWORD = "correct-horse-battery"
_seq = itertools.count(1)


@lru_cache(maxsize=1)
def _default_hash() -> str:
    # Hashing is slow on purpose; hash the shared test password once.
    return admin.hash_password(DEFAULT_PASSWORD)


class Factories:
    """Builds workspaces, users and runs for tests."""

    system = Actor.system_actor()

    def __init__(self, session: Session) -> None:
        self.session = session

    def workspace(self, slug: str | None = None, name: str | None = None, **settings: Any) -> Workspace:
        n = next(_seq)
        ws = admin.create_workspace(self.session, self.system, slug or f"ws-{n}", name or f"Workspace {n}")
        if settings:
            ws.settings = dict(settings)
            self.session.commit()
        return ws

    def user(self, workspace: Workspace | None = None, role: Role | str = Role.REVIEWER,
             username: str | None = None) -> User:
        n = next(_seq)
        user = User(username=username or f"user{n}", password_hash=_default_hash(), active=True,
                    session_token=secrets.token_hex(16))
        self.session.add(user)
        self.session.flush()
        if workspace is not None:
            self.session.add(Membership(user_id=user.id, workspace_id=workspace.id,
                                        role=Role(role).value))
        self.session.commit()
        return user

    def actor(self, user: User) -> Actor:
        return Actor.for_user(user.id, user.username)

    def run(self, workspace: Workspace, run_id: str | None = None, **doc: Any) -> Run:
        """A run through ``runs.upsert_run``; ``doc`` overrides the defaults."""
        n = next(_seq)
        body: dict[str, Any] = {
            "session_id": f"session-{n}",
            "kind": "chat",
            "query": f"Question {n}?",
            "answer": f"Answer {n}.",
            "status": "SUCCESS",
            "messages": [
                {"id": "u1", "role": "user", "content": f"Question {n}?"},
                {"id": "a1", "role": "assistant", "content": f"Answer {n}.",
                 "metadata": {"citations": [
                     {"id": "c1", "title": "Doc one", "source": "kb://one", "excerpt": "one"},
                     {"id": "c2", "title": "Doc two", "source": "kb://two", "excerpt": "two"},
                 ]}},
            ],
        }
        body.update(doc)
        result = runs.upsert_run(self.session, self.system, workspace.id, run_id or f"run-{n}", body)
        return result.run

    def aiops_run(self, workspace: Workspace, run_id: str | None = None, **doc: Any) -> Run:
        """An AIOps run with two diagnostic steps and a report; ``doc`` overrides."""
        n = next(_seq)
        body: dict[str, Any] = {
            "kind": "aiops",
            "query": f"Alert {n}: disk full on db-{n}",
            "answer": f"Diagnosis {n}: log rotation stopped.",
            "messages": [],
            "steps": [
                {"id": "s1", "name": "Check disk usage", "status": "done", "summary": "95 %"},
                {"id": "s2", "name": "Check log rotation", "status": "done", "summary": "stopped"},
            ],
            "report": {"content": f"# Report {n}\nLog rotation stopped."},
        }
        body.update(doc)
        return self.run(workspace, run_id, **body)
