"""Typed service errors with the product's stable codes (SPEC 2, 6, 9; STYLE 7.6).

Services raise these; ``web`` and ``api`` map them once, to an HTML page / fragment or
to ``{"error": {"code", "message"}}`` with the error's HTTP status.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class ServiceError(Exception):
    """Base of every error a service raises on purpose.

    ``code`` is the stable machine code, ``status`` the HTTP status the edge answers
    with, ``details`` optional extra JSON-able data (e.g. the current state on 409).
    """

    code = "SYSTEM_ERROR"
    status = 500

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        """The JSON error body: ``{"error": {"code", "message"[, "details"]}}``."""
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            body["details"] = self.details
        return {"error": body}


class ValidationFailed(ServiceError):
    """Bad input: ``VALIDATION_INVALID_ARGUMENT``, HTTP 400. ``field`` names the path,
    ``reason`` says what is wrong with it; ``message`` is "field: reason". ``problems``
    maps every refused field to its reason (``{field: reason}`` for one; ``of`` builds
    one error for several, reported at once)."""

    code = "VALIDATION_INVALID_ARGUMENT"
    status = 400

    def __init__(self, field: str, message: str, *, details: Any = None) -> None:
        super().__init__(f"{field}: {message}" if field else message, details=details)
        self.field = field
        self.reason = message
        self.problems: dict[str, str] = {field: message}

    @classmethod
    def worded(cls, field: str, reason: str, sentence: str) -> ValidationFailed:
        """One refusal whose ``message`` is ``sentence``: plain words an error page shows as
        they are, with no field code ("This form expired: ...", not "csrf_token: ...");
        ``field`` / ``reason`` / ``problems`` as ``ValidationFailed(field, reason)``."""
        error = cls(field, reason)
        error.message = sentence
        error.args = (sentence,)
        return error

    @classmethod
    def of(cls, problems: Mapping[str, str]) -> ValidationFailed:
        """One error for every refused field of ``problems`` (field -> reason, at least
        one): ``field`` / ``reason`` are the first, ``message`` lists them all ("a: …;
        b: …"), ``details`` is ``{"fields": problems}`` when there are several. Raises
        ``ValueError`` for an empty mapping."""
        if not problems:
            raise ValueError("no problems to report")
        (field, reason), *rest = problems.items()
        error = cls(field, reason, details={"fields": dict(problems)} if rest else None)
        if rest:
            error.message = "; ".join(f"{f}: {r}" for f, r in problems.items())
            error.args = (error.message,)
        error.problems = dict(problems)
        return error


# One message for "missing" and "not yours": nothing may tell them apart (SPEC 2).
FORBIDDEN_MESSAGE = "The target does not exist or you do not have access to it."


class Forbidden(ServiceError):
    """``AUTH_FORBIDDEN``, HTTP 403, always the same body (SPEC 2)."""

    code = "AUTH_FORBIDDEN"
    status = 403

    def __init__(self) -> None:
        super().__init__(FORBIDDEN_MESSAGE)


class PasswordChangeRequired(ServiceError):
    """A logged-in user whose password an admin chose (a new account, a reset) acts only
    to change it (SPEC 8): ``AUTH_PASSWORD_CHANGE_REQUIRED``, HTTP 403. Pages send the
    user to their account page instead; the JSON API answers with this error."""

    code = "AUTH_PASSWORD_CHANGE_REQUIRED"
    status = 403

    def __init__(self) -> None:
        super().__init__("Change your password first: an admin set it. "
                         "Your account page (/account/) has the form.")


class Unauthenticated(ServiceError):
    """No or bad credentials: ``AUTH_UNAUTHENTICATED``, HTTP 401."""

    code = "AUTH_UNAUTHENTICATED"
    status = 401


class CsrfInvalid(ServiceError):
    """A logged-in browser session sent a state change without a valid CSRF token:
    ``CSRF_INVALID``, HTTP 400 (as the HTML pages answer; the caller is logged in, so
    401 would wrongly ask them to log in)."""

    code = "CSRF_INVALID"
    status = 400


class Conflict(ServiceError):
    """A stale or contradicting write: ``CONFLICT``, HTTP 409; ``details`` holds the current state."""

    code = "CONFLICT"
    status = 409


class PayloadTooLarge(ServiceError):
    """``PAYLOAD_TOO_LARGE``, HTTP 413."""

    code = "PAYLOAD_TOO_LARGE"
    status = 413


class UnsupportedMediaType(ServiceError):
    """A body in a content type or encoding the route does not read:
    ``UNSUPPORTED_MEDIA_TYPE``, HTTP 415 (OTLP/HTTP)."""

    code = "UNSUPPORTED_MEDIA_TYPE"
    status = 415


class Unavailable(ServiceError):
    """Storage or a dependency is down: ``SYSTEM_UNAVAILABLE``, HTTP 503. Never a fake success."""

    code = "SYSTEM_UNAVAILABLE"
    status = 503

    def __init__(self, message: str = "Storage is unavailable; nothing was saved. Try again.") -> None:
        super().__init__(message)
