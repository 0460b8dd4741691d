"""``self_evaluation``: one JSON object, one key per source (SPEC 5, S001 §3).

::

    {"rule_evaluation": {...},        # the app: evidence score (SPEC 5.1)
     "verifier_evaluation": {...},    # the agent's verifier, imported as-is (SPEC 5.2)
     "aiops_rule_evaluation": {...},  # the app's AIOps checks (SPEC 5.3)
     "citation_gatekeeper": {...}}    # the app's citation gatekeeper (SPEC 5.4)

Each source writes only its own key (the database write is one atomic key update, see
``services/evaluations.py``); this module holds the pure side: legacy wrapping, reading
tolerantly, merging one key, and which keys a run document may import.

Legacy roots (S001 §3) are wrapped on read and on import: a root that holds
``evidence_score`` becomes ``rule_evaluation``; a root that holds ``verdict`` or
``groundedness_score`` becomes ``verifier_evaluation``. A root that holds both is split:
the rule fields (``RULE_FIELDS``) go to ``rule_evaluation``, the rest to
``verifier_evaluation``. Keys already in the new shape win over flat legacy fields.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .verdicts import VERIFIER_VERDICTS as VERIFIER_VERDICT_REGISTRY

RULE_KEY = "rule_evaluation"
VERIFIER_KEY = "verifier_evaluation"
AIOPS_KEY = "aiops_rule_evaluation"
GATEKEEPER_KEY = "citation_gatekeeper"
SOURCE_KEYS = (RULE_KEY, VERIFIER_KEY, AIOPS_KEY, GATEKEEPER_KEY)
# Keys a run document may bring with it. The gatekeeper is the app's alone; an imported
# rule_evaluation / aiops_rule_evaluation stands until the app computes its own (when the
# run is finished), see services/evaluations.py.
IMPORTABLE_KEYS = (RULE_KEY, VERIFIER_KEY, AIOPS_KEY)
RULE_FIELDS = frozenset({"evidence_score", "source", "factors", "llm_opinion"})
VERIFIER_MARKERS = ("verdict", "groundedness_score")
VERIFIER_VERDICTS = VERIFIER_VERDICT_REGISTRY.codes()


FINISHED_STATUSES = frozenset({"SUCCESS", "FAILED"})


def app_owned_keys(status: str, kind: str) -> frozenset[str]:
    """The keys the app computes itself for a run with execution ``status`` and ``kind``.

    ``citation_gatekeeper`` always; ``rule_evaluation`` once the run is finished (SUCCESS
    / FAILED, SPEC 5.1); ``aiops_rule_evaluation`` once an AIOps run is finished (SPEC
    5.3). An evaluation of one of these keys that arrives with a run document, or from an
    agent, is not stored: the app's own value replaces it. Before the run finishes (or,
    for ``aiops_rule_evaluation``, on a chat run) an imported value is kept as sent.
    """
    keys = {GATEKEEPER_KEY}
    if status in FINISHED_STATUSES:
        keys.add(RULE_KEY)
        if kind == "aiops":
            keys.add(AIOPS_KEY)
    return frozenset(keys)


def wrap_legacy(value: Any) -> dict[str, Any]:
    """``value`` in the keyed shape (module docstring). Never raises.

    ``None`` or a non-object -> ``{}``. Keyed entries that are not objects are dropped;
    other unknown keys are kept as they are (a newer writer may know them).
    """
    if not isinstance(value, Mapping):
        return {}
    if all(key in SOURCE_KEYS and isinstance(item, Mapping) for key, item in value.items()):
        return {key: dict(item) for key, item in value.items()}  # already keyed: the usual case
    out: dict[str, Any] = {}
    flat: dict[str, Any] = {}
    for key, item in value.items():
        if key in SOURCE_KEYS:
            if isinstance(item, Mapping):
                out[key] = dict(item)
        else:
            flat[key] = item
    has_rule = "evidence_score" in flat
    has_verifier = any(marker in flat for marker in VERIFIER_MARKERS)
    if has_rule and has_verifier:
        rule_part = {k: v for k, v in flat.items() if k in RULE_FIELDS}
        verifier_part = {k: v for k, v in flat.items() if k not in RULE_FIELDS}
        out.setdefault(RULE_KEY, rule_part)
        out.setdefault(VERIFIER_KEY, verifier_part)
    elif has_rule:
        out.setdefault(RULE_KEY, flat)
    elif has_verifier:
        out.setdefault(VERIFIER_KEY, flat)
    else:
        for key, item in flat.items():
            out.setdefault(key, item)
    return out


def read_self_evaluation(value: Any) -> dict[str, Any]:
    """A run's (or legacy session's) ``self_evaluation`` for pages and APIs: always a
    dict, legacy roots wrapped, possibly without some or all keys (scoring has not run or
    failed: SPEC 5). Tolerates ``None``, non-objects and keyed entries that are not
    objects."""
    return wrap_legacy(value)


def merge_key(current: Any, key: str, value: Mapping[str, Any] | None) -> dict[str, Any]:
    """``current`` (read tolerantly) with only ``key`` replaced by ``value``, or removed
    when ``value`` is None. Every other key is left as it was. Raises ``ValueError`` for a
    key that is not a source key. The pure model of the database's atomic key update."""
    if key not in SOURCE_KEYS:
        raise ValueError(f"unknown self_evaluation key {key!r}")
    merged = read_self_evaluation(current)
    if value is None:
        merged.pop(key, None)
    else:
        merged[key] = dict(value)
    return merged


def imported_evaluations(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The evaluations a run document brings, by key (``IMPORTABLE_KEYS`` only).

    Sources, later wins: ``doc["self_evaluation"]`` (keyed or a legacy root, wrapped),
    then the top-level ``doc["rule_evaluation"]`` / ``["verifier_evaluation"]`` /
    ``["aiops_rule_evaluation"]``. Values that are not objects (e.g. null) are ignored, so
    a document without an evaluation never removes a stored one.
    """
    found = {k: v for k, v in wrap_legacy(doc.get("self_evaluation")).items()
             if k in IMPORTABLE_KEYS and isinstance(v, Mapping)}
    for key in IMPORTABLE_KEYS:
        if isinstance(doc.get(key), Mapping):
            found[key] = dict(doc[key])
    if RULE_KEY in found:
        rule = _rule_as_published(found[RULE_KEY])
        if rule is None:
            del found[RULE_KEY]
        else:
            found[RULE_KEY] = rule
    return found


def _rule_as_published(value: Mapping[str, Any]) -> dict[str, Any] | None:
    """An imported ``rule_evaluation`` in the shape the app's own has (SPEC 5.1, the trace
    API's schema): ``evidence_score`` an int in [0, 100] (``evidence_score_of``), ``source``
    "rule", ``factors`` a list of ``{name: str, delta: int, description: str}``; non-object
    factors are dropped. None when the score is not a number (nothing to keep)."""
    score = evidence_score_of(value)
    if score is None:
        return None
    factors = value.get("factors")
    return {**value, "evidence_score": score, "source": "rule",
            "factors": [_factor(f) for f in factors if isinstance(f, Mapping)]
            if isinstance(factors, list) else []}


def _factor(value: Mapping[str, Any]) -> dict[str, Any]:
    name, delta, description = value.get("name"), value.get("delta"), value.get("description")
    return {**value, "name": name if isinstance(name, str) else "",
            "delta": int(delta) if isinstance(delta, (int, float))
            and not isinstance(delta, bool) and math.isfinite(delta) else 0,
            "description": description if isinstance(description, str) else ""}


def evidence_score_of(rule_evaluation: Any) -> int | None:
    """``rule_evaluation["evidence_score"]`` as an int clamped to [0, 100], else None
    (the value of the run-list column ``diagnosis_run.evidence_score``)."""
    score = rule_evaluation.get("evidence_score") if isinstance(rule_evaluation, Mapping) else None
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        return None
    return min(100, max(0, int(score)))


def verifier_verdict_of(verifier_evaluation: Any) -> str | None:
    """``verifier_evaluation["verdict"]`` when it is one of ``VERIFIER_VERDICTS``, else
    None (the value of the run-list column ``diagnosis_run.verifier_verdict``; an unknown
    verdict stays readable in the JSON)."""
    verdict = (verifier_evaluation.get("verdict")
               if isinstance(verifier_evaluation, Mapping) else None)
    return verdict if verdict in VERIFIER_VERDICTS else None


# The run-list column each key keeps in sync, and how its value is derived.
COLUMN_OF_KEY = {RULE_KEY: ("evidence_score", evidence_score_of),
                 VERIFIER_KEY: ("verifier_verdict", verifier_verdict_of)}
