"""JSON side for machines and scripts: ``/api``, CSRF-exempt, token or login auth (SPEC 9)."""

from __future__ import annotations

from flask import Blueprint, Flask

bp = Blueprint("api", __name__, url_prefix="/api")


def init_app(app: Flask) -> None:
    """Register the ``/api`` blueprint, exempt from CSRF (it authenticates by token)."""
    from ..extensions import csrf, limiter
    from . import feedback, health, ingest, otel, trace  # noqa: F401 - registers routes on bp

    csrf.exempt(bp)
    limiter.exempt(bp)
    app.register_blueprint(bp)
    # OTLP/HTTP at its standard path and under /api: token-authenticated like ingest.
    for blueprint in (otel.otlp_bp, otel.otlp_api_bp):
        csrf.exempt(blueprint)
        limiter.exempt(blueprint)
        app.register_blueprint(blueprint)
