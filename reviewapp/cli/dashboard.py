"""``flask dashboard``: rebuild the roll-ups.
Each command builds ``Actor.system_actor()`` and calls services only."""

from __future__ import annotations

import time

import click
from flask.cli import AppGroup

from ..actors import Actor
from ..errors import ServiceError
from ..extensions import db
from ._common import fail, workspace_id_of

dashboard_cli = AppGroup("dashboard", help="The dashboard's roll-ups.")


@dashboard_cli.command("rebuild")
@click.option("--workspace", "slug", default=None, help="Only this workspace (slug).")
def dashboard_rebuild(slug: str | None) -> None:
    """Recompute the dashboard's roll-ups (runs, tool calls and triage items per
    workspace and UTC day) and each user's count of rated runs per workspace from the
    runs, tool calls, ratings and triage items: after a bulk load that bypassed the services,
    or to repair. PostgreSQL: writers wait for it (the roll-ups are locked meanwhile)."""
    from ..db_setup import write_intent
    from ..services import dashboard

    workspace_id = workspace_id_of(slug) if slug else None
    started = time.perf_counter()
    try:
        with write_intent():
            summary = dashboard.rebuild(db.session, Actor.system_actor(), workspace_id)
    except ServiceError as exc:
        fail(exc)
    click.echo(f"dashboard roll-ups rebuilt: {summary.run_rows} run rows, "
               f"{summary.tool_rows} tool rows, {summary.triage_rows} triage rows, "
               f"{summary.rated_rows} rated-runs rows "
               f"in {time.perf_counter() - started:.1f} s")
