"""Runs list and run pages."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, request
from flask_login import login_required

from ..extensions import db
from ..services import runs as runs_service
from .auth import current_actor
from .htmx import page_or_fragment

bp = Blueprint("runs", __name__)


@bp.get("/")
@login_required
def index() -> Response:
    """The runs list (landing page)."""
    page = runs_service.list_runs(
        db.session, current_actor(), limit=current_app.config["RUNS_PAGE_SIZE"],
        cursor=request.args.get("cursor") or None,
    )
    return page_or_fragment("runs/list.html", "runs/_table.html", page=page)
