"""Package-private: a review queue's settings checked and cleaned (issue 16 "Review
queues"), every refused field collected so a form can show them all at once, and the
rule that a queue asks no more reviewers per run than people may review it.

``validate`` checks the keys given (a create passes every setting, an edit the changed
ones) and the rules across them, against the queue as it stands for an edit; it returns
the cleaned values and ``{field: reason}`` of what it refused (``rule.<filter>`` for a
rule's filter). Nothing here checks access or writes: ``review_queues`` did and does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from ..domain.consensus import DISPUTE_RULES
from ..domain.queues import (
    ASSIGNMENT_MODES,
    NAME_MAX,
    RESERVATION_MAX_MINUTES,
    REVIEWER_SCOPES,
    REVIEWERS_ALL,
    REVIEWERS_MAX,
    REVIEWERS_MIN,
    REVIEWERS_NAMED,
    RULE_FORBIDDEN,
)
from ..errors import ValidationFailed
from ..models import ReviewQueue
from .params import id_value
from .queue_assignment import named as named_reviewers
from .queue_assignment import who, workspace_reviewers
from .runs.listing import RunFilters

RULE_KEYS = ("kind", "status", "verdict", "feedback", "score_min", "score_max", "outcome", "q",
             "failed_calls")
# Every reason here is shown beside its field on the queue form: a sentence (capital,
# full stop), as the form's own checks say theirs (new-user walk).
NOT_IDS = "Named reviewers must be user ids."


def clean_rule(rule: Any) -> dict[str, str]:
    """A rule as stored: the runs-list filters of ``rule`` (a mapping of query-string
    values) in their canonical form. Raises ``ValidationFailed`` naming ``rule.<field>``
    for a bad value, an unknown filter, or one a rule may not hold (workspace, sort,
    reviewed)."""
    if rule is None:
        return {}
    if not isinstance(rule, Mapping):
        raise ValidationFailed("rule", "Must be an object of runs-list filters.")
    for key in rule:
        if key in RULE_FORBIDDEN:
            raise ValidationFailed(f"rule.{key}", "Not allowed in a queue's rule.")
        if key not in RULE_KEYS:
            raise ValidationFailed(f"rule.{key}", f"Unknown filter (one of {', '.join(RULE_KEYS)}).")
    try:
        filters = RunFilters.from_params({k: "" if v is None else str(v) for k, v in rule.items()})
    except ValidationFailed as invalid:
        raise ValidationFailed(f"rule.{invalid.field}", _sentence(invalid.reason)) from None
    return {k: v for k, v in filters.as_params().items() if k in RULE_KEYS}


def _sentence(reason: str) -> str:
    """A runs-list filter's reason (a fragment that follows its label there, "must not be
    below the minimum score") as the queue form shows it beside the field: a sentence."""
    text = reason[:1].upper() + reason[1:]
    return text if text.endswith(".") else text + "."


def _whole(field: str, low: int, high: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValidationFailed(field, f"Must be a whole number from {low} to {high}.")
        return value
    return check


def _name(value: Any) -> str:
    text = value.strip() if isinstance(value, str) else ""
    if not text or len(text) > NAME_MAX:
        raise ValidationFailed("name", f"Must be 1 to {NAME_MAX} characters.")
    return text


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValidationFailed("blind", "Must be true or false.")
    return value


def _one_of(field: str, vocabulary: Iterable[str]) -> Callable[[Any], str]:
    allowed = tuple(vocabulary)

    def check(value: Any) -> str:
        if value not in allowed:
            raise ValidationFailed(field, f"Must be one of {', '.join(allowed)}.")
        return value
    return check


CHECKS: dict[str, Callable[[Any], Any]] = {
    "name": _name, "rule": clean_rule,
    "sample_percent": _whole("sample_percent", 1, 100),
    "reviewers_per_run": _whole("reviewers_per_run", REVIEWERS_MIN, REVIEWERS_MAX),
    "blind": _flag,
    "reservation_minutes": _whole("reservation_minutes", 1, RESERVATION_MAX_MINUTES),
    "reviewers": _one_of("reviewers", REVIEWER_SCOPES),
    "assignment": _one_of("assignment", ASSIGNMENT_MODES),
    "dispute_rule": _one_of("dispute_rule", DISPUTE_RULES.codes()),
}


def _named(session: Session, ws_id: int, value: Any, members: set[int]) -> list[int]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ValidationFailed("named", "Named reviewers must be a list of user ids.")
    ids = [id_value(v, "named", NOT_IDS) for v in value]
    if None in ids:
        raise ValidationFailed("named", NOT_IDS)
    strangers = [i for i in ids if i not in members]
    if strangers:
        raise ValidationFailed("named", "Only reviewers of the queue's workspace can be named "
                               f"(not: {who(session, ws_id, strangers)}).")
    return list(dict.fromkeys(i for i in ids if i is not None))


@dataclass(frozen=True)
class Pool:
    """Who may review a queue as set: ``scope`` (all | named), the ``named`` user ids."""

    scope: str
    named: tuple[int, ...]

    def able(self, members: set[int]) -> int:
        """How many people may review: the workspace's active reviewers (and above), or
        the named ones among them (a named reviewer who left counts no more)."""
        return len(members) if self.scope != REVIEWERS_NAMED else \
            len([i for i in self.named if i in members])


def capacity_reason(needed: int, able: int, scope: str) -> str:
    """Why ``needed`` reviewers per run cannot be met by ``able`` people."""
    who = (f"{able} named reviewer{'' if able == 1 else 's'}" if scope == REVIEWERS_NAMED
           else f"{able} member{'' if able == 1 else 's'} of the workspace")
    return (f"asks {needed} reviewer{'' if needed == 1 else 's'} per run, but only {who} may review it: "
            "its items could never complete")


def validate(session: Session, ws_id: int, values: Mapping[str, Any],
             queue: ReviewQueue | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """(the cleaned values of ``values``' keys, ``named`` as ``_named`` user ids;
    ``{field: reason}`` of every refusal). Across fields: a named queue names someone;
    ``reviewers_per_run`` is at most the people who may review — for an edit (``queue``)
    only when it asks more, or its pool shrinks, than the queue as it stands."""
    members = {i for i, _ in workspace_reviewers(session, ws_id)}
    out: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for field, value in values.items():
        try:
            if field == "named":
                out["_named"] = _named(session, ws_id, value, members)
            else:
                out[field] = CHECKS[field](value)
        except ValidationFailed as invalid:
            problems.setdefault(invalid.field, invalid.reason)
    if not any(f in problems for f in ("reviewers", "named", "reviewers_per_run")):
        problems.update(_across(session, out, queue, members))
    return out, problems


def _across(session: Session, out: Mapping[str, Any], queue: ReviewQueue | None,
            members: set[int]) -> dict[str, str]:
    before = Pool(queue.reviewers, tuple(named_reviewers(session, queue.id))) if queue else None
    pool = Pool(out.get("reviewers", before.scope if before else REVIEWERS_ALL),
                tuple(out["_named"]) if "_named" in out else (before.named if before else ()))
    if pool.scope == REVIEWERS_NAMED and not pool.named:
        return {"named": "Name at least one reviewer, or let all review."}
    needed = out.get("reviewers_per_run", queue.reviewers_per_run if queue else REVIEWERS_MIN)
    able = pool.able(members)
    if needed <= able:
        return {}
    if before is not None and needed <= queue.reviewers_per_run and able >= before.able(members):
        return {}  # already short (people left): an edit that asks no more may save
    return {"reviewers_per_run": f"This queue {capacity_reason(needed, able, pool.scope)}."}
