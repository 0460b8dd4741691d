"""The pure rules of review queues (domain/queues.py, issue 16): deterministic sampling, the
limits a queue's settings keep (which must agree with the database's own constraints, or a
value the service lets through would fail as a 500 at commit), and the filters a rule may
not hold."""

from __future__ import annotations

import hashlib
import re

import pytest

from reviewapp.domain.queues import (
    NAME_MAX,
    RESERVATION_DEFAULT_MINUTES,
    RESERVATION_MAX_MINUTES,
    REVIEWERS_MAX,
    REVIEWERS_MIN,
    in_sample,
    round_robin,
    sample_slot,
    top_up,
)
from reviewapp.errors import ValidationFailed
from reviewapp.models import ReviewQueue
from reviewapp.services.review_queues import clean_rule


def _slot(queue_id: int, run_pk: int) -> int:
    """The slot recomputed here: the first 8 bytes of SHA-256 of the two ids, big-endian,
    mod 100. The salt is part of the stored state: changing it re-samples every queue, so
    re-evaluating a rule would add and remove runs (issue 16)."""
    digest = hashlib.sha256(f"review-queue:{queue_id}:run:{run_pk}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % 100


def test_sample_slot_is_the_hash_of_both_ids():
    for queue_id, run_pk in [(1, 1), (1, 2), (2, 1), (7, 12345)]:
        assert sample_slot(queue_id, run_pk) == _slot(queue_id, run_pk)
    assert {sample_slot(1, pk) for pk in range(1, 2000)} == set(range(100))


def test_a_run_is_in_the_sample_exactly_when_its_slot_is_below_the_rate():
    by_slot = {}
    for pk in range(1, 2000):
        by_slot.setdefault(_slot(3, pk), pk)
    lowest, highest = by_slot[0], by_slot[99]
    assert in_sample(3, lowest, 1)  # slot 0 is in a 1 % sample
    assert not in_sample(3, by_slot[1], 1)  # slot 1 is not
    assert in_sample(3, by_slot[1], 2)
    assert not in_sample(3, highest, 99)  # slot 99 only in a 100 % sample
    assert in_sample(3, highest, 100)
    for pk in range(1, 300):
        assert in_sample(3, pk, 100)
        assert in_sample(3, pk, 40) == (_slot(3, pk) < 40)


def _check(column: str) -> tuple[int, int]:
    for constraint in ReviewQueue.__table__.constraints:
        text = str(getattr(constraint, "sqltext", ""))
        found = re.fullmatch(rf"{column} BETWEEN (\d+) AND (\d+)", text)
        if found:
            return int(found[1]), int(found[2])
    raise AssertionError(f"no CHECK on {column}")


def test_the_limits_are_issue_16s_and_agree_with_the_schema():
    # Issue 16: 1-5 reviewers per run, a reservation of 10 minutes by default.
    assert (REVIEWERS_MIN, REVIEWERS_MAX) == (1, 5) == _check("reviewers_per_run")
    assert RESERVATION_DEFAULT_MINUTES == 10
    assert _check("reservation_minutes") == (1, RESERVATION_MAX_MINUTES)
    assert ReviewQueue.__table__.c.reservation_minutes.default.arg == RESERVATION_DEFAULT_MINUTES
    assert ReviewQueue.__table__.c.name.type.length == NAME_MAX


@pytest.mark.parametrize("key", ["workspace", "sort", "reviewed"])
def test_a_rule_may_not_hold_the_workspace_the_sort_or_reviewed_by_me(key):
    with pytest.raises(ValidationFailed) as refused:
        clean_rule({key: "1"})
    assert refused.value.field == f"rule.{key}"
    assert refused.value.reason == "Not allowed in a queue's rule."  # a sentence (3d704ef)


def test_round_robin_deals_each_item_n_different_reviewers_in_turn():
    """Hand-dealt: pool [1, 2, 3], from deal 1, two reviewers each: item 0 gets positions
    1, 2 -> [2, 3]; item 1 positions (1 + 2) % 3 = 0, 1 -> [1, 2]."""
    from reviewapp.domain.queues import round_robin

    assert round_robin([1, 2, 3], 1, 2, 2) == [[2, 3], [1, 2]]
    assert round_robin([7], 0, 2, 5) == [[7], [7]]  # never more than the pool holds
    assert round_robin([], 3, 2, 2) == [[], []]  # nobody to deal to: one empty hand per item
    assert round_robin([1, 2], 0, 0, 1) == []


def test_who_reviews_and_how_items_reach_them_are_stored_codes_with_labels():
    """The codes are stored on the queue (``review_queue.reviewers`` / ``assignment``):
    changing one strands every queue saved with it; the labels are what the form shows."""
    from reviewapp.domain import queues

    assert (queues.REVIEWERS_ALL, queues.REVIEWERS_NAMED) == ("all", "named")
    assert queues.REVIEWER_SCOPES == {"all": "All reviewers of the workspace",
                                      "named": "Named reviewers"}
    assert (queues.ASSIGN_OPEN, queues.ASSIGN_ROUND_ROBIN, queues.ASSIGN_BY_HAND) == (
        "open", "round_robin", "by_hand")
    assert queues.ASSIGNMENT_MODES == {"open": "Open: whoever asks for the next item",
                                       "round_robin": "Assigned round-robin as items enter",
                                       "by_hand": "Assigned by a lead, item by item"}


def test_top_up_deals_items_that_lost_a_reviewer_the_missing_ones_in_turn():
    """A member removed: each of their items is dealt again from the queue's pool, in the
    round-robin's turn, to reviewers the item does not have yet (worked by hand)."""
    # One reviewer short of 2: the next in turn (1) is taken, one turn used.
    assert top_up([1, 2, 3], 0, [{2}], 2) == ([[1]], 1)
    # From turn 1: item 0 passes over 2 (it has them) and takes 3; item 1 takes 1 and 2.
    assert top_up([1, 2, 3], 1, [{2}, set()], 2) == ([[3], [1, 2]], 4)
    assert top_up([1, 2], 0, [{1, 2}], 2) == ([[]], 0)  # already full: no turn taken
    assert top_up([5], 0, [set()], 3) == ([[5]], 1)  # never more than the pool holds
    assert top_up([], 4, [{1}, set()], 2) == ([[], []], 0)  # nobody left to deal to


def test_round_robin_puts_who_has_not_rated_first_and_keeps_the_turn():
    pool = [1, 2, 3, 4]
    # Without ratings: as before, two a deal, from 0: (1, 2), (3, 4), (1, 2).
    assert round_robin(pool, 0, 3, 2, [set(), set(), set()]) == [[1, 2], [3, 4], [1, 2]]
    # 1 rated item 0, 3 and 4 rated item 1, everyone rated item 2: the next in turn who
    # has not, then (when too few have not) those who have, in turn.
    assert round_robin(pool, 0, 3, 2, [{1}, {3, 4}, {1, 2, 3, 4}]) == [[2, 3], [1, 2], [1, 2]]
    assert round_robin(pool, 1, 1, 3, [{3}]) == [[2, 4, 1]]


def test_top_up_puts_who_has_not_rated_first_and_counts_the_turns_walked():
    pool = [1, 2, 3]
    # Item 0 has 1 and needs one more: 1 is passed, 2 rated it, so 3 (three turns walked).
    # Item 1 (nobody yet, from turn 3) needs two: 1, 2.
    assert top_up(pool, 0, [{1}, set()], 2, [{2}, set()]) == ([[3], [1, 2]], 3 + 2)
    # Without ratings the same as before.
    assert top_up(pool, 0, [{1}, set()], 2, [set(), set()]) == top_up(pool, 0, [{1}, set()], 2)
    # Only raters left: they still fill the item, and every turn of the pool is walked.
    assert top_up(pool, 0, [{1}], 3, [{2, 3}]) == ([[2, 3]], 3)
