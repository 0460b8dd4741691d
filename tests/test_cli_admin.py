"""Account commands: grant an existing user another workspace, list users and tokens."""

from __future__ import annotations

from sqlalchemy import select

from reviewapp.actors import Role
from reviewapp.models import Membership


def _roles(session, user) -> dict[str, str]:
    session.expire_all()
    rows = session.execute(select(Membership.workspace_id, Membership.role).where(
        Membership.user_id == user.id)).all()
    return dict(rows)


def test_grant_adds_changes_and_removes_a_membership(runner, make, session):
    home, other = make.workspace(slug="home"), make.workspace(slug="other")
    user = make.user(home, Role.REVIEWER, username="gail")
    out = runner.invoke(args=["users", "grant", "gail", "--workspace", "other", "--role", "lead"])
    assert out.exit_code == 0, out.output
    assert _roles(session, user) == {home.id: "reviewer", other.id: "lead"}
    runner.invoke(args=["users", "grant", "gail", "--workspace", "other", "--role", "admin"])
    assert _roles(session, user)[other.id] == "admin"
    out = runner.invoke(args=["users", "grant", "gail", "--workspace", "other", "--role", "none"])
    assert out.exit_code == 0 and _roles(session, user) == {home.id: "reviewer"}


def test_grant_names_what_is_missing(runner, make):
    make.workspace(slug="home")
    out = runner.invoke(args=["users", "grant", "nobody", "--workspace", "home", "--role", "lead"])
    assert out.exit_code != 0 and "no user 'nobody'" in out.output
    make.user(make.workspace(slug="x"), username="gail")
    out = runner.invoke(args=["users", "grant", "gail", "--workspace", "nope", "--role", "lead"])
    assert out.exit_code != 0 and "no workspace with slug 'nope'" in out.output


def test_users_list_and_tokens_list(runner, make):
    a, b = make.workspace(slug="alpha"), make.workspace(slug="beta")
    make.user(a, Role.ADMIN, username="zoe")
    make.user(a, Role.REVIEWER, username="amy")
    make.user(b, Role.LEAD, username="bob")
    listed = runner.invoke(args=["users", "list"]).output.splitlines()
    assert listed == ["alpha\tamy\treviewer", "alpha\tzoe\tadmin", "beta\tbob\tlead"]
    only_b = runner.invoke(args=["users", "list", "--workspace", "beta"]).output.splitlines()
    assert only_b == ["beta\tbob\tlead"]
    created = runner.invoke(args=["tokens", "create", "--workspace", "alpha", "--name", "agent-prod"])
    secret = created.output.splitlines()[-1]
    tokens = runner.invoke(args=["tokens", "list", "--workspace", "alpha"]).output
    assert "agent-prod\tactive\tnever used" in tokens and secret not in tokens
    assert runner.invoke(args=["tokens", "list", "--workspace", "beta"]).output.strip() == "no tokens in 'beta'"
