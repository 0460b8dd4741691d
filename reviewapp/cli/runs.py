"""``flask runs``: import, set-outcome, rescore, redact.
Each command builds ``Actor.system_actor()`` and calls services only."""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click
from flask.cli import AppGroup

from ..actors import Actor
from ..domain.import_formats import FORMAT_CHOICES
from ..domain.tool_failure import FAILURE_RULES
from ..errors import ServiceError
from ..extensions import db
from ._common import fail, workspace_id_of

if TYPE_CHECKING:
    from ..services.importers import ImportSummary

runs_cli = AppGroup("runs", help="Import and re-score runs.")


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
    from ..db_setup import write_intent
    from ..services import importers

    workspace_id = workspace_id_of(slug)
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
            fail(exc)
    if report:
        _write_report(report, summary)
    _echo_summary(summary, report)
    if not summary.ok:
        raise SystemExit(1)


def _write_report(report: str, summary: ImportSummary) -> None:
    """Every refused record and every warning of ``summary`` as JSON lines into ``report``."""
    with open(report, "w", encoding="utf-8") as out:
        for line in summary.problems:
            out.write(json.dumps({"level": "error", "kind": "record_refused", "message": line},
                                 ensure_ascii=False) + "\n")
        for warning in summary.warnings:
            out.write(json.dumps({"level": "warning", "kind": warning.kind, "message": str(warning)},
                                 ensure_ascii=False) + "\n")


def _echo_summary(summary: ImportSummary, report: str | None) -> None:
    """The import's errors and (the first 20) warnings on stderr, then its one-line tally."""
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
        + (f"; verdicts: {summary.verdicts_set} set, {summary.verdicts_unchanged} already set"
           if summary.verdicts_set or summary.verdicts_unchanged else "")
    )


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
    from ..db_setup import write_intent
    from ..services import runs

    body: dict = {"external_outcome": None if outcome == "-" else outcome}
    if detail_json is not None:
        try:
            body["external_outcome_detail"] = json.loads(detail_json)
        except ValueError as exc:
            raise click.BadParameter(f"not JSON ({exc})", param_hint="--detail") from None
    elif reward is not None or checks or missed or source:
        body["external_outcome_detail"] = _outcome_detail(reward, checks, missed, source)
    workspace_id = workspace_id_of(slug)
    try:
        with write_intent():
            result = runs.set_outcome(db.session, Actor.system_actor(), workspace_id, run_id, body)
    except ServiceError as exc:
        if exc.code == "AUTH_FORBIDDEN":
            raise click.ClickException(f"no run '{run_id}' in workspace '{slug}'") from None
        fail(exc)
    click.echo(f"{run_id}: outcome {result.run.external_outcome or '(none)'} ({result.result})")


def _outcome_detail(reward: float | None, checks: tuple[str, ...], missed: tuple[str, ...],
                    source: str | None) -> dict:
    """The outcome detail of the options: ``source``, ``reward``, ``checks`` as
    ``[{name, passed}]`` (NAME=pass|fail, a ``click.BadParameter`` otherwise),
    ``missed_actions``; each key only when its option was given."""
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
    return detail


@runs_cli.command("rescore")
@click.option("--workspace", "slug", default=None, help="Only runs of this workspace (slug).")
@click.option("--since", type=click.DateTime(formats=["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S"]),
              default=None, help="Only runs created on or after this date/time (UTC).")
@click.option("--batch-size", default=500, show_default=True, type=click.IntRange(1, 10_000),
              help="Runs per batch (one transaction each).")
def runs_rescore(slug: str | None, since: datetime | None, batch_size: int) -> None:
    """Recompute the app's evaluations of runs: evidence score, AIOps checks, citation
    gatekeeper (SPEC 5). Idempotent: a second run reports 0 changed."""
    from ..db_setup import write_intent
    from ..services import evaluations

    workspace_id = workspace_id_of(slug) if slug else None
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
            fail(exc)
    click.echo(f"runs rescored: {summary.scanned} scanned, {summary.changed} changed, "
               f"{summary.failed} with a scoring error (see the log) "
               f"in {time.perf_counter() - started:.1f} s")


@runs_cli.command("redact")
@click.option("--workspace", "slug", default=None, help="Only this workspace (slug).")
@click.option("--dry-run", is_flag=True, help="Count what would change; write nothing.")
@click.option("--batch-size", default=500, show_default=True, type=click.IntRange(1, 10_000),
              help="Rows per batch (one transaction each).")
def runs_redact(slug: str | None, dry_run: bool, batch_size: int) -> None:
    """Re-apply today's redaction to every stored text (runs, messages, steps, reports,
    tool calls, traces, cases, ratings ...) and the search index (SPEC 4): after a
    redaction fix, for what was stored before it. Idempotent: a second pass changes nothing."""
    from ..db_setup import write_intent
    from ..services import stored_redaction

    workspace_id = workspace_id_of(slug) if slug else None
    started = time.perf_counter()
    try:
        with write_intent():
            summary = stored_redaction.redact_stored(
                db.session, Actor.system_actor(), workspace_id=workspace_id, dry_run=dry_run,
                batch_size=batch_size)
    except ServiceError as exc:
        fail(exc)
    verb = "would change" if dry_run else "changed"
    for column, count in sorted(summary.changed.items()):
        click.echo(f"  {column}: {count} rows {verb}")
    merge_verb = "would merge" if dry_run else "merged"
    for column, count in sorted(summary.merged.items()):
        click.echo(f"  {column}: {count} rows {merge_verb} into the row that holds their redacted value "
                   f"({summary.runs_moved} runs moved)")
    for column, count in sorted(summary.collisions.items()):
        click.echo(f"  {column}: {count} rows keep their value: the redacted value is another row's "
                   "and theirs has state of its own (not merged)")
    for column, count in sorted(summary.identities.items()):
        if count:
            click.echo(f"  {column}: {count} ids hold a secret (kept: rows are named by them)")
    merged, kept = sum(summary.merged.values()), sum(summary.collisions.values())
    click.echo(f"stored text redacted{' (dry run)' if dry_run else ''}: {summary.rows_scanned} rows scanned, "
               f"{sum(summary.changed.values())} column values {verb}, "
               + (f"{merged} rows {merge_verb}, " if merged else "")
               + (f"{kept} rows kept on a collision, " if kept else "")
               + f"{summary.reindexed_runs} runs and {summary.reindexed_calls} tool calls re-indexed "
               f"in {time.perf_counter() - started:.1f} s")
