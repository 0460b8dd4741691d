"""Exports (admin): the export page and the streamed CSV / JSONL downloads (SPEC 8)."""

from __future__ import annotations

from flask import Blueprint, Response, make_response, render_template, request
from flask_login import login_required

from ..domain import export_format
from ..domain.case_sources import CASE_SOURCES
from ..errors import ValidationFailed
from ..extensions import db
from ..services import exports
from .auth import current_actor
from .responses import attachment

bp = Blueprint("exports", __name__, url_prefix="/exports")


@bp.get("/")
@login_required
def index() -> str:
    """The export forms: cases, feedback, eval set."""
    return _page()


def _page(error: str | None = None, kind: str | None = None) -> str:
    """The export forms filled from the query string; after a refused export of ``kind``,
    only that kind's form, with ``error`` ("field: reason") in its card."""
    return render_template("exports/index.html",
                           options=exports.export_options(db.session, current_actor()),
                           params=request.args, source_types=CASE_SOURCES.choices(), error=error,
                           failed=kind)


@bp.get("/<kind>.<fmt>")
@login_required
def download(kind: str, fmt: str) -> Response:
    """Stream one export; access and filters are checked before the first byte. A refused
    filter answers 400 with the export page: the field named, the choices kept."""
    try:
        stream = exports.open_export(db.session, current_actor(), kind, request.args, fmt)
    except ValidationFailed as refused:
        db.session.rollback()
        return make_response(_page(refused.message, kind if kind in exports.KINDS else None), 400)
    chunks = export_format.chunks(fmt, stream.columns, stream.rows,
                                  bom=request.args.get("bom") in ("1", "true", "on"))
    return attachment(chunks, kind, fmt, {"X-Export-Rows": str(stream.total)})
