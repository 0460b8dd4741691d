"""The dashboard (lead and admin): charts as server-rendered SVG, each with its numbers."""

from __future__ import annotations

from flask import Blueprint, render_template, request
from flask_login import login_required

from ..domain import charts
from ..extensions import db
from ..services import dashboard
from .auth import current_actor

bp = Blueprint("dashboard", __name__, url_prefix="/dashboard")


@bp.get("/")
@login_required
def index() -> str:
    """Usefulness per day, evidence scores, verifier verdicts, failing tools, triage backlog."""
    data = dashboard.build(db.session, current_actor(),
                           dashboard.DashboardFilters.from_params(request.args))
    return render_template("dashboard/index.html", data=data, charts=charts)
