"""Pure rules of the review queues (issue 16 "Review queues"). Stdlib only.

Sampling is deterministic per (queue, run): whether a run is in a queue's sample depends on
nothing but the two ids and the rate, so re-evaluating a rule never adds or removes a
run, and a run that matched once matches again when the rule is applied to it anew.
"""

from __future__ import annotations

import hashlib

REVIEWERS_MIN, REVIEWERS_MAX = 1, 5
RESERVATION_DEFAULT_MINUTES = 10
RESERVATION_MAX_MINUTES = 240
NAME_MAX = 120
# Filters of the runs list a rule may not hold: the workspace is the queue's own, the
# sort does not select, and "reviewed by me" depends on who asks.
RULE_FORBIDDEN = ("workspace", "sort", "reviewed")

# Who may review a queue: every reviewer (or lead) of its workspace, or the named ones.
REVIEWERS_ALL, REVIEWERS_NAMED = "all", "named"
REVIEWER_SCOPES = {REVIEWERS_ALL: "All reviewers of the workspace",
                   REVIEWERS_NAMED: "Named reviewers"}

# How items reach reviewers: whoever asks next (open), or assigned to reviewers who may
# review it — dealt round-robin as items enter, or by a lead per item.
ASSIGN_OPEN, ASSIGN_ROUND_ROBIN, ASSIGN_BY_HAND = "open", "round_robin", "by_hand"
ASSIGNMENT_MODES = {ASSIGN_OPEN: "Open: whoever asks for the next item",
                    ASSIGN_ROUND_ROBIN: "Assigned round-robin as items enter",
                    ASSIGN_BY_HAND: "Assigned by a lead, item by item"}


def _rated_last(turn: list[int], rated: set[int]) -> list[int]:
    """``turn`` (reviewers in turn order) with those in ``rated`` moved to the end, each
    part in its turn order."""
    return [p for p in turn if p not in rated] + [p for p in turn if p in rated]


def round_robin(pool: list[int], start: int, items: int, per_item: int,
                rated: list[set[int]] | None = None) -> list[list[int]]:
    """Deal ``items`` items to the ``pool`` (user ids, in order), ``per_item`` different
    reviewers each (at most the pool's size), continuing from deal number ``start``.
    Item k's turn is the pool from position ``(start + k * n) % len(pool)`` on, n =
    min(per_item, len(pool)); it gets the first n of that turn who have not rated its run
    (``rated[k]``: user ids; ``None``: nobody rated), then, when too few have not, the
    first who have. Without ratings: the reviewers at positions ``(start + k * n + j) %
    len(pool)`` for j < n. Every item takes n deals whoever it gets, so the turn (and
    ``queue.dealt``) goes on as without ratings. Empty lists for an empty pool."""
    if not pool:
        return [[] for _ in range(items)]
    n, size = min(per_item, len(pool)), len(pool)
    return [_rated_last([pool[(start + k * n + j) % size] for j in range(size)],
                        rated[k] if rated else set())[:n] for k in range(items)]


def top_up(pool: list[int], start: int, assigned: list[set[int]], per_item: int,
           rated: list[set[int]] | None = None) -> tuple[list[list[int]], int]:
    """Deal again to items that lost an assignee: item k (now assigned to
    ``assigned[k]``) gets reviewers of the ``pool`` it does not have yet, walking the
    pool in turn from deal number ``start``, until it has ``min(per_item, len(pool))``;
    of them, first those who have not rated its run (``rated[k]``: user ids; ``None``:
    nobody rated), then those who have. Returns (the new assignees of each item, how
    many turns were taken), so the next deal continues after them: the turns walked up
    to the last one taken (the whole pool when the item could not be filled). Without
    ratings that is the walk that stops at the first n eligible. Nothing for an empty
    pool."""
    if not pool:
        return [[] for _ in assigned], 0
    n, size, turn, dealt = min(per_item, len(pool)), len(pool), start, []
    for k, current in enumerate(assigned):
        need = n - len(current)
        if need <= 0:
            dealt.append([])
            continue
        walk = [pool[(turn + j) % size] for j in range(size)]
        added = _rated_last([p for p in dict.fromkeys(walk) if p not in current],
                            rated[k] if rated else set())[:need]
        dealt.append(added)
        turn += max(walk.index(p) for p in added) + 1 if len(added) == need else size
    return dealt, turn - start


def sample_slot(queue_id: int, run_pk: int) -> int:
    """A stable number in [0, 100) for the run in the queue (SHA-256 of both ids)."""
    digest = hashlib.sha256(f"review-queue:{queue_id}:run:{run_pk}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % 100


def in_sample(queue_id: int, run_pk: int, percent: int) -> bool:
    """Whether the run belongs to a ``percent`` (1-100) sample of the queue: slots below
    ``percent``, so a larger rate keeps every run a smaller one had."""
    return sample_slot(queue_id, run_pk) < percent
