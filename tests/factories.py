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

    def token(self, workspace: Workspace, name: str = "agent") -> str:
        """The secret of a new ingest token of ``workspace``."""
        return admin.create_token(self.session, self.system, workspace.id, name).secret

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


# --- issue 7 (queue, cases, exports): rows inserted directly, with exact timestamps,
# states and authors, so list / filter / export tests can set up many precise cases fast.
# (The feedback services' own tests cover how real submits create these rows.)

def _triage_item(self, run: Run, *, state: str = "new", assignee: User | None = None,
                 opened_reason: str = "not_useful", fault_category: str | None = None,
                 note: str | None = None, created_at: Any = None, verdict: bool = True):
    """A triage item for ``run`` (direct insert), counted in the dashboard's triage
    roll-up as the services count theirs; ``verdict`` also sets ``run.feedback =
    not_useful`` as the feedback service would (through its one verdict write, which the
    dashboard's roll-ups follow)."""
    from reviewapp.models import TriageItem
    from reviewapp.services import rollups
    from reviewapp.services.feedback.verdict import store_verdict

    if verdict and opened_reason == "not_useful":
        store_verdict(self.session, run, "not_useful")
    item = TriageItem(workspace_id=run.workspace_id, run_pk=run.id, state=state,
                      opened_reason=opened_reason, fault_category=fault_category, note=note,
                      assignee_id=assignee.id if assignee else None)
    if created_at is not None:
        item.created_at = created_at
    self.session.add(item)
    self.session.flush()
    rollups.move_triage_item(self.session, item.workspace_id, item.created_at, None, state)
    self.session.commit()
    return item


def _feedback_row(self, run: Run, author: User, *, rating: str = "negative",
                  target_type: str = "chat_message", target_id: int | None = None,
                  subject_key: str = "", reason: str | None = None, comment: str | None = None,
                  correction: str | None = None, created_at: Any = None):
    """A ``user_feedback`` row plus its ``feedback_event`` "create" (direct insert), and
    the run's review-queue completion and the author's count of rated runs kept as the
    feedback service does. The target defaults to the run's first assistant message."""
    from reviewapp.models import Feedback, FeedbackEvent, Message
    from reviewapp.services import rated_runs, rollups
    from reviewapp.services.queue_completion import refresh_run

    if target_id is None:
        from sqlalchemy import select

        target_id = self.session.scalar(
            select(Message.id).where(Message.run_pk == run.id, Message.role == "assistant")
            .order_by(Message.ordinal).limit(1)
        ) or 0
    if target_type == "tool_call":  # counted by the dashboard's roll-ups, as the service does
        rollups.track(self.session, [run.id], rollups.Part.TOOL_FEEDBACK)
    row = Feedback(author_id=author.id, workspace_id=run.workspace_id, run_pk=run.id,
                   target_type=target_type, target_id=target_id, subject_key=subject_key,
                   rating=rating, reason=reason, comment=comment, correction=correction)
    if created_at is not None:
        row.created_at = row.updated_at = created_at
    self.session.add(row)
    self.session.flush()
    rated_runs.rated(self.session, author.id, run.workspace_id, run.id)
    self.session.add(FeedbackEvent(
        feedback_id=row.id, actor_id=author.id, workspace_id=run.workspace_id, run_pk=run.id,
        target_type=target_type, target_id=target_id, subject_key=subject_key, action="create",
        before=None, after={"rating": rating, "reason": reason, "comment": comment,
                            "correction": correction}))
    self.session.flush()
    refresh_run(self.session, run.id)
    self.session.commit()
    return row


def _case(self, workspace: Workspace, *, run: Run | None = None, diagnosis_id: str | None = None,
          source_type: str = "AUTO", created_at: Any = None, **fields: Any):
    """A ``case_library`` row (direct insert); ``diagnosis_id`` defaults to the run's id."""
    from reviewapp.models import Case

    n = next(_seq)
    case = Case(workspace_id=workspace.id, run_pk=run.id if run else None,
                diagnosis_id=diagnosis_id or (run.run_id if run else f"legacy-{n}"),
                source_type=source_type, title=fields.pop("title", f"Case {n}"), **fields)
    if created_at is not None:
        case.created_at = case.updated_at = created_at
    self.session.add(case)
    self.session.commit()
    return case


Factories.triage_item = _triage_item
Factories.feedback_row = _feedback_row
Factories.case = _case
