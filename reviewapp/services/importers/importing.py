"""Importing files into a workspace through ``runs.upsert_run`` (SPEC 11), with the
summary: runs, calls, failures per failure rule, warnings per kind, files whose records
held tool-like fields but gave no tool call."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.orm import Session

from ...actors import Actor, Role
from ...errors import Forbidden, ServiceError
from .. import runs
from ..access import require_role
from ..secret_scan import redact_key
from ._common import DEFAULT_OPTIONS, Options, Warn
from .reading import RESULT_FORMAT, Parsed, check_files, read_records


@dataclass
class ImportSummary:
    """What an import did. ``problems`` are per-record errors ("file: record i: reason");
    ``outcomes`` counts the runs imported with an external outcome or given one (each
    once); a verdict's record (only ``run_id`` and the outcome) is not a run: it counts in
    ``verdicts_set`` (it changed the run's outcome) or ``verdicts_unchanged`` and adds no calls;
    ``warnings`` carry their ``kind``; ``failures_by_rule`` counts the failed calls each
    failure rule found in the files read (``domain/tool_failure.FAILURE_RULES``);
    ``no_tool_calls`` names the files whose records have tool-like fields but from which
    no tool call could be made (a conversion that lost them)."""

    created: int = 0
    updated: int = 0
    unchanged: int = 0
    failed: int = 0
    tool_calls: int = 0
    failed_tool_calls: int = 0
    warnings: list[Warn] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    failures_by_rule: Counter[str] = field(default_factory=Counter)
    no_tool_calls: list[str] = field(default_factory=list)
    outcomes: int = 0
    verdicts_set: int = 0
    verdicts_unchanged: int = 0

    @property
    def runs(self) -> int:
        """Runs imported (created + updated + unchanged)."""
        return self.created + self.updated + self.unchanged

    @property
    def warnings_by_kind(self) -> Counter[str]:
        """How many warnings of each kind."""
        return Counter(getattr(w, "kind", "other") for w in self.warnings)

    @property
    def ok(self) -> bool:
        """False when a record failed or a file lost its tool calls (exit status 1)."""
        return not self.failed and not self.no_tool_calls


def import_files(
    session: Session, actor: Actor, workspace_id: int, paths: Iterable[Path | str], *,
    fmt: str = "auto", progress: Callable[[int], None] = lambda done: None,
    problem: Callable[[str], None] = lambda text: None, options: Options = DEFAULT_OPTIONS,
) -> ImportSummary:
    """Import runs from files into ``workspace_id`` through ``runs.upsert_run`` (SPEC 11).

    One transaction per run: a record that cannot be imported is reported (``problem``
    callback and ``ImportSummary.problems``, "file: record i (run id): reason") and the
    rest go on. Re-importing the same files is idempotent (same counts, all
    ``unchanged``). ``progress`` receives the bytes read so far across all files.
    ``options``: the terminal pseudo-tools. With ``fmt="auto"`` every file's format is
    detected before anything is written: a file of no supported format refuses the whole
    import. Verdict files (``sregym-result``) are read after every other file, so the
    runs they judge exist; a document with only ``run_id`` and the outcome sets the
    outcome of an existing run through ``runs.set_outcome`` (a missing run is a
    problem, never an empty run).
    Raises ``Forbidden`` (actor may not import into the workspace), ``RecordError``
    (a file of no supported format, naming it and the formats supported), ``OSError``.
    """
    require_role(session, actor, workspace_id, Role.ADMIN)
    formats = check_files(paths, fmt)
    formats.sort(key=lambda item: item[1] == RESULT_FORMAT)  # stable: verdicts last
    summary = ImportSummary()
    with_outcome: set[str] = set()
    offset = 0
    for path, path_fmt in formats:
        size = path.stat().st_size
        base = offset
        tool_like = calls_made = 0
        for parsed in read_records(path, path_fmt, lambda done, base=base: progress(base + done), options):
            # A run id holding a secret is refused (runs.upsert_run), never repeated in clear.
            where = f"{path.name}: record {parsed.index}" + (
                f" ({redact_key(parsed.run_id)})" if parsed.run_id else "")
            summary.warnings.extend(w.prefixed(where) for w in parsed.warnings)
            tool_like += parsed.tool_like
            if parsed.doc is None:
                summary.failed += 1
                summary.problems.append(f"{where}: {parsed.error}")
                problem(summary.problems[-1])
                continue
            calls_made += len(parsed.doc.get("tool_calls") or [])
            try:
                outcome = _store(session, actor, workspace_id, parsed)
            except ServiceError as exc:
                session.rollback()
                summary.failed += 1
                summary.problems.append(f"{where}: {exc.message}")
                problem(summary.problems[-1])
                continue
            if runs.outcome_only(parsed.doc):  # a verdict: no run of its own, no calls
                summary.verdicts_unchanged += outcome.result == "unchanged"
                summary.verdicts_set += outcome.result != "unchanged"
            else:
                setattr(summary, outcome.result, getattr(summary, outcome.result) + 1)
                summary.tool_calls += outcome.tool_calls
                summary.failed_tool_calls += outcome.failed_tool_calls
            summary.failures_by_rule.update(parsed.failures)
            if outcome.run.external_outcome is not None:
                with_outcome.add(outcome.run.run_id)
        if tool_like and not calls_made:
            summary.no_tool_calls.append(path.name)
        offset = base + size
        progress(offset)
    summary.outcomes = len(with_outcome)
    return summary


def _store(session: Session, actor: Actor, workspace_id: int, parsed: Parsed) -> runs.UpsertResult:
    doc = parsed.doc or {}
    if not runs.outcome_only(doc):
        return runs.upsert_run(session, actor, workspace_id, parsed.run_id or "", doc)
    try:
        return runs.set_outcome(session, actor, workspace_id, parsed.run_id or "",
                                {k: v for k, v in doc.items() if k != "run_id"})
    except Forbidden:
        beside = f" (import {parsed.source})" if parsed.source else ""
        raise _NoRun(f"no run {parsed.run_id} in this workspace to give the outcome to{beside}") from None


class _NoRun(ServiceError):
    """An outcome for a run that was not imported."""

    code = "NOT_FOUND"
    status = 404
