"""``flask export``: cases, feedback, the eval set as CSV / JSON lines (SPEC 8).
Each command builds ``Actor.system_actor()`` and calls services only."""

from __future__ import annotations

import click
from flask.cli import AppGroup

from ..actors import Actor
from ..domain import export_format
from ..domain.feedback import RATINGS
from ..domain.target_types import TARGET_TYPES
from ..errors import ServiceError
from ..extensions import db
from ..models import RunKind, SourceType
from ._common import fail, workspace_id_of

export_cli = AppGroup("export", help="Export cases, feedback or the eval set (CSV / JSONL).")


def _export(kind: str, fmt: str, out: str, bom: bool, params: dict[str, object]) -> None:
    """Stream one export into ``out`` (written to ``out.part``, then renamed) with a
    progress bar on stderr; the same rows and bytes as the download (SPEC 8)."""
    import os
    import sys

    from ..services import exports

    if params.get("workspace"):
        params["workspace"] = str(workspace_id_of(str(params["workspace"])))
    try:
        stream = exports.open_export(db.session, Actor.system_actor(), kind,
                                     {k: v for k, v in params.items() if v not in (None, "")}, fmt)
    except ServiceError as exc:
        fail(exc)
    partial = f"{out}.part"
    with click.progressbar(length=stream.total, label=f"{kind} -> {out}", file=sys.stderr,
                           show_pos=True) as bar:
        def counted():
            done = 0
            for row in stream.rows:
                yield row
                done += 1
                if done % 1000 == 0:
                    bar.update(1000)
            bar.update(done % 1000)

        with open(partial, "w", encoding="utf-8", newline="") as fh:
            for chunk in export_format.chunks(fmt, stream.columns, counted(), bom=bom):
                fh.write(chunk)
    os.replace(partial, out)
    click.echo(f"{stream.total} {kind} row(s) written to {out}", err=True)


def _export_options(func):  # noqa: ANN001, ANN202 - click decorator stack
    func = click.option("--out", "out", required=True, type=click.Path(dir_okay=False),
                        help="File to write.")(func)
    func = click.option("--bom", is_flag=True, help="Start a CSV with a UTF-8 BOM (for Excel).")(func)
    func = click.option("--format", "fmt", type=click.Choice(export_format.FORMATS), default="csv",
                        show_default=True)(func)
    func = click.option("--workspace", default=None, help="Workspace slug (default: all).")(func)
    return func


@export_cli.command("cases")
@_export_options
@click.option("--q", default=None, help="Text in title, root cause, solution, ids.")
@click.option("--fault-category", default=None)
@click.option("--service", default=None)
@click.option("--error-code", default=None)
@click.option("--source-type", type=click.Choice([s.value for s in SourceType]), default=None)
def export_cases(workspace: str | None, fmt: str, bom: bool, out: str, q: str | None,
                 fault_category: str | None, service: str | None, error_code: str | None,
                 source_type: str | None) -> None:
    """Export the case library, filtered like the case list."""
    _export("cases", fmt, out, bom, {
        "workspace": workspace, "q": q, "fault_category": fault_category, "service": service,
        "error_code": error_code, "source_type": source_type,
    })


@export_cli.command("feedback")
@_export_options
@click.option("--date-from", default=None, help="First UTC day (YYYY-MM-DD) a rating was made.")
@click.option("--date-to", default=None, help="Last UTC day (inclusive).")
@click.option("--rating", type=click.Choice(RATINGS), default=None)
@click.option("--target-type", type=click.Choice(TARGET_TYPES.codes()), default=None)
@click.option("--reason", default=None)
@click.option("--kind", type=click.Choice([k.value for k in RunKind]), default=None)
def export_feedback(workspace: str | None, fmt: str, bom: bool, out: str, date_from: str | None,
                    date_to: str | None, rating: str | None, target_type: str | None,
                    reason: str | None, kind: str | None) -> None:
    """Export every rating, one row each."""
    _export("feedback", fmt, out, bom, {
        "workspace": workspace, "date_from": date_from, "date_to": date_to, "rating": rating,
        "target_type": target_type, "reason": reason, "kind": kind,
    })


@export_cli.command("evalset")
@_export_options
def export_evalset(workspace: str | None, fmt: str, bom: bool, out: str) -> None:
    """Export the eval set (JSONL): every run with a reviewer's correction."""
    from click.core import ParameterSource

    if click.get_current_context().get_parameter_source("fmt") == ParameterSource.DEFAULT:
        fmt = "jsonl"
    _export("evalset", fmt, out, bom, {"workspace": workspace})
