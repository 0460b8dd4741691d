"""``flask demo``: load the demo runs, bootstrap a first start.
Each command builds ``Actor.system_actor()`` and calls services only."""

from __future__ import annotations

import click
from flask.cli import AppGroup
from sqlalchemy import func, select

from ..actors import Actor, Role
from ..extensions import db

demo_cli = AppGroup("demo", help="Demo data.")


@demo_cli.command("load")
@click.option("--workspace", "slug", default="demo", show_default=True)
def demo_load(slug: str) -> None:
    """Load the demo runs into a workspace (created if missing). Idempotent."""
    from ..services import admin, demo

    system = Actor.system_actor()
    ws = admin.get_workspace_by_slug(db.session, slug)
    if ws is None:
        ws = admin.create_workspace(db.session, system, slug, "Demo on-call")
    summary = demo.load(db.session, system, ws.id)
    click.echo(f"demo runs: {summary.created} created, {summary.updated} updated, "
               f"{summary.unchanged} unchanged")


@demo_cli.command("bootstrap")
@click.option("--url", default="http://127.0.0.1:5000", show_default=True,
              help="the address the app serves on, for the 'Log in at' line (make run passes its own)")
def demo_bootstrap(url: str) -> None:
    """First start: when the database holds no user, create the demo workspace, an admin,
    a lead and a reviewer with generated passwords (printed once) and load the demo runs."""
    from ..models import User
    from ..services import admin, demo

    if (db.session.scalar(select(func.count()).select_from(User)) or 0) > 0:
        click.echo("Database already has users; nothing to bootstrap. "
                   "Change a password with: flask users set-password USERNAME")
        return
    system = Actor.system_actor()
    ws = demo.demo_workspace(db.session) or admin.create_workspace(
        db.session, system, demo.DEMO_SLUG, "Demo on-call")
    lines = []
    for username, role in (("admin", Role.ADMIN), ("lead", Role.LEAD), ("reviewer", Role.REVIEWER)):
        password = admin.generate_password()
        admin.create_user(db.session, system, username, password, ws.id, role)
        lines.append(f"  {role.value:<9} username: {username:<9} password: {password}")
    demo.load(db.session, system, ws.id)
    click.echo(f"Demo workspace ready. Log in at {url} with:")
    for line in lines:
        click.echo(line)
    click.echo("These passwords are shown only once. Change one with: "
               ".venv/bin/flask users set-password USERNAME")
