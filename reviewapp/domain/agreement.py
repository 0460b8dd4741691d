"""Agreement statistics over reviewers' ratings and over a signal against people
(issue 16 "Agreement", "How well the automatic evaluation agrees with people"). Pure: no
database; Krippendorff's α comes from the ``krippendorff`` package (numpy), the rest is
small enough to be written out here and tested against worked examples.

Ratings are nominal: any hashable category (``"positive"`` / ``"negative"`` for answer
ratings, ``"useful"`` / ``"not_useful"`` for verdicts). An *item* is one thing rated (a
run's answer-level target); ``ratings`` maps ``item -> {reviewer -> category}``, so a
reviewer who did not rate an item is simply absent (missing rating).

Figures that cannot be computed are ``None``, never a made-up number:

* Cohen's κ = (p_o - p_e) / (1 - p_e) is undefined when p_e = 1 (both sides used one
  and the same category throughout: there is nothing to agree *beyond* chance) and over
  zero items;
* Krippendorff's α is undefined with fewer than two pairable values or with a single
  category in the whole data (the expected disagreement is zero).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import krippendorff
import numpy as np

Ratings = Mapping[Hashable, Mapping[str, Hashable]]


# --- Cohen's kappa ------------------------------------------------------------------------


def cohen_kappa(pairs: Iterable[tuple[Hashable, Hashable]]) -> float | None:
    """Cohen's κ of two raters from ``(rating_a, rating_b)`` pairs, one per item both
    rated (nominal categories, unweighted). ``None`` when undefined: no pairs, or chance
    agreement p_e = 1 (see module docstring). Range [-1, 1]."""
    pairs = list(pairs)
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(1 for a, b in pairs if a == b) / n
    left = Counter(a for a, _ in pairs)
    right = Counter(b for _, b in pairs)
    expected = sum(left[c] * right.get(c, 0) for c in left) / (n * n)
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1 - expected)


def kappa_from_matrix(matrix: Mapping[tuple[Hashable, Hashable], int]) -> float | None:
    """Cohen's κ from a confusion matrix ``{(rating_a, rating_b): count}`` (same rule and
    ``None`` cases as ``cohen_kappa``); counts must be >= 0."""
    n = sum(matrix.values())
    if n == 0:
        return None
    observed = sum(count for (a, b), count in matrix.items() if a == b) / n
    left: Counter[Hashable] = Counter()
    right: Counter[Hashable] = Counter()
    for (a, b), count in matrix.items():
        left[a] += count
        right[b] += count
    expected = sum(left[c] * right.get(c, 0) for c in left) / (n * n)
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1 - expected)


# --- Krippendorff's alpha -----------------------------------------------------------------


def krippendorff_alpha(ratings: Ratings) -> float | None:
    """Krippendorff's α (nominal) over every reviewer, missing ratings allowed. Items
    rated by fewer than two reviewers carry no pairable value and do not count. ``None``
    when undefined (module docstring)."""
    reviewers = sorted({r for by in ratings.values() for r in by})
    categories = sorted({v for by in ratings.values() for v in by.values()}, key=repr)
    if len(reviewers) < 2 or len(categories) < 2:
        return None
    code = {c: float(i) for i, c in enumerate(categories)}
    items = [by for by in ratings.values() if len(by) >= 2]
    if not items:
        return None
    data = np.full((len(reviewers), len(items)), np.nan)
    row = {r: i for i, r in enumerate(reviewers)}
    for j, by in enumerate(items):
        for reviewer, value in by.items():
            data[row[reviewer], j] = code[value]
    if len({v for by in items for v in by.values()}) < 2:
        return None
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal",
                                    value_domain=list(code.values())))


# --- the reviewers' table ---------------------------------------------------------------


@dataclass(frozen=True)
class PairAgreement:
    """Two reviewers over the ``shared`` items both rated: ``agreed`` of them alike,
    ``kappa`` (``None``: undefined, or fewer shared items than the minimum)."""

    first: str
    second: str
    shared: int
    agreed: int
    kappa: float | None
    enough: bool

    @property
    def observed(self) -> float | None:
        """Share of the shared items rated alike, in [0, 1]."""
        return self.agreed / self.shared if self.shared else None


@dataclass(frozen=True)
class ReviewerAgreement:
    """One reviewer: ``rated`` items; of the ``with_majority`` items where the *other*
    reviewers of the item had a strict majority, ``agreed`` match it."""

    reviewer: str
    rated: int
    with_majority: int
    agreed: int

    @property
    def rate(self) -> float | None:
        """``agreed / with_majority`` in [0, 1], ``None`` without such items."""
        return self.agreed / self.with_majority if self.with_majority else None

    @property
    def disagreed(self) -> int:
        """Items with a majority of the others where this reviewer went against it."""
        return self.with_majority - self.agreed


@dataclass(frozen=True)
class AgreementSummary:
    """Everything the agreement page shows. ``items``: items with at least one rating;
    ``multi_rated``: items with two or more (what α rests on); ``ratings``: all ratings;
    ``pairs``: every pair of reviewers that shares at least one item (``enough`` marks
    those with at least ``min_shared``), most shared first."""

    items: int
    multi_rated: int
    ratings: int
    alpha: float | None
    min_shared: int
    pairs: list[PairAgreement]
    reviewers: list[ReviewerAgreement]


def strict_majority(values: Sequence[Hashable]) -> Hashable | None:
    """The category more than half of ``values`` hold, else ``None`` (a tie or a split)."""
    if not values:
        return None
    value, count = Counter(values).most_common(1)[0]
    return value if count * 2 > len(values) else None


def summarise(ratings: Ratings, min_shared: int = 5) -> AgreementSummary:
    """The agreement figures of ``ratings`` (``item -> {reviewer -> category}``):
    Krippendorff's α over all, Cohen's κ per pair of reviewers with at least
    ``min_shared`` (>= 1) shared items, each reviewer's agreement with the strict majority
    of the item's other reviewers (leave-one-out, so nobody agrees with themselves; an
    item where the others tie does not count). Raises ``ValueError`` for ``min_shared < 1``.
    """
    if min_shared < 1:
        raise ValueError("min_shared must be at least 1")
    by_pair: dict[tuple[str, str], dict[tuple[Hashable, Hashable], int]] = {}
    rated: Counter[str] = Counter()
    with_majority: Counter[str] = Counter()
    agreed: Counter[str] = Counter()
    for by in ratings.values():
        names = sorted(by)
        counts: dict[Hashable, int] = {}
        for value in by.values():
            counts[value] = counts.get(value, 0) + 1
        others = len(names) - 1
        for name in names:
            rated[name] += 1
            own = by[name]
            # The others' strict majority: the item's counts without this reviewer's own.
            best_value, best = None, 0
            for value, n in counts.items():
                n -= value == own
                if n > best:
                    best_value, best = value, n
            if best * 2 > others:
                with_majority[name] += 1
                agreed[name] += own == best_value
        for a, b in combinations(names, 2):
            cells = by_pair.setdefault((a, b), {})
            key = (by[a], by[b])
            cells[key] = cells.get(key, 0) + 1
    pairs = []
    for (a, b), cells in by_pair.items():
        shared = sum(cells.values())
        enough = shared >= min_shared
        pairs.append(PairAgreement(
            a, b, shared, sum(n for (x, y), n in cells.items() if x == y),
            kappa_from_matrix(cells) if enough else None, enough))
    pairs.sort(key=lambda p: (-p.shared, p.first, p.second))
    reviewers = [ReviewerAgreement(name, rated[name], with_majority[name], agreed[name])
                 for name in sorted(rated)]
    return AgreementSummary(
        items=sum(1 for by in ratings.values() if by),
        multi_rated=sum(1 for by in ratings.values() if len(by) >= 2),
        ratings=sum(len(by) for by in ratings.values()),
        alpha=krippendorff_alpha(ratings), min_shared=min_shared,
        pairs=pairs, reviewers=reviewers,
    )


@dataclass(frozen=True)
class DecisionAgreement:
    """One reviewer against the lead's decisions (issue 16 adjudication): of the
    ``decided`` items the reviewer rated and a lead decided, ``agreed`` carry the rating
    the decided verdict stands for (useful <-> positive)."""

    reviewer: str
    decided: int
    agreed: int

    @property
    def rate(self) -> float | None:
        """``agreed / decided`` in [0, 1], ``None`` without decided items."""
        return self.agreed / self.decided if self.decided else None


def decision_agreement(ratings: Ratings, decisions: Mapping[Hashable, Hashable],
                       rating_of: Mapping[Hashable, Hashable]) -> list[DecisionAgreement]:
    """Each reviewer's agreement with the decisions, by reviewer name. ``ratings``:
    {item: {reviewer: rating}}; ``decisions``: {item: verdict} (the latest decision of
    each decided item); ``rating_of``: {verdict: the rating it stands for}. Items
    without a decision, and reviewers who rated none of the decided items, do not
    count."""
    decided: Counter[str] = Counter()
    agreed: Counter[str] = Counter()
    for item, verdict in decisions.items():
        for reviewer, rating in ratings.get(item, {}).items():
            decided[reviewer] += 1
            agreed[reviewer] += rating == rating_of[verdict]
    return [DecisionAgreement(r, decided[r], agreed[r]) for r in sorted(decided)]


# --- a score against a yes / no judgement ------------------------------------------------


def roc_auc(positive: Iterable[float], negative: Iterable[float]) -> float | None:
    """ROC AUC of a score for telling ``positive`` from ``negative`` cases: the probability
    that a random positive case scores higher than a random negative one, ties counting
    one half (the Mann-Whitney U statistic / (n_pos x n_neg)). ``None`` when either side is
    empty. O((n + m) log(n + m))."""
    pos = sorted(positive)
    neg = sorted(negative)
    if not pos or not neg:
        return None
    wins = 0.0
    below = 0  # negatives strictly below the current positive score
    i = 0
    for score in pos:
        while i < len(neg) and neg[i] < score:
            i += 1
        below = i
        equal = 0
        j = i
        while j < len(neg) and neg[j] == score:
            j += 1
            equal += 1
        wins += below + equal / 2
    return wins / (len(pos) * len(neg))


def roc_auc_from_counts(counts: Mapping[float, tuple[int, int]]) -> float | None:
    """``roc_auc`` from ``{score: (positives, negatives)}`` counts (one pass over the
    sorted distinct scores: what a GROUP BY gives). ``None`` when either side is empty."""
    total_pos = sum(p for p, _ in counts.values())
    total_neg = sum(n for _, n in counts.values())
    if not total_pos or not total_neg:
        return None
    wins = 0.0
    below = 0
    for score in sorted(counts):
        pos, neg = counts[score]
        wins += pos * (below + neg / 2)
        below += neg
    return wins / (total_pos * total_neg)
