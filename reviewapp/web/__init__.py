"""HTML side: wiring only — blueprints, the login manager, error answers
(``web/errors.py``), request hooks (``web/hooks.py``), template filters and globals
(``web/filters.py``, the timeline's rows ``web/timeline_html.py``), the chunked-body limit (``web/body_limit.py``)."""

from __future__ import annotations

from flask import Flask

from ..extensions import login_manager
from . import (
    account,
    adjudication,
    admin,
    auth,
    body_limit,
    cases,
    dashboard,
    errors,
    exports,
    feedback,
    filters,
    hooks,
    queue,
    queue_items,
    queues,
    runs,
    timeline_html,
    triage,
)


def init_app(app: Flask) -> None:
    """Register the HTML blueprints, error handlers, request hooks and template helpers."""
    app.url_map.converters["agent_id"] = runs.AgentIdConverter
    for module in (auth, account, runs, feedback, queue, queues, queue_items, triage,
                   adjudication, cases, exports, dashboard, admin):
        app.register_blueprint(module.bp)

    login_manager.login_view = "auth.login"
    login_manager.login_message = "Please log in to continue."
    login_manager.login_message_category = "info"
    login_manager.session_protection = app.config.get("SESSION_PROTECTION", "strong")

    errors.register(app)
    hooks.register(app)
    filters.register(app)
    app.jinja_env.globals["timeline_rows"] = timeline_html.timeline_rows
    body_limit.init_app(app)
