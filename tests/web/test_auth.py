"""Login, logout, rate limit, safe ``next``, CSRF (issue: foundation)."""

from __future__ import annotations

import re

import pytest

from ..factories import DEFAULT_PASSWORD


def test_login_page_renders(client):
    response = client.get("/login")
    assert response.status_code == 200
    assert b'name="username"' in response.data


def test_anonymous_is_sent_to_login(client):
    response = client.get("/")
    assert response.status_code == 303
    assert response.headers["Location"].startswith("/login?next=")


def test_login_then_runs_list_then_logout(client, make):
    ws = make.workspace()
    user = make.user(ws)
    response = client.post("/login", data={"username": user.username, "password": DEFAULT_PASSWORD})
    assert response.status_code == 303 and response.headers["Location"] == "/"
    assert client.get("/").status_code == 200
    out = client.post("/logout")
    assert out.status_code == 303
    assert client.get("/").status_code == 303


def test_wrong_password_is_refused(client, make):
    user = make.user(make.workspace())
    response = client.post("/login", data={"username": user.username, "password": "wrong-password"})
    assert response.status_code == 401
    assert b"Wrong username or password" in response.data
    assert client.get("/").status_code == 303


def test_unknown_user_gets_the_same_answer_as_wrong_password(client, make):
    user = make.user(make.workspace())
    a = client.post("/login", data={"username": user.username, "password": "nope-nope"})
    b = client.post("/login", data={"username": "ghost", "password": "nope-nope"})
    assert a.status_code == b.status_code == 401
    # The form echoes the typed username; apart from that the pages are identical.
    assert a.data.replace(user.username.encode(), b"NAME") == b.data.replace(b"ghost", b"NAME")


def test_inactive_user_cannot_log_in(client, make, session):
    user = make.user(make.workspace())
    user.active = False
    session.commit()
    response = client.post("/login", data={"username": user.username, "password": DEFAULT_PASSWORD})
    assert response.status_code == 401


@pytest.mark.parametrize("target, expected", [
    ("/runs?kind=chat", "/runs?kind=chat"),
    ("https://evil.example.com/", "/"),
    ("//evil.example.com/", "/"),
    ("/\\evil.example.com", "/"),
    ("javascript:alert(1)", "/"),
    ("http:/evil.example.com", "/"),
])
def test_next_cannot_leave_the_site(client, make, target, expected):
    user = make.user(make.workspace())
    response = client.post("/login", query_string={"next": target},
                           data={"username": user.username, "password": DEFAULT_PASSWORD})
    assert response.status_code == 303
    assert response.headers["Location"] == expected


def test_logout_invalidates_a_copied_cookie(make, app_factory):
    # A second app on the same database: the ``app`` fixture's app context (and its ``g``,
    # where Flask-Login caches the user) would otherwise be shared by both clients, and
    # the thief would look logged out merely because logout reset that cached user.
    app = app_factory()
    client = app.test_client()
    user = make.user(make.workspace())
    client.post("/login", data={"username": user.username, "password": DEFAULT_PASSWORD})
    cookie = client.get_cookie("session")
    assert cookie is not None
    thief = app.test_client()
    thief.set_cookie("session", cookie.value)
    assert thief.get("/").status_code == 200
    client.post("/logout")
    assert thief.get("/").status_code == 303


def test_session_is_rotated_on_login(client, make):
    user = make.user(make.workspace())
    client.get("/login")
    with client.session_transaction() as s:
        s["planted"] = "by-attacker"
    client.post("/login", data={"username": user.username, "password": DEFAULT_PASSWORD})
    with client.session_transaction() as s:
        assert "planted" not in s


def test_session_cookie_flags(client, make):
    user = make.user(make.workspace())
    response = client.post("/login", data={"username": user.username, "password": DEFAULT_PASSWORD})
    cookie = next(v for k, v in response.headers.items() if k == "Set-Cookie" and v.startswith("session="))
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_login_rate_limit(app_factory, make):
    app = app_factory(RATELIMIT_ENABLED=True, LOGIN_RATE_LIMIT="3 per minute")
    client = app.test_client()
    statuses = [client.post("/login", data={"username": "x", "password": "wrong-password"}).status_code
                for _ in range(4)]
    assert statuses == [401, 401, 401, 429]


def test_the_login_limit_page_leads_back_to_the_login_form_and_says_when(app_factory, make):
    """New-user walk: the 429 after too many failed logins was a dead end ("Too many
    attempts", a link to the runs list, which sends an anonymous visitor nowhere new). It
    says when the limiter lets this username in again and links back to the login form,
    keeping where the user was going."""
    app = app_factory(RATELIMIT_ENABLED=True, LOGIN_RATE_LIMIT="3 per hour")
    client = app.test_client()
    for _ in range(3):
        assert client.post("/login?next=/runs/7", data={"username": "x", "password": "wrong"}).status_code == 401
    locked = client.post("/login?next=/runs/7", data={"username": "x", "password": "wrong"})
    assert locked.status_code == 429
    html = locked.get_data(as_text=True)
    # The window of "3 per hour" started at the first failure a moment ago: about 60 minutes left.
    assert 3540 < int(locked.headers["Retry-After"]) <= 3600
    message = re.search(r'<p class="limit-message">([^<]*)</p>', html).group(1)
    assert message == ("Too many failed logins for this username from your address. "
                       "Try again in 60 minutes.")
    assert re.search(r'<a href="([^"]*)">Back to the login form</a>', html).group(1) == "/login?next=/runs/7"
    assert "Back to the runs" not in html
    # Second walk: the generic "tell your admin what you did" read oddly for a lockout.
    assert "tell your admin what you did" not in html
    assert "Forgotten your password? An admin can reset it." in html
    # The form it leads to still answers (the limit counts failed logins, not visits).
    assert client.get("/login?next=/runs/7").status_code == 200


def test_the_login_limit_page_counts_seconds_in_a_short_window(app_factory, make):
    app = app_factory(RATELIMIT_ENABLED=True, LOGIN_RATE_LIMIT="1 per minute")
    client = app.test_client()
    client.post("/login", data={"username": "x", "password": "wrong"})
    locked = client.post("/login", data={"username": "x", "password": "wrong"})
    wait = int(locked.headers["Retry-After"])
    message = re.search(r'<p class="limit-message">([^<]*)</p>', locked.get_data(as_text=True)).group(1)
    shown = int(re.fullmatch(r"Too many failed logins for this username from your address\. "
                             r"Try again in (\d+) seconds?\.", message).group(1))
    assert 0 < wait <= 60 and abs(shown - wait) <= 1
    assert '<a href="/login">Back to the login form</a>' in locked.get_data(as_text=True)


@pytest.mark.parametrize("typed", ["Alice", "ALICE", "alice"])
def test_login_ignores_the_case_of_the_username(client, make, typed):
    """New-user finding: usernames must differ by more than case, so 'Alice' names the
    account 'alice'; the login cookie is that account's."""
    alice = make.user(make.workspace(), username="alice")
    response = client.post("/login", data={"username": typed, "password": DEFAULT_PASSWORD})
    assert response.status_code == 303 and response.headers["Location"] == "/"
    with client.session_transaction() as cookie:
        assert cookie["_user_id"] == f"{alice.id}:{alice.session_token}"
    assert client.get("/").status_code == 200


def test_one_login_limit_for_every_case_of_a_username(app_factory, make):
    """'Alice', 'ALICE' and 'alice' are one account, so their failures count against one
    limit (3 here): the fourth attempt is refused whatever its case, even with the
    right password."""
    app = app_factory(RATELIMIT_ENABLED=True, LOGIN_RATE_LIMIT="3 per minute")
    make.user(make.workspace(), username="alice")
    client = app.test_client()
    statuses = [client.post("/login", data={"username": name, "password": "wrong-password"}).status_code
                for name in ("Alice", "ALICE", "alice")]
    right = client.post("/login", data={"username": "aLiCe", "password": DEFAULT_PASSWORD})
    assert statuses + [right.status_code] == [401, 401, 401, 429]


def test_htmx_request_with_expired_login_redirects_the_whole_window(client):
    response = client.get("/", headers={"HX-Request": "true"})
    assert response.status_code == 401
    assert response.headers["HX-Redirect"].startswith("/login?next=")
    assert b"<form" not in response.data


def test_htmx_redirect_comes_back_to_the_page_not_the_fragment(client):
    """A fragment URL like POST /feedback would answer 405 to the GET after login."""
    response = client.post("/feedback", headers={
        "HX-Request": "true", "HX-Current-URL": "http://localhost/runs/7?queue=1"})
    assert response.status_code == 401
    assert response.headers["HX-Redirect"] == "/login?next=/runs/7?queue%3D1"


def test_htmx_redirect_ignores_a_foreign_current_url(client):
    response = client.get("/runs/7/verdict", headers={
        "HX-Request": "true", "HX-Current-URL": "https://evil.example/runs/7"})
    assert response.headers["HX-Redirect"] == "/login?next=/"


def test_a_change_sent_after_the_session_ended_says_it_was_not_saved(client):
    response = client.post("/feedback", data={"rating": "positive"}, headers={
        "HX-Request": "true", "HX-Current-URL": "http://localhost/runs/2"})
    assert response.status_code == 401
    login_page = client.get(response.headers["HX-Redirect"]).get_data(as_text=True)
    assert "your last change was not saved" in login_page


def test_form_fields_carry_no_none_attributes(client, make):
    """aria-invalid="None" is an invalid ARIA value (axe: critical)."""
    html = client.get("/login").get_data(as_text=True)
    assert 'aria-invalid' not in html and 'aria-describedby="None"' not in html
    user = make.user(make.workspace())
    html = client.post("/login", data={"username": user.username, "password": ""}).get_data(as_text=True)
    assert '"None"' not in html


class TestCsrf:
    @pytest.fixture
    def csrf_client(self, app_factory):
        return app_factory(WTF_CSRF_ENABLED=True).test_client()

    def _token(self, client, path="/login"):
        html = client.get(path).get_data(as_text=True)
        match = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', html) or re.search(
            r'"X-CSRFToken": "([^"]+)"', html)
        assert match, "no CSRF token on the page"
        return match.group(1)

    def test_form_post_without_token_is_rejected(self, csrf_client, make):
        user = make.user(make.workspace())
        response = csrf_client.post("/login", data={"username": user.username,
                                                   "password": DEFAULT_PASSWORD})
        assert response.status_code == 400
        assert b"CSRF check failed" in response.data
        assert csrf_client.get("/").status_code == 303  # not logged in

    def test_logout_without_token_is_a_visible_400(self, csrf_client, make):
        user = make.user(make.workspace())
        token = self._token(csrf_client)
        csrf_client.post("/login", data={"username": user.username, "password": DEFAULT_PASSWORD,
                                          "csrf_token": token})
        response = csrf_client.post("/logout")
        assert response.status_code == 400
        assert b"CSRF" in response.data
        assert csrf_client.get("/").status_code == 200  # still logged in: nothing happened

    def test_htmx_post_with_header_token_passes(self, csrf_client, make):
        user = make.user(make.workspace())
        token = self._token(csrf_client)
        csrf_client.post("/login", data={"username": user.username, "password": DEFAULT_PASSWORD,
                                          "csrf_token": token})
        page_token = self._token(csrf_client, "/")
        response = csrf_client.post("/logout", headers={"HX-Request": "true", "X-CSRFToken": page_token})
        assert response.status_code == 303
        assert csrf_client.get("/").status_code == 303

    def test_htmx_post_without_token_gets_a_message_fragment(self, csrf_client, make):
        user = make.user(make.workspace())
        token = self._token(csrf_client)
        csrf_client.post("/login", data={"username": user.username, "password": DEFAULT_PASSWORD,
                                          "csrf_token": token})
        response = csrf_client.post("/logout", headers={"HX-Request": "true"})
        assert response.status_code == 400
        assert response.headers["HX-Retarget"] == "#messages"
        assert b"CSRF" in response.data

    def test_post_after_the_session_ended_asks_to_log_in_not_about_csrf(self, csrf_client):
        response = csrf_client.post("/feedback", data={}, headers={
            "HX-Request": "true", "HX-Current-URL": "http://localhost/runs/3"})
        assert response.status_code == 401
        assert response.headers["HX-Redirect"] == "/login?next=/runs/3"

    def test_api_is_exempt(self, csrf_client):
        assert csrf_client.get("/api/health").status_code == 200
