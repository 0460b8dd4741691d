"""``flask users``: create, grant, list, set-password.
Each command builds ``Actor.system_actor()`` and calls services only."""

from __future__ import annotations

import click
from flask.cli import AppGroup

from ..actors import Actor, Role
from ..errors import ServiceError
from ..extensions import db
from ._common import fail, workspace_id_of

users_cli = AppGroup("users", help="Manage user accounts.")


@users_cli.command("create")
@click.argument("username")
@click.option("--workspace", "slug", required=True, help="Workspace slug.")
@click.option("--role", type=click.Choice([r.value for r in Role]), default="reviewer")
@click.option("--password", default=None, help="Omit to be prompted; '-' generates one.")
def create_user(username: str, slug: str, role: str, password: str | None) -> None:
    """Create USERNAME with a role in a workspace; prints a generated password once."""
    from ..services import admin

    generated = False
    if password is None:
        password = click.prompt("Password (empty to generate)", default="", hide_input=True,
                                show_default=False)
    if not password or password == "-":
        password, generated = admin.generate_password(), True
    try:
        user = admin.create_user(db.session, Actor.system_actor(), username, password,
                                 workspace_id_of(slug), role)
    except ServiceError as exc:
        fail(exc)
    click.echo(f"user '{user.username}' created as {role} in '{slug}'")
    if generated:
        click.echo(f"password: {password}")


@users_cli.command("grant")
@click.argument("username")
@click.option("--workspace", "slug", required=True, help="Workspace slug.")
@click.option("--role", type=click.Choice([*(r.value for r in Role), "none"]), required=True,
              help="The role in that workspace; 'none' removes the membership.")
def grant(username: str, slug: str, role: str) -> None:
    """Give an existing USERNAME a role in another (or the same) workspace."""
    from ..services import admin

    user = admin.get_user_by_username(db.session, username)
    if user is None:
        raise click.ClickException(f"no user '{username}'")
    try:
        admin.set_membership(db.session, Actor.system_actor(), user.id, workspace_id_of(slug),
                             None if role == "none" else role)
    except ServiceError as exc:
        fail(exc)
    if role == "none":
        click.echo(f"user '{username}' removed from '{slug}'")
    else:
        click.echo(f"user '{username}' is {role} in '{slug}'")


@users_cli.command("list")
@click.option("--workspace", "slug", default=None, help="Only this workspace.")
def list_users(slug: str | None) -> None:
    """List memberships, tab-separated under a header row: workspace, username, role,
    state (active / inactive), last login (UTC)."""
    from ..services import admin

    rows = admin.list_members(db.session, Actor.system_actor(),
                              workspace_id_of(slug) if slug else None)
    if not rows:
        click.echo("no users")
        return
    click.echo("workspace\tusername\trole\tstate\tlast login")
    for row in rows:
        login = row.last_login_at.strftime("%Y-%m-%d %H:%M UTC") if row.last_login_at else "never"
        click.echo(f"{row.workspace}\t{row.username}\t{row.role}\t"
                   f"{'active' if row.active else 'inactive'}\t{login}")


@users_cli.command("set-password")
@click.argument("username")
@click.option("--password", default=None, help="Omit to be prompted; '-' generates one.")
def set_password(username: str, password: str | None) -> None:
    """Change USERNAME's password (logs them out everywhere); prints a generated one once."""
    from ..services import admin

    user = admin.get_user_by_username(db.session, username)
    if user is None:
        raise click.ClickException(f"no user '{username}'")
    user_id, name = user.id, user.username
    if password is None:
        password = click.prompt("New password", hide_input=True, confirmation_prompt=True)
    generated = password == "-"
    if generated:
        password = admin.generate_password()
    try:
        admin.set_password(db.session, Actor.system_actor(), user_id, password)
    except ServiceError as exc:
        fail(exc)
    click.echo(f"password of '{name}' changed")
    if generated:
        click.echo(f"password: {password}")
