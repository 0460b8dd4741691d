"""``flask`` commands. Each builds ``Actor.system_actor()`` and calls services only."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import NoReturn

import click
from flask import Flask
from flask.cli import AppGroup
from sqlalchemy import func, select

from .actors import Actor, Role
from .domain import export_format
from .domain.feedback import RATINGS
from .domain.import_formats import FORMAT_CHOICES
from .domain.target_types import TARGET_TYPES
from .errors import ServiceError
from .extensions import db
from .models import RunKind, SourceType

users_cli = AppGroup("users", help="Manage user accounts.")
workspaces_cli = AppGroup("workspaces", help="Manage workspaces.")
tokens_cli = AppGroup("tokens", help="Manage ingest tokens.")
demo_cli = AppGroup("demo", help="Demo data.")
runs_cli = AppGroup("runs", help="Import and re-score runs.")
export_cli = AppGroup("export", help="Export cases, feedback or the eval set (CSV / JSONL).")
dashboard_cli = AppGroup("dashboard", help="The dashboard's roll-ups.")


def init_app(app: Flask) -> None:
    """Register the command groups."""
    for group in (users_cli, workspaces_cli, tokens_cli, demo_cli, runs_cli, export_cli,
                  dashboard_cli):
        app.cli.add_command(group)


def _workspace_id(slug: str) -> int:
    from .services.admin import get_workspace_by_slug

    ws = get_workspace_by_slug(db.session, slug)
    if ws is None:
        raise click.ClickException(f"no workspace with slug '{slug}'")
    return ws.id


def _fail(error: ServiceError) -> NoReturn:
    raise click.ClickException(error.message)


@workspaces_cli.command("create")
@click.argument("slug")
@click.option("--name", default=None, help="Display name (defaults to the slug).")
def create_workspace(slug: str, name: str | None) -> None:
    """Create a workspace SLUG."""
    from .services import admin

    try:
        ws = admin.create_workspace(db.session, Actor.system_actor(), slug, name or slug)
    except ServiceError as exc:
        _fail(exc)
    click.echo(f"workspace '{ws.slug}' created (id {ws.id})")


@workspaces_cli.command("rename")
@click.argument("slug")
@click.argument("name")
def rename_workspace(slug: str, name: str) -> None:
    """Give the workspace SLUG the display name NAME (audited)."""
    from .services import admin

    try:
        admin.rename_workspace(db.session, Actor.system_actor(), _workspace_id(slug), name)
    except ServiceError as exc:
        _fail(exc)
    click.echo(f"workspace '{slug}' is now called '{name}'")


@workspaces_cli.command("settings")
@click.argument("slug")
@click.option("--set", "changes", multiple=True, metavar="CODE=VALUE",
              help="Change one setting (repeatable); VALUE as on the settings page, '\\n' "
                   "between lines. Without --set: print the settings.")
def workspace_settings(slug: str, changes: tuple[str, ...]) -> None:
    """Show or change the settings of workspace SLUG, through the settings page's
    service and rules (versioned, audited)."""
    from .services import admin

    system, workspace_id = Actor.system_actor(), _workspace_id(slug)
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
            _fail(exc)
    click.echo(f"# settings of '{slug}', version {view.version}")
    for code, text in view.values.items():
        click.echo(f"[{code}]")
        click.echo(text)


@users_cli.command("create")
@click.argument("username")
@click.option("--workspace", "slug", required=True, help="Workspace slug.")
@click.option("--role", type=click.Choice([r.value for r in Role]), default="reviewer")
@click.option("--password", default=None, help="Omit to be prompted; '-' generates one.")
def create_user(username: str, slug: str, role: str, password: str | None) -> None:
    """Create USERNAME with a role in a workspace; prints a generated password once."""
    from .services import admin

    generated = False
    if password is None:
        password = click.prompt("Password (empty to generate)", default="", hide_input=True,
                                show_default=False)
    if not password or password == "-":
        password, generated = admin.generate_password(), True
    try:
        user = admin.create_user(db.session, Actor.system_actor(), username, password,
                                 _workspace_id(slug), role)
    except ServiceError as exc:
        _fail(exc)
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
    from .services import admin

    user = admin.get_user_by_username(db.session, username)
    if user is None:
        raise click.ClickException(f"no user '{username}'")
    try:
        admin.set_membership(db.session, Actor.system_actor(), user.id, _workspace_id(slug),
                             None if role == "none" else role)
    except ServiceError as exc:
        _fail(exc)
    if role == "none":
        click.echo(f"user '{username}' removed from '{slug}'")
    else:
        click.echo(f"user '{username}' is {role} in '{slug}'")


@users_cli.command("list")
@click.option("--workspace", "slug", default=None, help="Only this workspace.")
def list_users(slug: str | None) -> None:
    """List memberships, tab-separated under a header row: workspace, username, role,
    state (active / inactive), last login (UTC)."""
    from .services import admin

    rows = admin.list_members(db.session, Actor.system_actor(),
                              _workspace_id(slug) if slug else None)
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
@click.option("--password", default=None, help="Omit to be prompted.")
def set_password(username: str, password: str | None) -> None:
    """Change USERNAME's password (logs them out everywhere)."""
    from .services import admin

    user = admin.get_user_by_username(db.session, username)
    if user is None:
        raise click.ClickException(f"no user '{username}'")
    user_id = user.id
    if password is None:
        password = click.prompt("New password", hide_input=True, confirmation_prompt=True)
    try:
        admin.set_password(db.session, Actor.system_actor(), user_id, password)
    except ServiceError as exc:
        _fail(exc)
    click.echo(f"password of '{username}' changed")


@tokens_cli.command("create")
@click.option("--workspace", "slug", required=True, help="Workspace slug.")
@click.option("--name", required=True, help="A name people recognise, e.g. 'agent-prod'.")
def create_token(slug: str, name: str) -> None:
    """Create an ingest token; the secret is printed once and never stored."""
    from .services import admin

    try:
        new = admin.create_token(db.session, Actor.system_actor(), _workspace_id(slug), name)
    except ServiceError as exc:
        _fail(exc)
    click.echo(f"token '{name}' for '{slug}' (id {new.token.id}); send it as "
               "'Authorization: Bearer <secret>'. It is shown only now:")
    click.echo(new.secret)


@tokens_cli.command("list")
@click.option("--workspace", "slug", required=True, help="Workspace slug.")
def list_tokens(slug: str) -> None:
    """List the workspace's ingest tokens: id, name, state, last use (UTC). No secrets."""
    from .services import admin

    tokens = admin.list_tokens(db.session, Actor.system_actor(), _workspace_id(slug))
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
    from .services import admin

    try:
        admin.revoke_token(db.session, Actor.system_actor(), token_id)
    except ServiceError as exc:
        _fail(exc)
    click.echo(f"token {token_id} revoked")


@demo_cli.command("load")
@click.option("--workspace", "slug", default="demo", show_default=True)
def demo_load(slug: str) -> None:
    """Load the demo runs into a workspace (created if missing). Idempotent."""
    from .services import admin, demo

    system = Actor.system_actor()
    ws = admin.get_workspace_by_slug(db.session, slug)
    if ws is None:
        ws = admin.create_workspace(db.session, system, slug, "Demo on-call")
    summary = demo.load(db.session, system, ws.id)
    click.echo(f"demo runs: {summary.created} created, {summary.updated} updated, "
               f"{summary.unchanged} unchanged")


@demo_cli.command("bootstrap")
def demo_bootstrap() -> None:
    """First start: when the database holds no user, create the demo workspace, an admin,
    a lead and a reviewer with generated passwords (printed once) and load the demo runs."""
    from .models import User
    from .services import admin, demo

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
    click.echo("Demo workspace ready. Log in at http://127.0.0.1:5000 with:")
    for line in lines:
        click.echo(line)
    click.echo("These passwords are shown only once. Change one with: "
               ".venv/bin/flask users set-password USERNAME")


def _export(kind: str, fmt: str, out: str, bom: bool, params: dict[str, object]) -> None:
    """Stream one export into ``out`` (written to ``out.part``, then renamed) with a
    progress bar on stderr; the same rows and bytes as the download (SPEC 8)."""
    import os
    import sys

    from .services import exports

    if params.get("workspace"):
        params["workspace"] = str(_workspace_id(str(params["workspace"])))
    try:
        stream = exports.open_export(db.session, Actor.system_actor(), kind,
                                     {k: v for k, v in params.items() if v not in (None, "")}, fmt)
    except ServiceError as exc:
        _fail(exc)
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


@runs_cli.command("import")
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, readable=True))
@click.option("--workspace", "slug", required=True, help="Workspace slug.")
@click.option("--format", "fmt", default="auto", show_default=True,
              type=click.Choice(FORMAT_CHOICES),
              help="Source format; auto looks at the first record.")
@click.option("--terminal-tool", "terminal_tools", multiple=True,
              help="A pseudo-tool whose call is the run's final answer, not a tool call (any case; "
                   "repeatable; default: finish, final_answer, submit; '-' for none).")
@click.option("--report", "report", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write every warning and error to this file as JSON lines.")
def import_runs(paths: tuple[str, ...], slug: str, fmt: str, terminal_tools: tuple[str, ...],
                report: str | None) -> None:
    """Import agent runs from PATH... (JSON array, JSON lines or one object). Idempotent:
    importing the same files again changes nothing. Exit status 1 when a record could
    not be imported or a file's tool-like records gave no tool call."""
    import json
    import sys
    from pathlib import Path

    from .db_setup import write_intent
    from .domain.tool_failure import FAILURE_RULES
    from .services import importers

    workspace_id = _workspace_id(slug)
    options = importers.Options.make(
        None if not terminal_tools else [t for t in terminal_tools if t != "-"])
    try:  # before the progress bar: an unsupported file is one line and nothing written
        importers.check_files(paths, fmt)
    except importers.RecordError as exc:
        raise click.ClickException(str(exc)) from None
    total = sum(Path(p).stat().st_size for p in paths)
    problems: list[str] = []
    with click.progressbar(length=total, label="Importing", file=sys.stderr,
                           show_pos=False) as bar, write_intent():
        seen = {"done": 0}

        def progress(done: int) -> None:
            bar.update(max(0, done - seen["done"]))
            seen["done"] = max(done, seen["done"])

        try:
            summary = importers.import_files(db.session, Actor.system_actor(), workspace_id, paths,
                                             fmt=fmt, progress=progress, problem=problems.append,
                                             options=options)
        except importers.RecordError as exc:
            raise click.ClickException(str(exc)) from None
        except ServiceError as exc:
            _fail(exc)
    if report:
        with open(report, "w", encoding="utf-8") as out:
            for line in summary.problems:
                out.write(json.dumps({"level": "error", "kind": "record_refused", "message": line},
                                     ensure_ascii=False) + "\n")
            for warning in summary.warnings:
                out.write(json.dumps({"level": "warning", "kind": warning.kind, "message": str(warning)},
                                     ensure_ascii=False) + "\n")
    for line in summary.problems:
        click.echo(f"error: {line}", err=True)
    for line in summary.warnings[:20]:
        click.echo(f"warning: {line}", err=True)
    if len(summary.warnings) > 20:
        click.echo(f"warning: ... and {len(summary.warnings) - 20} more"
                   + ("" if report else " (--report FILE writes them all)"), err=True)
    for name in summary.no_tool_calls:
        click.echo(f"error: {name}: its records have tool-call fields but no tool call could be made "
                   "of them (wrong format or a lossy conversion?)", err=True)
    by_rule = ", ".join(f"{rule.code} {summary.failures_by_rule[rule.code]}" for rule in FAILURE_RULES
                        if summary.failures_by_rule[rule.code])
    by_kind = ", ".join(f"{kind} {n}" for kind, n in sorted(summary.warnings_by_kind.items()))
    click.echo(
        f"runs: {summary.created} created, {summary.updated} updated, {summary.unchanged} unchanged, "
        f"{summary.failed} failed; tool calls: {summary.tool_calls} "
        f"({summary.failed_tool_calls} failed){'; failures by rule: ' + by_rule if by_rule else ''}; "
        f"warnings: {len(summary.warnings)}{' (' + by_kind + ')' if by_kind else ''}; "
        f"outcomes: {summary.outcomes}"
    )
    if not summary.ok:
        raise SystemExit(1)


@runs_cli.command("set-outcome")
@click.argument("run_id")
@click.option("--workspace", "slug", required=True, help="Workspace slug.")
@click.option("--outcome", required=True, help="The label (e.g. pass / fail, 1-32 characters); '-' clears it.")
@click.option("--reward", type=float, default=None, help="The benchmark's reward (detail.reward).")
@click.option("--check", "checks", multiple=True, metavar="NAME=pass|fail",
              help="A per-check result (repeatable; detail.checks).")
@click.option("--missed-action", "missed", multiple=True,
              help="An expected action the run did not take (repeatable; detail.missed_actions).")
@click.option("--source", default=None, help="Who judged (detail.source, e.g. sregym).")
@click.option("--detail", "detail_json", default=None,
              help="The whole detail as a JSON object (instead of --reward / --check / --missed-action).")
def runs_set_outcome(run_id: str, slug: str, outcome: str, reward: float | None, checks: tuple[str, ...],
                     missed: tuple[str, ...], source: str | None, detail_json: str | None) -> None:
    """Set the external outcome of RUN_ID (and its detail when given), touching nothing
    else of the run: the same service as PATCH /api/ingest/runs/RUN_ID/outcome."""
    import json

    from .db_setup import write_intent
    from .services import runs

    body: dict = {"external_outcome": None if outcome == "-" else outcome}
    if detail_json is not None:
        try:
            body["external_outcome_detail"] = json.loads(detail_json)
        except ValueError as exc:
            raise click.BadParameter(f"not JSON ({exc})", param_hint="--detail") from None
    elif reward is not None or checks or missed or source:
        detail: dict = {}
        if source:
            detail["source"] = source
        if reward is not None:
            detail["reward"] = reward
        if checks:
            detail["checks"] = []
            for check in checks:
                name, _, verdict = check.rpartition("=")
                if not name or verdict.lower() not in ("pass", "fail", "passed", "failed", "true", "false"):
                    raise click.BadParameter(f"{check!r}: expected NAME=pass or NAME=fail", param_hint="--check")
                detail["checks"].append({"name": name, "passed": verdict.lower() in ("pass", "passed", "true")})
        if missed:
            detail["missed_actions"] = list(missed)
        body["external_outcome_detail"] = detail
    workspace_id = _workspace_id(slug)
    try:
        with write_intent():
            result = runs.set_outcome(db.session, Actor.system_actor(), workspace_id, run_id, body)
    except ServiceError as exc:
        if exc.code == "AUTH_FORBIDDEN":
            raise click.ClickException(f"no run '{run_id}' in workspace '{slug}'") from None
        _fail(exc)
    click.echo(f"{run_id}: outcome {result.run.external_outcome or '(none)'} ({result.result})")


@runs_cli.command("rescore")
@click.option("--workspace", "slug", default=None, help="Only runs of this workspace (slug).")
@click.option("--since", type=click.DateTime(formats=["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S"]),
              default=None, help="Only runs created on or after this date/time (UTC).")
@click.option("--batch-size", default=500, show_default=True, type=click.IntRange(1, 10_000),
              help="Runs per batch (one transaction each).")
def runs_rescore(slug: str | None, since: datetime | None, batch_size: int) -> None:
    """Recompute the app's evaluations of runs: evidence score, AIOps checks, citation
    gatekeeper (SPEC 5). Idempotent: a second run reports 0 changed."""
    from .db_setup import write_intent
    from .services import evaluations

    workspace_id = _workspace_id(slug) if slug else None
    started = time.perf_counter()
    with click.progressbar(length=1, label="rescoring runs", show_pos=True) as bar:

        def progress(done: int, total: int) -> None:
            bar.length = max(total, 1)
            bar.update(done - bar.pos)

        try:
            # SQLite: each batch takes the write lock up front (see db_setup).
            with write_intent():
                summary = evaluations.rescore_runs(
                    db.session, Actor.system_actor(), workspace_id=workspace_id,
                    since=since.replace(tzinfo=UTC) if since else None,
                    batch_size=batch_size, progress=progress)
        except ServiceError as exc:
            _fail(exc)
    click.echo(f"runs rescored: {summary.scanned} scanned, {summary.changed} changed, "
               f"{summary.failed} with a scoring error (see the log) "
               f"in {time.perf_counter() - started:.1f} s")


@dashboard_cli.command("rebuild")
@click.option("--workspace", "slug", default=None, help="Only this workspace (slug).")
def dashboard_rebuild(slug: str | None) -> None:
    """Recompute the dashboard's roll-ups (runs and tool calls per workspace and UTC day)
    from the runs, tool calls and ratings: after a bulk load that bypassed the services,
    or to repair. PostgreSQL: writers wait for it (the roll-ups are locked meanwhile)."""
    from .db_setup import write_intent
    from .services import dashboard

    workspace_id = _workspace_id(slug) if slug else None
    started = time.perf_counter()
    try:
        with write_intent():
            summary = dashboard.rebuild(db.session, Actor.system_actor(), workspace_id)
    except ServiceError as exc:
        _fail(exc)
    click.echo(f"dashboard roll-ups rebuilt: {summary.run_rows} run rows, "
               f"{summary.tool_rows} tool rows in {time.perf_counter() - started:.1f} s")
