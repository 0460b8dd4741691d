"""The dashboard (lead and admin): charts as server-rendered SVG, each with its numbers;
reviewer agreement and the alignment of the automatic evaluation with people (issue 16),
each with a CSV / JSONL download."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from flask import Blueprint, Response, abort, render_template, request
from flask_login import login_required

from ..domain import charts, export_format
from ..errors import ValidationFailed
from ..extensions import db
from ..services import agreement, alignment, dashboard
from .auth import current_actor
from .responses import attachment

bp = Blueprint("dashboard", __name__, url_prefix="/dashboard")


@bp.get("/")
@login_required
def index() -> str | tuple[str, int]:
    """Usefulness per day, evidence scores, verifier verdicts, failing tools, triage backlog.
    A refused filter (a reversed date range, a bad date, a workspace the user does not
    lead) re-shows the form with the error next to its field, status 400."""
    actor = current_actor()
    try:
        filters = dashboard.read_filters(db.session, actor, request.args)
    except ValidationFailed as error:
        return render_template("dashboard/index.html", data=None, error=error, typed=request.args,
                               workspaces=dashboard.lead_workspaces(db.session, actor)), 400
    data = dashboard.build(db.session, actor, filters)
    return render_template("dashboard/index.html", data=data, charts=charts,
                           workspaces=data.workspaces)


@bp.get("/agreement")
@login_required
def agreement_page() -> str:
    """Reviewer agreement: α over all, κ per pair, agreement with the majority."""
    report = agreement.build(db.session, current_actor(),
                             agreement.AgreementFilters.from_params(request.args))
    return render_template("dashboard/agreement.html", report=report, charts=charts)


@bp.get("/agreement.<fmt>")
@login_required
def agreement_export(fmt: str) -> Response:
    """The agreement figures as CSV or JSONL (``agreement.EXPORT_COLUMNS``)."""
    if fmt not in export_format.FORMATS:
        abort(404)
    report = agreement.build(db.session, current_actor(),
                             agreement.AgreementFilters.from_params(request.args))
    return _download("agreement", fmt, agreement.EXPORT_COLUMNS, agreement.export_rows(report))


@bp.get("/alignment")
@login_required
def alignment_page() -> str:
    """Each automatic signal against the human verdict: matrix, κ, AUC, disagreeing runs."""
    report = alignment.build(db.session, current_actor(),
                             alignment.AlignmentFilters.from_params(request.args))
    return render_template("dashboard/alignment.html", report=report, charts=charts)


@bp.get("/alignment.<fmt>")
@login_required
def alignment_export(fmt: str) -> Response:
    """``table=matrix`` (default): every signal's confusion matrix with κ and AUC;
    ``table=disagreements``: every disagreeing run of every signal. CSV or JSONL."""
    if fmt not in export_format.FORMATS:
        abort(404)
    name, columns, rows = alignment.open_export(db.session, current_actor(), request.args)
    return _download(name, fmt, columns, rows)


def _download(name: str, fmt: str, columns: Sequence[str],
              rows: Iterable[Mapping[str, Any]]) -> Response:
    """A small, already computed table as an attachment (CSV cells formula-neutralised)."""
    chunks = export_format.chunks(fmt, columns, rows,
                                  bom=request.args.get("bom") in ("1", "true", "on"))
    return attachment(chunks, name, fmt)
