"""reviewapp: review the runs of an AI on-call agent.

``create_app`` is wiring only: config, extensions, blueprints, CLI. Nothing happens at
import time.
"""

from __future__ import annotations

import os
import secrets
from collections import ChainMap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask
from flask.globals import _cv_request
from flask.templating import Environment

from .config import Config

REPO_ROOT = Path(__file__).resolve().parent.parent


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Build the Flask app.

    Config load order: ``Config`` -> ``instance/config.py`` -> ``REVIEWAPP_*`` environment
    -> ``test_config``. ``DATABASE_URL`` (env ``REVIEWAPP_DATABASE_URL``) selects the
    database; unset means SQLite (WAL) in the instance folder.
    """
    app = _App(
        __name__,
        instance_relative_config=True,
        template_folder=str(REPO_ROOT / "templates"),
        static_folder=str(REPO_ROOT / "static"),
    )
    app.config.from_object(Config)
    app.config.from_pyfile("config.py", silent=True)
    app.config.from_prefixed_env("REVIEWAPP")
    if test_config is not None:
        app.config.from_mapping(test_config)

    Path(app.instance_path).mkdir(parents=True, exist_ok=True)
    _configure_secret_key(app)
    _configure_database_url(app)
    from .sessions import CachedSerializerSessionInterface

    app.session_interface = CachedSerializerSessionInterface()

    from . import api, cli, web
    from .extensions import csrf, db, limiter, login_manager, migrate

    db.init_app(app)
    migrate.init_app(
        app, db, directory=str(REPO_ROOT / "migrations"), render_as_batch=True, compare_type=True
    )
    csrf.init_app(app)
    limiter.init_app(app)
    _limit_decorated_views_only(app, limiter)
    _limiter_hooks_only_when_used(app, limiter)
    login_manager.init_app(app)
    with app.app_context():
        from .db_setup import install_engine_hooks

        install_engine_hooks(db.engine, app.config.get("SQLITE_BUSY_TIMEOUT_MS"))

    from .services import evaluations, secret_scan

    evaluations.configure(app.config)
    secret_scan.configure(app.config)
    web.init_app(app)
    api.init_app(app)
    cli.init_app(app)
    return app


class _TemplateGlobals(ChainMap):
    """A template's globals (its own over the environment's, as Jinja's ``ChainMap``)
    whose ``keys()`` is a set of the names at the time of the call: every
    ``{% from ... import %}`` takes ``ctx.globals_keys - globals.keys()``
    (``Template._get_default_module``), which on a ``ChainMap``'s view asks ``in`` for each
    of the ~30 names through ``any()`` over a generator, seven imports a run page
    (issue 18); set minus set is one C loop. ``in`` answers with dict lookups too."""

    def keys(self) -> Any:
        return set().union(*self.maps)

    def __contains__(self, key: object) -> bool:
        for mapping in self.maps:
            if key in mapping:
                return True
        return False


class _Environment(Environment):
    """Flask's Jinja environment, its templates' globals a ``_TemplateGlobals``."""

    def make_globals(self, d: Any) -> Any:
        return _TemplateGlobals({} if d is None else d, self.globals)


URL_MEMORY_MAX = 4096  # URLs ``_App.url_for`` remembers per app


class _App(Flask):
    """Flask, remembering which hooks and views are plain functions and the URLs it
    built (``url_for``), with the Jinja environment ``_Environment``.

    Flask passes every before / after / teardown hook and the view through
    ``ensure_sync`` on every request, which asks ``inspect.iscoroutinefunction`` each
    time (a dozen calls a request); the answer of a function never changes, so it is
    kept per function. Coroutine functions are wrapped as Flask would."""

    jinja_environment = _Environment

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sync_functions: dict[Any, Any] = {}
        self._urls: dict[tuple, str] = {}

    def url_for(self, endpoint: str, /, *, _anchor: str | None = None,  # type: ignore[override]
                _method: str | None = None, _scheme: str | None = None,
                _external: bool | None = None, **values: Any) -> str:
        """``Flask.url_for``, remembering the URLs it built during requests (issue 18,
        request stack: a run page builds 19, the same navigation and static URLs on every
        page; 51 -> 20 us of CPU for those 19). A URL is a function of the endpoint, the values (their order
        and types too: unknown keys become the query string in that order) and the
        request's URL adapter (script root, host, scheme, subdomain), over a map that
        cannot change once the app serves (Flask refuses new rules then). Only that case
        is remembered: inside a request, a relative URL, no anchor / method / scheme, no
        ``url_defaults`` function and hashable values; anything else, and every first
        build, goes through Flask (its errors and ``BuildError`` handling unchanged).
        At most ``URL_MEMORY_MAX`` URLs, forgotten all at once beyond."""
        req_ctx = _cv_request.get(None)
        if req_ctx is None or _external or _anchor is not None or _method is not None \
                or _scheme is not None or endpoint[:1] == "." or self._url_defaults_used():
            return super().url_for(endpoint, _anchor=_anchor, _method=_method, _scheme=_scheme,
                                   _external=_external, **values)
        adapter = req_ctx.url_adapter
        if adapter is None:
            return super().url_for(endpoint, _external=_external, **values)
        key = (endpoint, adapter.script_name, adapter.server_name, adapter.url_scheme,
               adapter.subdomain, *[(name, type(value), value) for name, value in values.items()])
        try:
            return self._urls[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable value (a list of query values): not remembered
            return super().url_for(endpoint, _external=_external, **values)
        url = super().url_for(endpoint, _external=_external, **values)
        if len(self._urls) >= URL_MEMORY_MAX:
            self._urls.clear()
        self._urls[key] = url
        return url

    def _url_defaults_used(self) -> bool:
        return any(self.url_default_functions.values())

    def ensure_sync(self, func: Any) -> Any:
        try:
            return self._sync_functions[func]
        except KeyError:
            synced = self._sync_functions[func] = super().ensure_sync(func)
            return synced
        except TypeError:  # an unhashable callable: asked every time, as Flask does
            return super().ensure_sync(func)


def _limiter_hooks_only_when_used(app: Flask, limiter: Any) -> None:
    """Run Flask-Limiter's response and teardown hooks only on a request where it did
    something: it keeps its per-request state on the request context
    (``_limiter_request_context``), created when a limited view checks its limit (the
    login POST); without it there is no deduction to make (``deduct_when``), no
    ``X-RateLimit-*`` header to add and nothing to reset, and the hooks would only
    build that state to find it empty (on every request of the app)."""
    from flask.globals import request_ctx
    from flask_limiter import Limiter

    def used() -> bool:
        return hasattr(request_ctx._get_current_object(), "_limiter_request_context")

    def when_used(hook: Any) -> Any:
        def guarded(value: Any) -> Any:
            return hook(value) if used() else value

        guarded.__name__ = getattr(hook, "__name__", "limiter_hook")
        return guarded

    inject = getattr(Limiter, "_Limiter__inject_headers", None)
    release = getattr(limiter, "_Limiter__release_context", None)
    for funcs, matches in ((app.after_request_funcs.get(None, []),
                            lambda f: getattr(f, "func", None) is inject
                            and getattr(f, "args", ()) == (limiter,)),
                           (app.teardown_request_funcs.get(None, []),
                            lambda f: f == release)):
        for index, func in enumerate(funcs):
            if matches(func):
                funcs[index] = when_used(func)


def _limit_decorated_views_only(app: Flask, limiter: Any) -> None:
    """Drop Flask-Limiter's check before *every* request when there is nothing for it to
    check: no default or application-wide limits are configured, only view decorators
    (the login POST), which enforce their limit themselves inside the decorated view.
    The global hook otherwise resolves the limits of each request (about 5 % of a cheap
    API call's CPU) to find none. Its response hook (the ``X-RateLimit-*`` headers of a
    limited view) stays."""
    manager = limiter.limit_manager
    if manager._default_limits or manager._application_limits:
        return
    hooks = app.before_request_funcs.get(None, [])
    if limiter._check_request_limit in hooks:
        hooks.remove(limiter._check_request_limit)


def _configure_secret_key(app: Flask) -> None:
    # One key per instance folder, shared by every process that serves it.
    if app.config.get("SECRET_KEY"):
        return
    key_file = Path(app.instance_path) / "secret_key"
    if not key_file.exists():
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32))
    app.config["SECRET_KEY"] = key_file.read_text().strip()


def _configure_database_url(app: Flask) -> None:
    url = app.config.get("DATABASE_URL") or app.config.get("SQLALCHEMY_DATABASE_URI")
    if not url:
        url = f"sqlite:///{Path(app.instance_path) / 'reviewapp.sqlite'}"
    if url.startswith("postgres://"):
        url = "postgresql+psycopg://" + url[len("postgres://"):]
    elif url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://"):]
    app.config["SQLALCHEMY_DATABASE_URI"] = url
