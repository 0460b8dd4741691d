"""Query-string / CLI parameter parsing shared by the filter classes of the services
(cases, triage, dashboard, exports). Values arrive as text; blank means "not set".
Every function raises ``ValidationFailed`` naming the parameter (SPEC 10)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, TypeVar

from ..domain.times import MAX_YEAR, MIN_YEAR, TimestampError, parse_timestamp
from ..errors import ValidationFailed
from ..models.base import MAX_ID

T = TypeVar("T")


class Refusals:
    """Every refused parameter of one parse, so a filter form names each bad field at
    once (new-user walk: only the first was named). ``read`` calls a parser and keeps its
    ``ValidationFailed`` (the first per field); ``check`` raises them as one error
    (``ValidationFailed.of``: ``problems`` maps field -> reason)."""

    def __init__(self) -> None:
        self.problems: dict[str, str] = {}

    def read(self, parse: Callable[..., T], *args: Any, **kwargs: Any) -> T | None:
        """``parse(*args, **kwargs)``, or ``None`` when it refused (kept)."""
        try:
            return parse(*args, **kwargs)
        except ValidationFailed as invalid:
            for field, reason in invalid.problems.items():
                self.add(field, reason)
            return None

    def add(self, field: str, reason: str) -> None:
        """Keep a refusal found by hand (across fields); a field's first reason stays."""
        self.problems.setdefault(field, reason)

    def check(self) -> None:
        """Raise ``ValidationFailed`` naming every kept refusal, if any."""
        if self.problems:
            raise ValidationFailed.of(self.problems)


def text_param(params: Mapping[str, Any], name: str, limit: int) -> str | None:
    """The stripped text of ``name`` (at most ``limit`` characters), or ``None`` if blank."""
    value = str(params.get(name) or "").strip()
    if len(value) > limit:
        raise ValidationFailed(name, f"at most {limit} characters")
    return value or None


def int_param(params: Mapping[str, Any], name: str, low: int, high: int,
              message: str | None = None) -> int | None:
    """A whole number in ``[low, high]``, or ``None`` if blank; ``message`` replaces the
    default refusal text."""
    value_in = params.get(name)
    raw = str(value_in if value_in is not None else "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ValidationFailed(name, message or "must be a whole number") from None
    if not low <= value <= high:
        raise ValidationFailed(name, message or f"must be between {low} and {high}")
    return value


def id_value(raw: Any, name: str, message: str = "must be an id") -> int | None:
    """A database row id (1 .. ``MAX_ID``: a larger number would overflow the database's
    integer, a 500 on SQLite and PostgreSQL alike) from a text or an int, or ``None`` if
    blank. Raises ``ValidationFailed`` naming ``name`` with ``message``."""
    return int_param({name: raw}, name, 1, MAX_ID, message)


def workspace_param(params: Mapping[str, Any], name: str = "workspace") -> int | None:
    """A workspace id (1 .. ``MAX_ID``: a larger number would overflow the database's
    integer), or ``None`` if blank. Whether the actor may see it is the caller's check."""
    return int_param(params, name, 1, MAX_ID, "must be a workspace id")


# A workspace's short name as ``services.admin`` accepts it (a shape check only: whether
# the actor has it is the list's check).
WORKSPACE_SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
WORKSPACE_SHAPE = "must be a workspace's number or its short name (e.g. demo)"


def workspace_ref(params: Mapping[str, Any], name: str = "workspace") -> int | str | None:
    """A list's workspace filter as typed: an id (digits, ``workspace_param``'s range) as
    ``int``, or a short name (slug, ``WORKSPACE_SLUG_RE``) as ``str``; ``None`` if blank.
    Raises ``ValidationFailed`` naming ``name`` (``WORKSPACE_SHAPE``, or "must be a
    workspace id" for an id out of range). Whether the actor has it is the list's check
    (``access.workspace_id_of``, ``no_workspace``): the runs, triage and case lists."""
    raw = str(params.get(name) or "").strip()
    if raw.isascii() and raw.isdigit():
        return workspace_param({name: raw}, name)
    if raw and not WORKSPACE_SLUG_RE.match(raw):
        raise ValidationFailed(name, WORKSPACE_SHAPE)
    return raw or None


def no_workspace(name: str | int) -> str:
    """Why a list's workspace filter (a short name or an id) is refused: the actor has no
    such workspace. The same words whether it exists or not (SPEC 2: a stranger's
    workspace is not told apart from none), on the runs, triage and case lists."""
    return f"you have no workspace '{name}'"


def date_param(params: Mapping[str, Any], name: str) -> date | None:
    """An ISO calendar day (``2026-11-30``) in the years data can have (2000-2100, as
    ``domain.times``: ``9999-12-31`` + 1 day would overflow), or ``None`` if blank."""
    raw = str(params.get(name) or "").strip()
    if not raw:
        return None
    try:
        day = date.fromisoformat(raw)
    except ValueError:
        raise ValidationFailed(name, "must be a date like 2026-11-30") from None
    if not MIN_YEAR <= day.year <= MAX_YEAR:
        raise ValidationFailed(name, f"must be a date in the years {MIN_YEAR}-{MAX_YEAR}")
    return day


def date_range_params(params: Mapping[str, Any]) -> tuple[date | None, date | None]:
    """``(date_from, date_to)``, inclusive days; ``date_from`` after ``date_to`` is refused."""
    date_from, date_to = date_param(params, "date_from"), date_param(params, "date_to")
    if date_from and date_to and date_from > date_to:
        raise ValidationFailed("date_from", "must not be after date_to")
    return date_from, date_to


def read_date_range(params: Mapping[str, Any], refused: Refusals) -> tuple[date | None, date | None]:
    """``date_range_params`` with each refusal kept in ``refused`` (a bad first day and a
    bad last day both named; a reversed range names ``date_from``), the refused days
    ``None``."""
    date_from = refused.read(date_param, params, "date_from")
    date_to = refused.read(date_param, params, "date_to")
    if date_from and date_to and date_from > date_to:
        refused.add("date_from", "must not be after date_to")
    return date_from, date_to


def choice_param(params: Mapping[str, Any], name: str, choices: Iterable[str]) -> str | None:
    """One of ``choices`` (exact), or ``None`` if blank."""
    value = str(params.get(name) or "").strip()
    if not value:
        return None
    allowed = tuple(choices)
    if value not in allowed:
        raise ValidationFailed(name, f"must be one of {', '.join(allowed)}")
    return value


def day_range(date_from: date | None, date_to: date | None) -> tuple[datetime | None, datetime | None]:
    """UTC ``[start, end)`` datetimes for inclusive calendar days ``date_from..date_to``."""
    start = datetime.combine(date_from, time.min, tzinfo=UTC) if date_from else None
    end = (datetime.combine(date_to, time.min, tzinfo=UTC) + timedelta(days=1)
           if date_to else None)
    return start, end


def timestamp_at(value: object, path: str) -> datetime | None:
    """``value`` (ISO 8601 or epoch seconds / ms) as an aware UTC datetime
    (``domain.times.parse_timestamp``), ``None`` when absent. Raises ``ValidationFailed``
    naming ``path`` (e.g. ``tool_calls[2].started_at``) with the reason alone."""
    try:
        return parse_timestamp(value, path)
    except TimestampError as exc:
        raise ValidationFailed(path, exc.reason) from None
