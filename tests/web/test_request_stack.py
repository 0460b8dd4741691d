"""The request stack's shortcuts (issue 18, request stack) answer with the same headers
as Flask and its extensions would: the session cookie is written only when the session
changed, ``Vary: Cookie`` whenever it was read; Flask-Limiter's hooks still deduct failed
logins and add the ``X-RateLimit-*`` headers of the limited login view."""

from __future__ import annotations

from contextlib import contextmanager

from flask import Response
from sqlalchemy import delete, event, update

from reviewapp.actors import Role
from reviewapp.db_setup import write_intent
from reviewapp.sessions import add_vary_cookie

from ..factories import DEFAULT_PASSWORD


@contextmanager
def recorded_statements(app):
    """The SQL text of each statement the app's engine runs inside the block."""
    from reviewapp.extensions import db

    seen: list[str] = []
    with app.app_context():
        engine = db.engine

    def record(conn, cursor, statement, *args):  # noqa: ANN001, ANN202 - event signature
        seen.append(" ".join(statement.split()))

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def _set_cookies(response) -> list[str]:
    return response.headers.getlist("Set-Cookie")


def test_an_unchanged_session_is_not_written_again_but_varies_on_the_cookie(client, make, login):
    user = make.user(make.workspace())
    login(user)
    client.get("/")  # the first page adds the CSRF token to the session (a change)
    for path in ("/", "/api/feedback/targets?runPk=1"):
        response = client.get(path)
        assert response.status_code in (200, 403), path
        assert _set_cookies(response) == [], path  # nothing changed: no cookie re-sent
        vary = [v.strip() for v in ", ".join(response.headers.getlist("Vary")).split(",")]
        assert vary.count("Cookie") == 1, (path, vary)


def test_a_changed_session_is_written_with_vary_cookie(client, make):
    user = make.user(make.workspace())
    response = client.post("/login", data={"username": user.username,
                                           "password": DEFAULT_PASSWORD})
    assert response.status_code == 303
    assert [c for c in _set_cookies(response) if c.startswith("session=")]
    assert "Cookie" in response.headers["Vary"]
    out = client.post("/logout")  # a session emptied of the login: cleared or rewritten
    assert out.status_code == 303
    assert [c for c in _set_cookies(out) if c.startswith("session=")]
    assert "Cookie" in out.headers["Vary"]


def test_add_vary_cookie_keeps_other_values_and_adds_cookie_once():
    bare = Response()
    add_vary_cookie(bare)
    assert bare.headers.getlist("Vary") == ["Cookie"]
    other = Response(headers={"Vary": "Accept-Encoding"})
    add_vary_cookie(other)
    add_vary_cookie(other)
    assert other.headers.getlist("Vary") == ["Accept-Encoding, Cookie"]
    same = Response(headers={"Vary": "cookie"})
    add_vary_cookie(same)
    assert same.headers.getlist("Vary") == ["cookie"]


def test_limited_login_still_deducts_failures_and_sends_its_headers(app_factory):
    app = app_factory(RATELIMIT_ENABLED=True, LOGIN_RATE_LIMIT="2 per minute",
                      LOGIN_RATE_LIMIT_PER_IP="50 per minute")
    client = app.test_client()
    first = client.post("/login", data={"username": "nobody", "password": "wrong-password"})
    assert first.status_code == 401
    assert first.headers["X-RateLimit-Limit"] in ("2", "50")
    assert "X-RateLimit-Remaining" in first.headers
    second = client.post("/login", data={"username": "nobody", "password": "wrong-password"})
    assert second.status_code == 401
    assert client.post("/login", data={"username": "nobody",
                                       "password": "wrong-password"}).status_code == 429
    # Requests the limiter has nothing to do with carry none of its headers.
    page = client.get("/login")
    assert page.status_code == 200 and "X-RateLimit-Limit" not in page.headers


def test_template_globals_answer_as_jinjas_chain_of_maps(app):
    """The environment's templates keep Jinja's globals (their own over the
    environment's, later changes seen) with a quick ``keys()`` / ``in`` (issue 18)."""
    env = app.jinja_env
    template = env.from_string("{{ shared }} {{ own }}", globals={"own": "mine"})
    env.globals["shared"] = "added after load"
    assert template.render() == "added after load mine"
    assert template.globals.keys() == set(env.globals) | {"own"}
    assert "own" in template.globals and "shared" in template.globals
    assert "missing" not in template.globals
    macros = env.from_string("{% macro m() %}{{ shared }}{% endmacro %}")
    assert env.from_string("{% from t import m %}{{ m() }}").render(t=macros) == "added after load"
    del env.globals["shared"]


def test_url_for_remembers_a_url_and_answers_as_flask_would(app, monkeypatch):
    """``url_for`` within a request gives Flask's own URL for every endpoint, values
    (order and types), script root and host, building each only once (issue 18)."""
    from flask import Flask
    from werkzeug.routing import MapAdapter

    builds = []
    original = MapAdapter.build
    monkeypatch.setattr(MapAdapter, "build",
                        lambda self, *a, **k: builds.append(a[0]) or original(self, *a, **k))
    calls = [
        ("runs.index", {}), ("runs.detail", {"run_pk": 5}), ("runs.detail", {"run_pk": "5"}),
        ("runs.index", {"kind": "chat", "q": "a b&c"}), ("runs.index", {"q": "a b&c", "kind": "chat"}),
        ("runs.index", {"page": 1}), ("runs.index", {"page": True}), ("runs.index", {"page": 1.0}),
        ("static", {"filename": "css/app.css"}), ("runs.index", {"kind": ["chat", "aiops"]}),
        ("runs.index", {"kind": None}),
    ]
    for base, script in (("http://localhost/", ""), ("https://other.example/", "/sub")):
        with app.test_request_context("/", base_url=base + script.lstrip("/")):
            for endpoint, values in calls:
                expected = Flask.url_for(app, endpoint, **values)
                assert app.url_for(endpoint, **values) == expected, (endpoint, values)
            builds.clear()
            for endpoint, values in calls:  # again: only the list value is built again
                assert app.url_for(endpoint, **values) == Flask.url_for(app, endpoint, **values)
            assert len(builds) == len(calls) + 1
            # Anchors, methods and external URLs go through Flask every time.
            assert app.url_for("runs.index", _anchor="x") == Flask.url_for(app, "runs.index", _anchor="x")
            assert app.url_for("runs.index", _external=True) == base.rstrip("/") + script + "/"


def test_url_for_memory_is_bounded(app, monkeypatch):
    import reviewapp

    monkeypatch.setattr(reviewapp, "URL_MEMORY_MAX", 3)
    with app.test_request_context("/"):
        urls = [app.url_for("runs.detail", run_pk=n) for n in range(1, 8)]
        assert urls == [f"/runs/{n}" for n in range(1, 8)]
        assert len(app._urls) <= 3


def _nav_role_shown(html: str, username: str) -> str | None:
    import re

    found = re.search(re.escape(username) + r"(?: · (\w+))?</a>", html)
    assert found, "no account link in the navigation"
    return found.group(1)


def test_nav_role_is_read_with_the_user_on_a_get(app_factory, make, login, session):
    """A page's navigation shows the user's highest role in any workspace, read in the
    login user's own statement on a GET (issue 18: one statement fewer), read afresh on
    every request (a role changed meanwhile shows at once) and for no workspace none.
    A second app: each of its requests has its own app context and ``g``, as served."""
    from reviewapp.models import Membership

    served = app_factory()
    client = served.test_client()
    first, second = make.workspace(), make.workspace()
    user = make.user(first, Role.REVIEWER)
    session.add(Membership(user_id=user.id, workspace_id=second.id, role=Role.LEAD.value))
    session.commit()
    run = make.run(first)
    login(user, c=client)
    with recorded_statements(served) as seen:
        html = client.get(f"/runs/{run.id}").get_data(as_text=True)
    assert _nav_role_shown(html, user.username) == "lead"
    assert [s for s in seen if "FROM user_account" in s]
    assert not [s for s in seen if "JOIN membership" in s and "workspace.name" in s]  # no nav statement
    session.rollback()
    with write_intent():  # as the services write: the SQLite write lock first
        session.execute(update(Membership).values(role=Role.ADMIN.value)
                        .where(Membership.user_id == user.id, Membership.workspace_id == first.id))
        session.commit()
    assert _nav_role_shown(client.get(f"/runs/{run.id}").get_data(as_text=True), user.username) == "admin"
    with write_intent():
        session.execute(delete(Membership).where(Membership.user_id == user.id))
        session.commit()
    page = client.get("/account/")
    assert page.status_code == 200
    assert _nav_role_shown(page.get_data(as_text=True), user.username) is None


def test_load_user_reads_the_role_only_when_asked(session, make):
    from reviewapp.services import admin

    user = make.user(make.workspace(), Role.LEAD)
    cookie = f"{user.id}:{user.session_token}"
    plain = admin.load_user(session, cookie)
    assert plain.role_read is False and plain.highest_role is None
    with_role = admin.load_user(session, cookie, with_role=True)
    assert with_role.role_read is True and with_role.highest_role is Role.LEAD
    assert admin.load_user(session, f"{user.id}:wrong", with_role=True) is None
