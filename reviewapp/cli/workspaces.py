"""``flask workspaces``: create, rename, show or change settings.
Each command builds ``Actor.system_actor()`` and calls services only."""

from __future__ import annotations

import click
from flask.cli import AppGroup

from ..actors import Actor
from ..errors import ServiceError
from ..extensions import db
from ._common import fail, workspace_id_of

workspaces_cli = AppGroup("workspaces", help="Manage workspaces.")


@workspaces_cli.command("create")
@click.argument("slug")
@click.option("--name", default=None, help="Display name (defaults to the slug).")
def create_workspace(slug: str, name: str | None) -> None:
    """Create a workspace SLUG."""
    from ..services import admin

    try:
        ws = admin.create_workspace(db.session, Actor.system_actor(), slug, name or slug)
    except ServiceError as exc:
        fail(exc)
    click.echo(f"workspace '{ws.slug}' created (id {ws.id})")


@workspaces_cli.command("rename")
@click.argument("slug")
@click.argument("name")
def rename_workspace(slug: str, name: str) -> None:
    """Give the workspace SLUG the display name NAME (audited)."""
    from ..services import admin

    try:
        admin.rename_workspace(db.session, Actor.system_actor(), workspace_id_of(slug), name)
    except ServiceError as exc:
        fail(exc)
    click.echo(f"workspace '{slug}' is now called '{name}'")


@workspaces_cli.command("settings")
@click.argument("slug")
@click.option("--set", "changes", multiple=True, metavar="CODE=VALUE",
              help="Change one setting (repeatable); VALUE as on the settings page, '\\n' "
                   "between lines. Without --set: print the settings.")
def workspace_settings(slug: str, changes: tuple[str, ...]) -> None:
    """Show or change the settings of workspace SLUG, through the settings page's
    service and rules (versioned, audited)."""
    from ..services import admin

    system, workspace_id = Actor.system_actor(), workspace_id_of(slug)
    view = admin.get_settings(db.session, system, workspace_id)
    if changes:
        values: dict[str, str] = {}
        for change in changes:
            code, sep, value = change.partition("=")
            if not sep:
                raise click.ClickException(f"--set {change!r}: write CODE=VALUE")
            values[code.strip()] = value.replace("\\n", "\n")
        try:
            view = admin.update_settings(db.session, system, workspace_id, view.version, values)
        except ServiceError as exc:
            fail(exc)
    click.echo(f"# settings of '{slug}', version {view.version}")
    for code, text in view.values.items():
        click.echo(f"[{code}]")
        click.echo(text)
