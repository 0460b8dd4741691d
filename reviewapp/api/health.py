"""Liveness: ``GET /api/health`` answers ``{"status": "ok"}`` when the database answers."""

from __future__ import annotations

from flask import Response, jsonify

from ..extensions import db
from ..services.health import check_database
from . import bp


@bp.get("/health")
def health() -> Response:
    """Database round-trip check; 503 ``SYSTEM_UNAVAILABLE`` when it fails."""
    check_database(db.session)
    return jsonify({"status": "ok"})
