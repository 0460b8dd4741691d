"""JSON side for machines and scripts: ``/api``, CSRF-exempt, token or login auth (SPEC 9)."""

from __future__ import annotations

from flask import Blueprint, Flask

bp = Blueprint("api", __name__, url_prefix="/api")


def init_app(app: Flask) -> None:
    """Register the ``/api`` blueprint, exempt from CSRF (it authenticates by token)."""
    from ..extensions import csrf, limiter
    from . import feedback, health, ingest, trace  # noqa: F401 - registers routes on bp

    csrf.exempt(bp)
    limiter.exempt(bp)
    app.register_blueprint(bp)
