"""The memory of verified signed strings (``reviewapp/sessions.py``): the session cookie
and the JSON API's ``X-CSRFToken`` header are HMAC-checked once per process; a string
verified before must still be refused when any byte of it changes, when it has expired,
when it is another session's token, when the keys change, and a cached cookie must not
keep a user logged in whose session ended, who was deactivated or who lost the
workspace."""

from __future__ import annotations

import time

import pytest
from itsdangerous import BadSignature, SignatureExpired, TimestampSigner
from sqlalchemy import delete

from reviewapp import sessions
from reviewapp.actors import Actor, Role
from reviewapp.models import Membership, User
from reviewapp.services import admin
from reviewapp.sessions import VerifiedTimedSerializer

from ..factories import DEFAULT_PASSWORD
from .test_csrf import page_token


@pytest.fixture
def unsigns(monkeypatch):
    """How many times a signature was really checked (``TimestampSigner.unsign``)."""
    calls = []
    original = TimestampSigner.unsign

    def counting(self, *args, **kwargs):
        calls.append(args[0])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(TimestampSigner, "unsign", counting)
    return calls


def _flip(value: str, index: int) -> str:
    """``value`` with the character at ``index`` replaced by another URL-safe one."""
    return value[:index] + ("A" if value[index] != "A" else "B") + value[index + 1:]


def test_a_verified_string_skips_the_hmac_and_decodes_afresh(unsigns):
    serializer = VerifiedTimedSerializer("key-one", salt="s")
    signed = serializer.dumps({"flashes": [["info", "hello"]]})
    first = serializer.loads(signed)
    first["flashes"].append(["error", "changed in place"])
    again = serializer.loads(signed)
    assert again == {"flashes": [["info", "hello"]]}  # not the object handed out before
    assert serializer.loads(signed.encode()) == again
    # A payload long enough to be zlib-compressed (a Flask session cookie usually is).
    big = {"_user_id": "1:" + "ab" * 200, "flashes": [["info", "x" * 300]]}
    packed = serializer.dumps(big)
    assert packed.startswith(".")
    assert serializer.loads(packed) == serializer.loads(packed) == big
    assert len(unsigns) == 2


def test_a_plain_payload_is_kept_parsed_and_handed_out_as_a_new_dict(monkeypatch, unsigns):
    """A login session (a flat dict of strings and booleans) and a CSRF token (a string)
    are parsed once (issue 18, request stack); each load still gets a dict of its own,
    so a request changing its session changes nothing another request reads."""
    serializer = VerifiedTimedSerializer("key-one", salt="s")
    session = {"_user_id": "1:abc", "_fresh": True, "csrf_token": "f" * 40, "n": 3, "x": None}
    signed = serializer.dumps(session)
    first = serializer.loads(signed)
    token = serializer.dumps("raw-token")
    assert serializer.loads(token) == "raw-token"
    parses = []
    original = serializer.serializer.loads
    monkeypatch.setattr(serializer.serializer, "loads",
                        lambda *a, **k: parses.append(1) or original(*a, **k), raising=False)
    second = serializer.loads(signed)
    assert first == second == session and first is not second
    first["_user_id"] = "2:changed"
    first["flashes"] = [["info", "x"]]
    third = serializer.loads(signed)
    assert third == session and third is not second
    assert serializer.loads(token) == serializer.loads(token) == "raw-token"
    assert parses == [] and len(unsigns) == 2  # no JSON parse, no HMAC after the first


@pytest.mark.parametrize("payload", [
    {"_user_id": "1:abc", "_flashes": [["info", "hello"]]},  # a list inside
    {"nested": {"a": "b"}},
    ["a", "b"],
])
def test_a_payload_that_is_not_plain_is_parsed_on_every_load(monkeypatch, payload):
    serializer = VerifiedTimedSerializer("key-one", salt="s")
    signed = serializer.dumps(payload)
    assert serializer.loads(signed) == payload
    parses = []
    original = serializer.serializer.loads
    monkeypatch.setattr(serializer.serializer, "loads",
                        lambda *a, **k: parses.append(1) or original(*a, **k), raising=False)
    first, second = serializer.loads(signed), serializer.loads(signed)
    assert first == second == payload and first is not second
    assert len(parses) == 2


def test_flask_session_tags_are_not_kept_parsed(app):
    """Flask's tagged values (bytes, a tuple, Markup) come back as Flask gives them."""
    from markupsafe import Markup

    serializer = app.session_interface.get_signing_serializer(app)
    value = {"b": b"\x00bytes", "t": (1, 2), "m": Markup("<b>x</b>")}
    signed = serializer.dumps(value)
    for _ in range(3):
        loaded = serializer.loads(signed)
        assert loaded == value and type(loaded["m"]) is Markup and type(loaded["t"]) is tuple


@pytest.mark.parametrize("where", ["payload", "timestamp", "signature", "truncated"])
def test_a_tampered_string_fails_after_the_genuine_one_was_remembered(unsigns, where):
    serializer = VerifiedTimedSerializer("key-one", salt="s")
    signed = serializer.dumps({"_user_id": "1:abc"})
    assert serializer.loads(signed) == {"_user_id": "1:abc"}
    payload_end, stamp_end = signed.index("."), signed.rindex(".")
    tampered = {"payload": _flip(signed, 2), "timestamp": _flip(signed, payload_end + 2),
                "signature": _flip(signed, stamp_end + 2), "truncated": signed[:-1]}[where]
    assert tampered != signed
    for _ in range(2):  # refused every time: a failure is not remembered either
        with pytest.raises(BadSignature):
            serializer.loads(tampered)
    assert len(unsigns) == 3
    assert serializer.loads(signed) == {"_user_id": "1:abc"}


def test_age_is_checked_on_every_load_of_a_remembered_string(monkeypatch):
    serializer = VerifiedTimedSerializer("key-one", salt="s")
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now)
    signed = serializer.dumps("token")
    assert serializer.loads(signed, max_age=60) == "token"
    monkeypatch.setattr(time, "time", lambda: now + 61)
    with pytest.raises(SignatureExpired, match="61 > 60"):
        serializer.loads(signed, max_age=60)
    assert serializer.loads(signed) == "token"  # no max_age: no limit, as itsdangerous
    monkeypatch.setattr(time, "time", lambda: now - 5)  # signed "in the future"
    with pytest.raises(SignatureExpired, match="< 0"):
        serializer.loads(signed, max_age=60)
    value, when = serializer.loads(signed, return_timestamp=True)
    assert (value, int(when.timestamp())) == ("token", int(now))


def test_another_key_checks_again_and_refuses(unsigns):
    ours = VerifiedTimedSerializer("key-one", salt="s")
    signed = ours.dumps("x")
    assert ours.loads(signed) == "x"
    with pytest.raises(BadSignature):
        VerifiedTimedSerializer("key-two", salt="s").loads(signed)
    # Old key as a fallback: still accepted (current key last, as Flask orders them).
    assert VerifiedTimedSerializer(["key-one", "key-two"], salt="s").loads(signed) == "x"


def test_the_memory_is_bounded_least_recently_used_first(monkeypatch, unsigns):
    monkeypatch.setattr(sessions, "VERIFIED_STRINGS_MAX", 2)
    serializer = VerifiedTimedSerializer("key-one", salt="s")
    a, b, c = (serializer.dumps(v) for v in "abc")
    for signed in (a, b, a, c):  # c pushes out b, the least recently used
        serializer.loads(signed)
    assert len(unsigns) == 3
    serializer.loads(a)
    assert len(unsigns) == 3
    serializer.loads(b)
    assert len(unsigns) == 4


def test_session_serializer_is_rebuilt_when_the_key_changes(app):
    interface = app.session_interface
    first = interface.get_signing_serializer(app)
    assert interface.get_signing_serializer(app) is first
    cookie = first.dumps({"_user_id": "1:abc"})
    assert first.loads(cookie) == {"_user_id": "1:abc"}
    app.secret_key = "another-key-entirely"
    second = interface.get_signing_serializer(app)
    assert second is not first
    with pytest.raises(BadSignature):
        second.loads(cookie)


# --- through the app: the feedback upsert as a logged-in browser -------------------------


def _logged_in(web, user):
    """A browser logged in as ``user`` through the login form (CSRF on), and its page token."""
    client = web.test_client()
    assert client.post("/login", data={"username": user.username, "password": DEFAULT_PASSWORD,
                                       "csrf_token": page_token(client, "/login")}).status_code == 303
    return client, page_token(client)


@pytest.fixture
def world(make, app_factory):
    """An app with CSRF on, a reviewer logged in on it, and a step to rate."""
    web = app_factory(WTF_CSRF_ENABLED=True)
    ws = make.workspace()
    user = make.user(ws, Role.REVIEWER)
    step_id = make.aiops_run(ws).steps[0].id
    client, token = _logged_in(web, user)
    return web, client, token, user, ws, step_id


def _put(client, step_id, token, rating="positive"):
    return client.put("/api/feedback/targets", headers={"X-CSRFToken": token},
                      json={"targetType": "diagnostic_step", "targetId": step_id, "rating": rating})


def test_tampered_expired_or_foreign_csrf_token_is_refused_after_a_valid_one(
        world, make, session, monkeypatch):
    web, client, token, _, ws, step_id = world
    assert _put(client, step_id, token).status_code == 200
    assert _put(client, step_id, token, "negative").status_code == 200  # remembered now
    for bad in (_flip(token, len(token) - 3), _flip(token, 1), token[:-1], "", "x.y.z"):
        answer = _put(client, step_id, bad)
        assert answer.status_code == 400, bad
        assert answer.get_json()["error"]["code"] == "CSRF_INVALID"
    # Another browser's token, verified (and remembered) on its own session, is not ours.
    session.rollback()  # the test's read snapshot predates the writes above
    other, other_token = _logged_in(web, make.user(ws, Role.REVIEWER))
    assert _put(other, step_id, other_token).status_code == 200
    assert _put(client, step_id, other_token).status_code == 400
    assert _put(client, step_id, token).status_code == 200
    # A time limit, when configured, holds for a token already verified.
    web.config["WTF_CSRF_TIME_LIMIT"] = 60
    assert _put(client, step_id, token).status_code == 200
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 61)
    answer = _put(client, step_id, token)
    assert answer.status_code == 400 and answer.get_json()["error"]["code"] == "CSRF_INVALID"


def test_an_expired_session_cookie_is_refused_after_it_was_remembered(world, monkeypatch):
    web, client, token, *_, step_id = world
    assert _put(client, step_id, token).status_code == 200
    assert _put(client, step_id, token).status_code == 200
    now = time.time()
    lifetime = int(web.permanent_session_lifetime.total_seconds())
    monkeypatch.setattr(time, "time", lambda: now + lifetime + 1)
    assert _put(client, step_id, token).status_code == 401  # logged out: the cookie expired


def test_a_tampered_session_cookie_is_anonymous_after_the_genuine_one_was_remembered(world):
    web, client, token, *_, step_id = world
    assert _put(client, step_id, token).status_code == 200
    genuine = client.get_cookie("session").value
    for index in (2, genuine.index(".") + 2, genuine.rindex(".") + 2):
        client.set_cookie("session", _flip(genuine, index))
        assert _put(client, step_id, token).status_code == 401
    client.set_cookie("session", genuine)
    assert _put(client, step_id, token).status_code == 200


@pytest.mark.parametrize("change", ["logged_out_elsewhere", "deactivated", "removed"])
def test_a_remembered_cookie_does_not_outlive_the_users_access(world, session, change):
    web, client, token, user, ws, step_id = world
    assert _put(client, step_id, token).status_code == 200
    assert _put(client, step_id, token, "negative").status_code == 200
    session.rollback()
    row = session.get(User, user.id)
    if change == "logged_out_elsewhere":
        admin.end_all_sessions(session, Actor.system_actor(), user.id)
    elif change == "deactivated":
        row.active = False
    else:  # no role below reviewer: losing the workspace is the demotion that counts
        session.execute(delete(Membership).where(Membership.user_id == user.id))
    session.commit()
    answer = _put(client, step_id, token)
    expected = 403 if change == "removed" else 401
    assert answer.status_code == expected, answer.get_json()
