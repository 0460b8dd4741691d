"""Security headers on pages and API answers, login-session cookie handling, and the login
rate limit (SPEC 2, 10; README "Login rate limit")."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import requests

from reviewapp import REPO_ROOT
from reviewapp.config import Config

from ..factories import DEFAULT_PASSWORD

COMMON = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


def _csp(response) -> dict[str, str]:
    """The Content-Security-Policy as {directive: value}."""
    policy = response.headers["Content-Security-Policy"]
    return {part.split(" ", 1)[0]: part.split(" ", 1)[1] if " " in part else ""
            for part in (p.strip() for p in policy.split(";")) if part}


@pytest.fixture
def served(make, app_factory):
    """An app on the test database that the test has not pushed a context for: every
    request gets its own app context, as under a real server. (Under the ``app``
    fixture's pushed context, Flask-Login's per-request user cache in ``g`` would
    outlive the request and hide what the cookie alone proves.)"""
    return app_factory()


def _log_in(client, user) -> None:
    response = client.post("/login", data={"username": user.username, "password": DEFAULT_PASSWORD})
    assert response.status_code == 303, response.status_code


# --- headers -----------------------------------------------------------------------------


@pytest.mark.parametrize("path, status", [("/login", 200), ("/no-such-page", 404)])
def test_anonymous_html_pages_carry_the_security_headers(client, path, status):
    response = client.get(path)
    assert response.status_code == status
    assert response.mimetype == "text/html"
    for name, value in COMMON.items():
        assert response.headers[name] == value, name
    csp = _csp(response)
    assert csp["frame-ancestors"] == "'none'"
    assert csp["script-src"] == "'self'" and "'unsafe-inline'" not in response.headers["Content-Security-Policy"]
    assert csp["object-src"] == "'none'" and csp["base-uri"] == "'none'"


def test_logged_in_pages_carry_the_headers_and_are_not_cached(served, make):
    ws = make.workspace()
    run = make.run(ws)
    client = served.test_client()
    _log_in(client, make.user(ws))
    for path in ("/", f"/runs/{run.id}"):
        response = client.get(path)
        assert response.status_code == 200, path
        for name, value in COMMON.items():
            assert response.headers[name] == value, (path, name)
        assert _csp(response)["frame-ancestors"] == "'none'"
        assert response.headers["Cache-Control"] == "no-store"


def test_htmx_error_fragment_carries_the_headers(client):
    response = client.get("/no-such-page", headers={"HX-Request": "true"})
    assert response.status_code == 404
    for name, value in COMMON.items():
        assert response.headers[name] == value, name
    assert _csp(response)["frame-ancestors"] == "'none'"


@pytest.mark.parametrize("method, path, status", [
    ("get", "/api/health", 200),
    ("get", "/api/runs/r1/trace", 401),
    ("put", "/api/ingest/runs/r1", 401),
    ("get", "/api/no-such-route", 404),
    ("delete", "/api/health", 405),
])
def test_api_answers_carry_the_headers_and_a_csp_that_allows_nothing(client, method, path, status):
    response = getattr(client, method)(path)
    assert response.status_code == status
    assert response.mimetype == "application/json"
    for name, value in COMMON.items():
        assert response.headers[name] == value, name
    csp = _csp(response)
    assert csp == {"default-src": "'none'", "frame-ancestors": "'none'", "base-uri": "'none'"}
    assert response.headers["Cache-Control"] == "no-store"


def test_static_files_carry_nosniff_and_no_framing(client):
    css = next((REPO_ROOT / "static").rglob("*.css"))
    response = client.get("/static/" + css.relative_to(REPO_ROOT / "static").as_posix())
    assert response.status_code == 200
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert _csp(response)["frame-ancestors"] == "'none'"
    assert "no-store" not in response.headers.get("Cache-Control", "")  # cacheable
    response.close()


# --- the session cookie ------------------------------------------------------------------


def _session_set_cookie(response) -> str:
    cookies = [v for k, v in response.headers.items() if k == "Set-Cookie" and v.startswith("session=")]
    assert len(cookies) == 1, cookies
    return cookies[0]


def _attributes(set_cookie: str) -> set[str]:
    return {part.strip().split("=")[0].lower() for part in set_cookie.split(";")[1:]}


def test_session_cookie_is_httponly_lax_and_not_secure_by_default(client, make):
    user = make.user(make.workspace())
    response = client.post("/login", data={"username": user.username, "password": DEFAULT_PASSWORD})
    cookie = _session_set_cookie(response)
    assert {"httponly", "samesite"} <= _attributes(cookie)
    assert "SameSite=Lax" in cookie
    assert "secure" not in _attributes(cookie)  # plain http on a laptop must still work


def test_session_cookie_is_secure_when_configured_in_the_environment(app_factory, make, monkeypatch):
    monkeypatch.setenv("REVIEWAPP_SESSION_COOKIE_SECURE", "true")
    secure_app = app_factory()  # the test mapping does not set it: the environment wins
    assert secure_app.config["SESSION_COOKIE_SECURE"] is True
    user = make.user(make.workspace())
    client = secure_app.test_client()
    response = client.post("/login", data={"username": user.username, "password": DEFAULT_PASSWORD})
    assert response.status_code == 303
    cookie = _session_set_cookie(response)
    assert {"secure", "httponly", "samesite"} <= _attributes(cookie) and "SameSite=Lax" in cookie


def test_a_cookie_captured_before_login_is_not_logged_in_afterwards(served, make):
    app = served
    client = app.test_client()
    user = make.user(make.workspace())
    client.get("/login")  # the anonymous session (it holds the CSRF secret)
    before = client.get_cookie("session")
    assert before is not None
    _log_in(client, user)
    after = client.get_cookie("session")
    assert after.value != before.value
    assert client.get("/").status_code == 200
    attacker = app.test_client()
    attacker.set_cookie("session", before.value)
    assert attacker.get("/").status_code == 303
    assert attacker.get("/api/feedback/targets?runPk=1").status_code == 401


def test_logout_invalidates_the_cookie_for_pages_and_api_and_a_new_login_works(served, make):
    app = served
    client = app.test_client()
    ws = make.workspace()
    user = make.user(ws)
    run = make.run(ws)
    _log_in(client, user)
    stolen = client.get_cookie("session").value
    thief = app.test_client()
    thief.set_cookie("session", stolen)
    api = thief.get(f"/api/feedback/targets?runPk={run.id}")
    assert api.status_code == 200
    assert api.headers["Cache-Control"] == "no-store"
    assert client.post("/logout").status_code == 303
    assert thief.get("/").status_code == 303
    assert thief.get(f"/api/feedback/targets?runPk={run.id}").status_code == 401
    # Logging in again gives a fresh cookie; the stolen one stays dead.
    _log_in(client, user)
    assert client.get("/").status_code == 200
    assert thief.get("/").status_code == 303


def test_logout_ends_the_users_other_sessions_too(served, make):
    app = served
    user = make.user(make.workspace())
    laptop, phone = app.test_client(), app.test_client()
    _log_in(laptop, user)
    _log_in(phone, user)
    assert phone.get("/").status_code == 200
    laptop.post("/logout")
    assert phone.get("/").status_code == 303


# --- login rate limit --------------------------------------------------------------------


def _attempt(client, username: str, password: str = "wrong-password", ip: str = "10.0.0.1") -> int:
    return client.post("/login", data={"username": username, "password": password},
                       environ_base={"REMOTE_ADDR": ip}).status_code


@pytest.fixture
def limited(make, app_factory):
    """A client of an app whose login limit is 3 failures per minute (memory storage,
    a key prefix of its own so no other test's counts are seen). Built after ``make``'s
    app: the limiter is one object per process, configured by the last app built."""
    app = app_factory(RATELIMIT_ENABLED=True, LOGIN_RATE_LIMIT="3 per minute",
                      LOGIN_RATE_LIMIT_PER_IP="5 per minute", RATELIMIT_STORAGE_URI="memory://",
                      RATELIMIT_KEY_PREFIX=f"t-{uuid.uuid4().hex}")
    return app.test_client()


def test_failures_lock_only_that_username_from_that_address(limited, make):
    victim = make.user(make.workspace())
    other = make.user(make.workspace())
    assert [_attempt(limited, victim.username) for _ in range(4)] == [401, 401, 401, 429]
    # Locked pair: even the right password waits.
    assert _attempt(limited, victim.username, DEFAULT_PASSWORD) == 429
    # The same user from another address, and another user from the attacker's address.
    assert _attempt(limited, victim.username, DEFAULT_PASSWORD, ip="10.0.0.2") == 303
    assert _attempt(limited, other.username, DEFAULT_PASSWORD) == 303


def test_username_is_counted_case_and_space_insensitively(limited, make):
    victim = make.user(make.workspace())
    names = [victim.username, victim.username.upper(), f"  {victim.username}  "]
    assert [_attempt(limited, name) for name in names] == [401, 401, 401]
    assert _attempt(limited, victim.username.title()) == 429


def test_successful_logins_do_not_count(limited, make):
    user = make.user(make.workspace())
    for _ in range(5):
        assert _attempt(limited, user.username, DEFAULT_PASSWORD) == 303
        limited.post("/logout", environ_base={"REMOTE_ADDR": "10.0.0.1"})
    assert _attempt(limited, user.username) == 401


def test_one_address_spraying_many_usernames_is_capped(limited):
    statuses = [_attempt(limited, f"guess{n}") for n in range(7)]
    assert statuses == [401] * 5 + [429] * 2
    assert _attempt(limited, "guess0", ip="10.0.0.9") == 401  # other addresses unaffected


# --- shared storage: two processes, one Redis --------------------------------------------

REDIS_URL = os.environ.get("REVIEWAPP_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")

_SERVER = """
import sys
from werkzeug.serving import make_server
from reviewapp import create_app
app = create_app({"TESTING": True, "SECRET_KEY": "k", "DATABASE_URL": sys.argv[1],
                  "RATELIMIT_ENABLED": True, "RATELIMIT_STORAGE_URI": sys.argv[2],
                  "RATELIMIT_KEY_PREFIX": sys.argv[3], "LOGIN_RATE_LIMIT": "3 per minute",
                  "WTF_CSRF_ENABLED": False})
server = make_server("127.0.0.1", 0, app, threaded=True)
print(server.server_port, flush=True)
server.serve_forever()
"""


def _redis_or_skip() -> None:
    host, port = REDIS_URL.split("//", 1)[1].split("/", 1)[0].split(":")
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
    except OSError:
        message = f"Redis at {REDIS_URL} is unreachable: shared rate-limit test not run"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def two_servers(database_url: str, tmp_path: Path):
    """``two_servers(storage_uri)`` -> two base URLs of separate processes serving the app."""
    processes: list[subprocess.Popen] = []

    def _start(storage_uri: str, prefix: str) -> list[str]:
        urls = []
        for n in range(2):
            process = subprocess.Popen(
                [sys.executable, "-c", _SERVER, database_url, storage_uri, prefix],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=tmp_path,
                env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
            )
            processes.append(process)
            port = process.stdout.readline().strip()
            assert port.isdigit(), f"server {n} did not start"
            urls.append(f"http://127.0.0.1:{port}")
        return urls

    yield _start
    for process in processes:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()


def _post_login(base: str, username: str) -> int:
    return requests.post(f"{base}/login", data={"username": username, "password": "wrong-password"},
                         allow_redirects=False, timeout=10).status_code


def test_two_processes_share_the_login_count_through_redis(two_servers):
    _redis_or_skip()
    username = f"victim-{uuid.uuid4().hex[:8]}"
    a, b = two_servers(REDIS_URL, f"rl-{uuid.uuid4().hex}")
    statuses = [_post_login(a, username), _post_login(b, username), _post_login(a, username),
                _post_login(b, username)]
    assert statuses == [401, 401, 401, 429]


def test_in_memory_counts_are_per_process(two_servers):
    """The default: each process counts alone (the control for the Redis test above)."""
    username = f"victim-{uuid.uuid4().hex[:8]}"
    a, b = two_servers("memory://", "mem")
    statuses = [_post_login(a, username), _post_login(b, username), _post_login(a, username),
                _post_login(b, username)]
    assert statuses == [401, 401, 401, 401]
    assert [_post_login(a, username), _post_login(a, username)] == [401, 429]  # a's own 3


def test_the_default_storage_is_memory():
    assert Config.RATELIMIT_STORAGE_URI == "memory://"
