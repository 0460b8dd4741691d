"""What every command group shares: a workspace slug to its id, a service error to a
click error (exit status 1, the message on stderr)."""

from __future__ import annotations

from typing import NoReturn

import click

from ..errors import ServiceError
from ..extensions import db


def workspace_id_of(slug: str) -> int:
    """The id of the workspace ``slug``; a ``click.ClickException`` when there is none."""
    from ..services.admin import get_workspace_by_slug

    ws = get_workspace_by_slug(db.session, slug)
    if ws is None:
        raise click.ClickException(f"no workspace with slug '{slug}'")
    return ws.id


def fail(error: ServiceError) -> NoReturn:
    """Stop the command with ``error``'s message (a ``click.ClickException``)."""
    raise click.ClickException(error.message)
