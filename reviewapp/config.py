"""Configuration defaults.

Load order (later wins): ``Config`` below -> ``instance/config.py`` -> ``REVIEWAPP_*``
environment variables (``app.config.from_prefixed_env``, values parsed as JSON when they
can be) -> the test mapping passed to ``create_app``.
"""

from __future__ import annotations

from typing import ClassVar

from .domain.aiops import DEFAULT_EVIDENCE_TOOLS
from .domain.feedback import DEFAULT_FEEDBACK_REASONS


class Config:
    """Defaults for every setting the app reads. Units are in the names (``_MS``, ``_BYTES``)."""

    SECRET_KEY: str | None = None  # generated into the instance folder on first start
    # None means "SQLite file reviewapp.sqlite in the instance folder".
    DATABASE_URL: str | None = None
    SQLALCHEMY_ENGINE_OPTIONS: ClassVar[dict] = {}
    SQLALCHEMY_TRACK_MODIFICATIONS = False
    # SQLite: how long a writer waits for the write lock before answering 503
    # (milliseconds); None means db_setup.BUSY_TIMEOUT_MS (15 s).
    SQLITE_BUSY_TIMEOUT_MS: int | None = None

    SESSION_COOKIE_HTTPONLY = True
    SESSION_COOKIE_SAMESITE = "Lax"
    SESSION_COOKIE_SECURE = False  # set REVIEWAPP_SESSION_COOKIE_SECURE=true behind HTTPS
    REMEMBER_COOKIE_HTTPONLY = True
    REMEMBER_COOKIE_SAMESITE = "Lax"
    SESSION_PROTECTION = "strong"
    PERMANENT_SESSION_LIFETIME = 60 * 60 * 12  # seconds

    WTF_CSRF_TIME_LIMIT = None  # token lives as long as the login session
    WTF_CSRF_SSL_STRICT = False

    # Flask-Limiter: in-memory by default (counts per process, lost on restart); set
    # REVIEWAPP_RATELIMIT_STORAGE_URI=redis://host:6379 (pip install "reviewapp[redis]")
    # to share the counts between processes and hosts.
    RATELIMIT_STORAGE_URI = "memory://"
    # Failed logins only: per (submitted username, client address), and per address.
    LOGIN_RATE_LIMIT = "10 per minute"
    LOGIN_RATE_LIMIT_PER_IP = "100 per minute"
    RATELIMIT_ENABLED = True
    RATELIMIT_HEADERS_ENABLED = True

    MAX_CONTENT_LENGTH = 8 * 1024 * 1024  # bytes, whole request body
    INGEST_BATCH_MAX_EVENTS = 1000

    # Pages stay fast whatever an agent sent (SPEC 10, web/markdown.py): characters of
    # Markdown one page renders (adversarial Markdown costs ~26 us a character), the most
    # characters of one text a page shows, the most characters of a tool call's arguments.
    MARKDOWN_PAGE_BUDGET_CHARS = 16_000
    PAGE_TEXT_CAP_CHARS = 200_000
    TOOL_CALL_PAGE_CAP_CHARS = 65_536

    RUNS_PAGE_SIZE = 50
    TRIAGE_PAGE_SIZE = 50

    # Tool names that count as "evidence tools" for aiops_rule_evaluation (SPEC 5.3);
    # a workspace may override them in its settings.
    AIOPS_EVIDENCE_TOOLS: ClassVar[dict] = {group: list(names) for group, names in DEFAULT_EVIDENCE_TOOLS.items()}

    # Default reason codes; a workspace overrides them in settings["feedback_reasons"].
    FEEDBACK_REASONS: ClassVar[list] = list(DEFAULT_FEEDBACK_REASONS)

    # Content-Security-Policy sent with every HTML response.
    CONTENT_SECURITY_POLICY = (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    )
    # ... and with every other response (JSON, CSV, static files): nothing may run or frame it.
    CONTENT_SECURITY_POLICY_NON_HTML = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'"
