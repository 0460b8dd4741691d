"""Flask's signed-cookie session and the JSON API's CSRF header, with each signed string
verified once per process.

Flask's ``SecureCookieSessionInterface`` builds a new ``URLSafeTimedSerializer`` (and
its signer) twice per request, to read the cookie and to write it, and Flask-WTF's
``validate_csrf`` builds one per call; each then checks the HMAC of a string the browser
sends unchanged on every request. Here the serializers are built once per key set and
remember the signed strings they have verified (``VerifiedTimedSerializer``): a string
seen before skips the HMAC, never the age check, and each load hands out a payload of
its own (no shared mutable value: a plain one, such as a login session's flat dict, is
kept parsed and copied; any other is parsed again). A string that differs in any byte — a tampered cookie
or token — is not in the memory and gets the full check, so it still fails; a new key
set starts with an empty memory, so a rotated-out key's strings are checked again.

An unchanged session is not written back (as Flask does); its ``Vary: Cookie`` is added
without Werkzeug's parse and re-serialisation of the ``Vary`` header.
"""

from __future__ import annotations

import hmac
import threading
import time
import zlib
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

from flask import Flask, Response, current_app, session
from flask.sessions import SecureCookieSessionInterface, SessionMixin
from itsdangerous import BadData, BadSignature, SignatureExpired, URLSafeTimedSerializer
from itsdangerous.encoding import base64_decode, want_bytes
from itsdangerous.url_safe import URLSafeSerializerMixin
from wtforms.validators import ValidationError

VERIFIED_STRINGS_MAX = 4096  # signed strings each serializer remembers (least recently used go)


class VerifiedTimedSerializer(URLSafeTimedSerializer):
    """``URLSafeTimedSerializer`` whose ``loads`` remembers the signed strings whose
    signature it has checked (at most ``VERIFIED_STRINGS_MAX``, least recently used
    dropped). A remembered string skips the HMAC; its age is checked against ``max_age``
    every time (``SignatureExpired`` as itsdangerous raises it). Each load hands out a
    payload nobody else holds: a plain one (``_plain``: a string, number, boolean or
    ``None``, or a flat dict of them — a login session, a CSRF token) is remembered
    parsed and given as itself (immutable) or as a new dict; any other is parsed from
    its JSON every time (the base64 / zlib layers remembered decoded). Any other string
    (another byte, another key) is checked in full and raises ``BadSignature`` /
    ``SignatureExpired`` / ``BadPayload`` like the parent. Calls with an explicit
    ``salt`` are not remembered."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # signed string -> (its JSON bytes, its timestamp, its payload if plain else _NOT_PLAIN)
        self._verified: OrderedDict[bytes, tuple[bytes, int, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def loads(self, s: str | bytes, max_age: int | None = None,  # type: ignore[override]
              return_timestamp: bool = False, salt: str | bytes | None = None) -> Any:
        if salt is not None:
            return super().loads(s, max_age=max_age, return_timestamp=return_timestamp, salt=salt)
        signed = want_bytes(s)
        with self._lock:
            hit = self._verified.get(signed)
            if hit is not None:
                self._verified.move_to_end(signed)
        if hit is None:
            base64d, stamp = self._unsign(signed, max_age)
            payload = self.load_payload(base64d)  # a bad payload is not remembered
            plain = _plain(payload)
            with self._lock:
                self._verified[signed] = (_undo_transport(base64d), stamp, plain)
                if len(self._verified) > VERIFIED_STRINGS_MAX:
                    self._verified.popitem(last=False)
        else:
            decoded, stamp, plain = hit
            _check_age(signed, stamp, max_age)
            if plain is _NOT_PLAIN:
                # The JSON layer only: ``URLSafeSerializerMixin.load_payload`` undid the rest.
                payload = super(URLSafeSerializerMixin, self).load_payload(decoded)
            else:
                payload = dict(plain) if type(plain) is dict else plain
        if return_timestamp:
            return payload, self.make_signer().timestamp_to_datetime(stamp)
        return payload

    def _unsign(self, signed: bytes, max_age: int | None) -> tuple[bytes, int]:
        """The full check of ``TimedSerializer.loads``: each key (fallbacks too) in turn;
        an expired signature stops at once."""
        last: BadSignature | None = None
        for signer in self.iter_unsigners():
            try:
                base64d, when = signer.unsign(signed, max_age=max_age, return_timestamp=True)
            except SignatureExpired:
                raise
            except BadSignature as exc:
                last = exc
                continue
            return base64d, int(when.timestamp())
        assert last is not None  # there is always at least one key
        raise last


_NOT_PLAIN = object()
_SCALARS = frozenset((str, int, float, bool, type(None)))


def _plain(payload: Any) -> Any:
    """What ``VerifiedTimedSerializer`` keeps of a parsed payload: a string, number,
    boolean or ``None`` as it is (immutable); a dict of string keys to such values as a
    copy of its own (each load hands out a new dict: a request may change its session);
    anything else (a list, a nested dict, a tagged value such as bytes or a datetime)
    ``_NOT_PLAIN``, parsed from its JSON on every load. Exact types only: a ``Markup``
    (a ``str`` subclass Flask's tags restore) is not plain."""
    kind = type(payload)
    if kind in _SCALARS:
        return payload
    if kind is dict and all(type(key) is str and type(value) in _SCALARS
                            for key, value in payload.items()):
        return dict(payload)
    return _NOT_PLAIN


def _undo_transport(base64d: bytes) -> bytes:
    """The serialized bytes inside a payload that ``URLSafeSerializerMixin.load_payload``
    has just read without error: base64, and zlib when it starts with ``.``."""
    if base64d.startswith(b"."):
        return zlib.decompress(base64_decode(base64d[1:]))
    return base64_decode(base64d)


def _check_age(value: bytes, stamp: int, max_age: int | None) -> None:
    """``TimestampSigner.unsign``'s age rule: older than ``max_age`` seconds, or signed in
    the future, raises ``SignatureExpired``."""
    if max_age is None:
        return
    age = int(time.time()) - stamp
    signed_at = datetime.fromtimestamp(stamp, tz=UTC)
    if age > max_age:
        raise SignatureExpired(f"Signature age {age} > {max_age} seconds", payload=value,
                               date_signed=signed_at)
    if age < 0:
        raise SignatureExpired(f"Signature age {age} < 0 seconds", payload=value,
                               date_signed=signed_at)


class CachedSerializerSessionInterface(SecureCookieSessionInterface):
    """``SecureCookieSessionInterface`` reusing one ``VerifiedTimedSerializer`` while the
    keys (``SECRET_KEY``, ``SECRET_KEY_FALLBACKS``) stay the same: same keys, salt,
    digest and format as Flask's."""

    def __init__(self) -> None:
        self._cached: tuple[Any, URLSafeTimedSerializer | None] | None = None

    def get_signing_serializer(self, app: Flask) -> URLSafeTimedSerializer | None:
        fallbacks = app.config["SECRET_KEY_FALLBACKS"]
        key = (app.secret_key, tuple(fallbacks) if fallbacks else ())
        cached = self._cached
        if cached is not None and cached[0] == key:
            return cached[1]
        serializer = None
        if app.secret_key:
            serializer = VerifiedTimedSerializer(
                [*key[1], app.secret_key], salt=self.salt, serializer=self.serializer,
                signer_kwargs={"key_derivation": self.key_derivation,
                               "digest_method": self.digest_method},
            )
        self._cached = (key, serializer)
        return serializer

    def save_session(self, app: Flask, session: SessionMixin, response: Response) -> None:
        """Flask's ``save_session`` when there is a cookie to write or delete; else (the
        session unchanged, the usual request) only its ``Vary: Cookie`` when the session
        was read, added without parsing and re-serialising the ``Vary`` header
        (``response.vary``): the same headers, for a fraction of the cost."""
        if session.modified or (session and self.should_set_cookie(app, session)):
            super().save_session(app, session, response)
        elif session.accessed:
            add_vary_cookie(response)


def add_vary_cookie(response: Response) -> None:
    """``response.vary.add("Cookie")``: a response without a ``Vary`` header gets
    ``Vary: Cookie`` set directly; one with a header goes through Werkzeug's set (which
    keeps the other values and adds ``Cookie`` once)."""
    if "Vary" in response.headers:
        response.vary.add("Cookie")
    else:
        response.headers["Vary"] = "Cookie"


_csrf_serializers: dict[Any, VerifiedTimedSerializer] = {}


def validate_csrf_token(data: str | None) -> None:
    """Flask-WTF's ``validate_csrf`` for the JSON API's ``X-CSRFToken`` header, with the
    same configuration (``WTF_CSRF_SECRET_KEY`` or ``SECRET_KEY``, ``WTF_CSRF_FIELD_NAME``,
    ``WTF_CSRF_TIME_LIMIT`` seconds, default 3600; None: no limit) and the same errors,
    through a ``VerifiedTimedSerializer`` kept per secret key: the token must be signed
    by the key, within the time limit, and equal to this session's token (compared on
    every call). Raises ``wtforms.ValidationError`` naming the failure."""
    config = current_app.config
    secret_key = config.get("WTF_CSRF_SECRET_KEY") or current_app.secret_key
    if not secret_key:
        raise RuntimeError("A secret key is required to use CSRF.")
    field_name = config.get("WTF_CSRF_FIELD_NAME", "csrf_token")
    time_limit = config.get("WTF_CSRF_TIME_LIMIT", 3600)
    if not data:
        raise ValidationError("The CSRF token is missing.")
    login_session = session._get_current_object()  # one context lookup for both uses
    if field_name not in login_session:
        raise ValidationError("The CSRF session token is missing.")
    serializer = _csrf_serializers.get(secret_key)
    if serializer is None:
        serializer = _csrf_serializers[secret_key] = VerifiedTimedSerializer(
            secret_key, salt="wtf-csrf-token")
        while len(_csrf_serializers) > 8:  # keys of apps made and dropped (tests)
            del _csrf_serializers[next(iter(_csrf_serializers))]
    try:
        token = serializer.loads(data, max_age=time_limit)
    except SignatureExpired as exc:
        raise ValidationError("The CSRF token has expired.") from exc
    except BadData as exc:
        raise ValidationError("The CSRF token is invalid.") from exc
    if not isinstance(token, str) or not hmac.compare_digest(login_session[field_name], token):
        raise ValidationError("The CSRF tokens do not match.")
