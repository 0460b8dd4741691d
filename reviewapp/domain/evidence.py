"""The evidence score: ``rule_evaluation`` (SPEC 5.1, S000 §2, S001 §4).

Measures how well the agent *collected evidence*, not whether its answer is right.
Deterministic and table-driven: ``RULES`` is an ordered tuple of named rules, each a
``(name, predicate, delta, describe, stop)`` row over ``CallStats`` (counts computed once
from the run's tool calls); ``RULES_BY_NAME`` is the registry for choosing rules by name.
The score starts at 0, every rule that holds adds its delta and a factor, a ``stop`` rule
ends the evaluation with score 0, and the result is clamped to [0, 100].

The seeds' boundary "non-retrieval tools are invisible to scoring" (S000, known limits) is
lifted here: every tool call is audited (SPEC 4), so every tool call counts, retrieval or
not (SPEC 5.1, last paragraph).

Definitions used by the rules (they are not spelled out in the spec, so here they are):

* a *successful* call has status ``completed``; a *failed* call ``failed``; a call with no
  end event (``started``) is neither;
* a *retrieval* call is a call that carries retrieval facts (a ``match_level``, a
  ``hit_count`` or an ``evidence_refs`` list, even an empty one);
* a call *has a hit* when its ``match_level`` is ``L0`` or ``L1`` and its ``hit_count`` is
  not 0 (unknown counts are trusted), or when its ``hit_count`` is above 0;
* an *L0 hit* is a hit with ``match_level`` ``L0``; an *L1 hit* one with ``L1``. The spec
  says "any call has an L0 hit", so a hit counts whatever the call's status.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

SCORED_STATUSES = frozenset({"SUCCESS", "FAILED"})
SCORE_MIN, SCORE_MAX = 0, 100


class ToolCallFact(NamedTuple):
    """What the evidence score needs to know about one tool call.

    ``status``: ``started`` | ``completed`` | ``failed``; ``match_level``: ``L0`` | ``L1`` |
    None; ``hit_count``: int | None; ``retrieval``: the call carries retrieval facts.
    """

    status: str
    match_level: str | None = None
    hit_count: int | None = None
    retrieval: bool = False


class CallStats(NamedTuple):
    """Counts over a run's tool calls, computed once and read by every rule."""

    status: str
    total: int
    completed: int
    failed: int
    retrieval: int
    retrieval_with_hit: int
    l0_hits: int
    l1_hits: int


def call_stats(status: str, calls: Iterable[ToolCallFact]) -> CallStats:
    """Count ``calls`` (any iterable of ``ToolCallFact`` or equal 4-tuples) for the rules."""
    total = completed = failed = retrieval = with_hit = l0 = l1 = 0
    for call_status, level, hits, is_retrieval in calls:
        total += 1
        if call_status == "completed":
            completed += 1
        elif call_status == "failed":
            failed += 1
        if level is not None or hits is not None:
            is_retrieval = True
            if hits is None or hits > 0:
                if level == "L0":
                    l0 += 1
                    with_hit += 1
                elif level == "L1":
                    l1 += 1
                    with_hit += 1
                elif hits is not None:
                    with_hit += 1
        if is_retrieval:
            retrieval += 1
    return CallStats(status, total, completed, failed, retrieval, with_hit, l0, l1)


class Rule(NamedTuple):
    """One row of the rule table: when ``predicate`` holds, add ``delta`` and a factor
    whose description is ``describe(stats)``; a ``stop`` rule ends scoring at 0."""

    name: str
    predicate: Callable[[CallStats], bool]
    delta: int
    describe: Callable[[CallStats], str]
    stop: bool = False


# In the spec's order (SPEC 5.1). L0 and L1 are mutually exclusive: L1 only without L0.
RULES: tuple[Rule, ...] = (
    Rule("execution_failed", lambda s: s.status == "FAILED", 0,
         lambda s: f"run status: FAILED (tool calls: {s.total})", stop=True),
    Rule("no_tool_call", lambda s: s.total == 0, 0,
         lambda s: "tool calls: 0", stop=True),
    Rule("has_successful_tool_call", lambda s: s.completed > 0, 30,
         lambda s: f"successful tool calls: {s.completed}"),
    Rule("l0_exact_match", lambda s: s.l0_hits > 0, 35,
         lambda s: f"calls with an L0 exact hit: {s.l0_hits}"),
    Rule("l1_semantic_match", lambda s: s.l0_hits == 0 and s.l1_hits > 0, 20,
         lambda s: f"calls with an L1 semantic hit: {s.l1_hits} (no L0 hit)"),
    Rule("retrieval_no_hit", lambda s: s.retrieval > 0 and s.retrieval_with_hit == 0, -10,
         lambda s: f"retrieval calls without a hit: {s.retrieval}"),
    Rule("all_tool_calls_failed", lambda s: s.total > 0 and s.failed == s.total, -20,
         lambda s: f"failed tool calls: {s.failed} of {s.total}"),
)
RULES_BY_NAME: Mapping[str, Rule] = {rule.name: rule for rule in RULES}


def evaluate_stats(stats: CallStats, rules: tuple[Rule, ...] = RULES) -> dict[str, Any]:
    """Apply ``rules`` in order to ``stats``; the ``rule_evaluation`` value (SPEC 5.1):
    ``{"evidence_score": int 0-100, "source": "rule", "factors": [{name, delta,
    description}]}``. ``llm_opinion`` is reserved and never written."""
    score = 0
    factors: list[dict[str, Any]] = []
    for rule in rules:
        if not rule.predicate(stats):
            continue
        factors.append({"name": rule.name, "delta": rule.delta,
                        "description": rule.describe(stats)})
        if rule.stop:
            score = 0
            break
        score += rule.delta
    return {
        "evidence_score": min(SCORE_MAX, max(SCORE_MIN, score)),
        "source": "rule",
        "factors": factors,
    }


def score_evidence(
    status: str, calls: Iterable[ToolCallFact], rules: tuple[Rule, ...] = RULES
) -> dict[str, Any] | None:
    """The ``rule_evaluation`` of a run with execution ``status`` and tool ``calls``.

    Returns ``None`` for a run that is not finished (``RUNNING``): it is scored when it
    reaches ``SUCCESS`` or ``FAILED`` (SPEC 5.1). The order of ``calls`` never matters.
    Example: 20 completed calls, one of them an L0 hit -> 65 with the factors
    ``has_successful_tool_call`` (+30, "successful tool calls: 20") and
    ``l0_exact_match`` (+35).
    """
    if status not in SCORED_STATUSES:
        return None
    return evaluate_stats(call_stats(status, calls), rules)
