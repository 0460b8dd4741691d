"""``flask tokens``: create, list, revoke ingest tokens.
Each command builds ``Actor.system_actor()`` and calls services only."""

from __future__ import annotations

import click
from flask.cli import AppGroup

from ..actors import Actor
from ..errors import ServiceError
from ..extensions import db
from ._common import fail, workspace_id_of

tokens_cli = AppGroup("tokens", help="Manage ingest tokens.")


@tokens_cli.command("create")
@click.option("--workspace", "slug", required=True, help="Workspace slug.")
@click.option("--name", required=True, help="A name people recognise, e.g. 'agent-prod'.")
def create_token(slug: str, name: str) -> None:
    """Create an ingest token; the secret is printed once and never stored."""
    from ..services import admin

    try:
        new = admin.create_token(db.session, Actor.system_actor(), workspace_id_of(slug), name)
    except ServiceError as exc:
        fail(exc)
    click.echo(f"token '{new.token.name}' for '{slug}' (id {new.token.id}); send it as "
               "'Authorization: Bearer <secret>'. It is shown only now:")
    click.echo(new.secret)


@tokens_cli.command("list")
@click.option("--workspace", "slug", required=True, help="Workspace slug.")
def list_tokens(slug: str) -> None:
    """List the workspace's ingest tokens: id, name, state, last use (UTC). No secrets."""
    from ..services import admin

    tokens = admin.list_tokens(db.session, Actor.system_actor(), workspace_id_of(slug))
    if not tokens:
        click.echo(f"no tokens in '{slug}'")
        return
    click.echo("id\tname\tstate\tlast used (newest token first)")
    for token in tokens:
        used = token.last_used_at.strftime("%Y-%m-%d %H:%M UTC") if token.last_used_at else "never used"
        click.echo(f"{token.id}\t{token.name}\t{'revoked' if token.revoked else 'active'}\t{used}")


@tokens_cli.command("revoke")
@click.argument("token_id", type=int)
def revoke_token(token_id: int) -> None:
    """Revoke the token TOKEN_ID."""
    from ..services import admin

    try:
        admin.revoke_token(db.session, Actor.system_actor(), token_id)
    except ServiceError as exc:
        fail(exc)
    click.echo(f"token {token_id} revoked")
