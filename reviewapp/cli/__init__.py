"""``flask`` commands, one module per command group. Each command builds
``Actor.system_actor()`` and calls services only."""

from __future__ import annotations

from flask import Flask

from .dashboard import dashboard_cli
from .demo import demo_cli
from .export import export_cli
from .runs import runs_cli
from .tokens import tokens_cli
from .users import users_cli
from .workspaces import workspaces_cli


def init_app(app: Flask) -> None:
    """Register the command groups."""
    for group in (users_cli, workspaces_cli, tokens_cli, demo_cli, runs_cli, export_cli,
                  dashboard_cli):
        app.cli.add_command(group)
