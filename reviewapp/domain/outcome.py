"""The run page's view of a run's external outcome (issue 14, SPEC 8): its label and the
detail a benchmark or verifier stored (reward, per-check results, missed expected
actions, other facts). Pure: stdlib only; capped so that no detail makes the page long."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_ITEMS = 50  # checks, missed actions and other facts shown, each
MAX_TEXT = 300  # characters of one shown value
SHOWN_KEYS = ("reward", "checks", "missed_actions", "source")


@dataclass(frozen=True)
class Check:
    """One check of the outcome: its name, whether it passed, an optional detail."""

    name: str
    passed: bool
    detail: str | None = None


@dataclass(frozen=True)
class OutcomeView:
    """``label`` as stored; ``source`` who judged; ``reward`` (number or None); ``checks``;
    ``missed_actions`` as short texts; ``facts`` the detail's other keys as (key, text);
    ``hidden`` how many items were left out by the caps."""

    label: str | None
    source: str | None = None
    reward: float | None = None
    checks: list[Check] = field(default_factory=list)
    missed_actions: list[str] = field(default_factory=list)
    facts: list[tuple[str, str]] = field(default_factory=list)
    hidden: int = 0

    @property
    def passed_checks(self) -> int:
        """How many checks passed."""
        return sum(1 for c in self.checks if c.passed)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"


def _action(value: Any) -> str:
    if isinstance(value, Mapping) and isinstance(value.get("name"), str):
        arguments = value.get("kwargs", value.get("arguments"))
        return value["name"] + (f"({_short(arguments)})" if arguments not in (None, {}) else "")
    return _short(value)


def outcome_view(label: str | None, detail: Any) -> OutcomeView | None:
    """The outcome of a run for its page, or ``None`` when it has neither label nor
    detail. ``detail`` is the stored ``external_outcome_detail`` (any JSON; a non-object
    is shown as one fact)."""
    if not label and not detail:
        return None
    if not isinstance(detail, Mapping):
        return OutcomeView(label, facts=[("detail", _short(detail))] if detail else [])
    hidden = 0
    reward = detail.get("reward")
    checks: list[Check] = []
    raw_checks = detail.get("checks") if isinstance(detail.get("checks"), list) else []
    for item in raw_checks[:MAX_ITEMS]:
        if isinstance(item, Mapping) and isinstance(item.get("passed"), bool):
            note = item.get("detail")
            checks.append(Check(_short(item.get("name", "check")), item["passed"],
                                _short(note) if note not in (None, "") else None))
    hidden += max(0, len(raw_checks) - MAX_ITEMS)
    raw_missed = detail.get("missed_actions") if isinstance(detail.get("missed_actions"), list) else []
    hidden += max(0, len(raw_missed) - MAX_ITEMS)
    others = [(str(k), v) for k, v in detail.items() if k not in SHOWN_KEYS]
    hidden += max(0, len(others) - MAX_ITEMS)
    return OutcomeView(
        label=label,
        source=_short(detail["source"]) if isinstance(detail.get("source"), str) else None,
        reward=reward if isinstance(reward, (int, float)) and not isinstance(reward, bool) else None,
        checks=checks,
        missed_actions=[_action(a) for a in raw_missed[:MAX_ITEMS]],
        facts=[(k, _short(v)) for k, v in others[:MAX_ITEMS]],
        hidden=hidden,
    )
