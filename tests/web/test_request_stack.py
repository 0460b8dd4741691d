"""The request stack's shortcuts (issue 18, request stack) answer with the same headers
as Flask and its extensions would: the session cookie is written only when the session
changed, ``Vary: Cookie`` whenever it was read; Flask-Limiter's hooks still deduct failed
logins and add the ``X-RateLimit-*`` headers of the limited login view."""

from __future__ import annotations

from flask import Response

from reviewapp.sessions import add_vary_cookie

from ..factories import DEFAULT_PASSWORD


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
