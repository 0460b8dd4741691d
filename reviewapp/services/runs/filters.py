"""Runs, what a list shows: ``RunFilters`` (parsed with ``from_params``, written back with
``as_params``) and the one sort table every runs list, queue and prev / next uses (SPEC 8)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from operator import attrgetter
from typing import Any

from sqlalchemy.orm import Session

from ...domain.search_text import rank as search_rank
from ...domain.search_text import search_term
from ...domain.verdicts import VERDICTS as VERDICT_REGISTRY
from ...domain.verdicts import VERIFIER_VERDICTS as VERIFIER_VERDICT_REGISTRY
from ...errors import ValidationFailed
from ...models import Run, RunKind, RunStatus
from ...models.runs import score_or
from ..keyset import SortKey, SortOrder
from ..params import Refusals, choice_param, int_param, text_param, workspace_ref
from ..run_text import few_matches, match_load, text_rank

_ID_DESC = SortKey(Run.id, True, attrgetter("id"))
_ID_ASC = SortKey(Run.id, False, attrgetter("id"))


def _score_or(missing: int) -> Callable[[Run], int]:
    return lambda run: missing if run.evidence_score is None else run.evidence_score


# The runs list's orders, one row each (a new order is one row): the keys, the id last so
# the order is total; unscored runs sort last either way (coalesce to -1 / 101). Each
# order has its index per workspace (models/runs.py): a new order needs one too.
SORT_TABLE: dict[str, SortOrder] = {order.name: order for order in (
    SortOrder("newest", "Newest first", (
        SortKey(Run.created_at, True, attrgetter("created_at"), datetime), _ID_DESC)),
    SortOrder("oldest", "Oldest first", (
        SortKey(Run.created_at, False, attrgetter("created_at"), datetime), _ID_ASC)),
    SortOrder("score_desc", "Highest evidence score", (
        SortKey(score_or(-1), True, _score_or(-1)), _ID_DESC)),
    SortOrder("score_asc", "Lowest evidence score", (
        SortKey(score_or(101), False, _score_or(101)), _ID_ASC)),
    SortOrder("failed_desc", "Most failed tool calls", (
        SortKey(Run.failed_tool_call_count, True, attrgetter("failed_tool_call_count")),
        _ID_DESC)),
    SortOrder("calls_desc", "Most tool calls", (
        SortKey(Run.tool_call_count, True, attrgetter("tool_call_count")), _ID_DESC)),
)}
# A text search's own order (``order_of``): best match first (``domain.search_text.rank``:
# the term in the question, then in the answer, then elsewhere), newest first within a rank.
RELEVANCE = "relevance"
# name -> label, for the sort select.
SORTS: dict[str, str] = {**{name: order.label for name, order in SORT_TABLE.items()},
                         RELEVANCE: "Best match (with a search)"}


def order_of(filters: RunFilters) -> SortOrder:
    """The sort order of ``filters``: a row of ``SORT_TABLE``, or for ``relevance`` with a
    search term the rank of the match (never NULL; computed from the index row, the same
    rule as ``domain.search_text.rank`` on the run's own text), then newest, then id.
    ``relevance`` without a term, or for a term that very many runs hold
    (``many_matches``), is ``newest``."""
    term = search_term(filters.q)
    if filters.sort != RELEVANCE:
        return SORT_TABLE[filters.sort]
    newest = SORT_TABLE["newest"]
    if not term or filters.many_matches:
        return SortOrder(RELEVANCE, SORTS[RELEVANCE], newest.keys)
    return SortOrder(RELEVANCE, SORTS[RELEVANCE], (
        SortKey(text_rank(term), True, lambda run: _rank_of(run, term)), *newest.keys))


def _rank_of(run: Run, term: str) -> int:
    return search_rank(run.query, run.answer, term)
# The registries' codes plus "none" (no verdict yet / not verified).
FEEDBACK_STATES = (*VERDICT_REGISTRY.codes(), "none")
VERIFIER_VERDICTS = (*VERIFIER_VERDICT_REGISTRY.codes(), "none")
REVIEWED_STATES = ("not_mine", "mine")
MAX_QUERY_TEXT = 200
FAILED_CALLS_STATES = ("yes",)


@dataclass(frozen=True)
class RunFilters:
    """What the runs list (and the review queue, and a run page's prev / next) shows.

    Every field is optional: ``workspace_id``, or ``workspace_slug`` (the slug every CLI
    command takes: ``?workspace=demo`` reads as that); ``kind`` chat | aiops; ``status`` RUNNING |
    SUCCESS | FAILED; ``verdict`` the verifier's PASS | LOW_CONFID | REJECT | none (not
    scored); ``feedback`` the run's verdict useful | not_useful | none; ``score_min`` /
    ``score_max`` evidence score bounds, inclusive, 0-100 (unscored runs drop out when a
    bound is set); ``outcome`` the external outcome (case-insensitive); ``reviewed`` not_mine (no
    rating of mine on any part of the run) | mine; ``q`` text contained (ignoring case:
    full Unicode case folding, ``domain.search_text.fold``) in the query, the answer, the
    run id, the session id, or a tool call's name, arguments (as JSON text), result or
    error (``match_places`` says which), through the full-text index (``run_text``; a
    term under 3 characters only in the newest ``SHORT_TERM_RUNS`` runs);
    ``failed_calls`` "yes": only runs with at least one failed tool call; ``sort`` a key
    of ``SORTS`` (default ``relevance`` with ``q``, else ``newest``).
    """

    workspace_id: int | None = None
    kind: str | None = None
    status: str | None = None
    verdict: str | None = None
    feedback: str | None = None
    score_min: int | None = None
    score_max: int | None = None
    outcome: str | None = None
    reviewed: str | None = None
    q: str | None = None
    sort: str = "newest"
    failed_calls: str | None = None
    workspace_slug: str | None = None
    # Set by the services, never from parameters (``with_match_count``): more than
    # ``RANKED_MATCHES`` runs hold ``q`` (not ranked), more than ``PROBED_MATCHES`` (tested
    # run by run in the list's order).
    many_matches: bool = False
    probe: bool = False
    # ... and the runs that hold ``q`` when few do (``run_text.few_matches``): the list
    # looks them up by key instead of asking the index again.
    matched: tuple[int, ...] | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> RunFilters:
        """Parse query-string values (all text), with the parsers every list page uses
        (``services.params``). Raises one ``ValidationFailed`` naming every refused field
        (``problems``; a reversed score range names ``score_max``). Whether a workspace's
        short name is one of the actor's is ``listing.read_filters``'s check."""
        refused = Refusals()
        filters = cls.read(params, refused)
        refused.check()
        return filters.validated()

    @classmethod
    def read(cls, params: Mapping[str, Any], refused: Refusals) -> RunFilters:
        """The filters of ``params``, each refused one left unset (the default sort) and
        kept in ``refused`` (``from_params`` raises them)."""
        workspace = refused.read(workspace_ref, params)
        score_min = refused.read(int_param, params, "score_min", 0, 100)
        score_max = refused.read(int_param, params, "score_max", 0, 100)
        if score_min is not None and score_max is not None and score_min > score_max:
            refused.add("score_max", "must not be below the minimum score")
        return cls(
            workspace_id=workspace if isinstance(workspace, int) else None,
            workspace_slug=workspace if isinstance(workspace, str) else None,
            kind=refused.read(choice_param, params, "kind", (k.value for k in RunKind)),
            status=refused.read(choice_param, params, "status", (s.value for s in RunStatus)),
            verdict=refused.read(choice_param, params, "verdict", VERIFIER_VERDICTS),
            feedback=refused.read(choice_param, params, "feedback", FEEDBACK_STATES),
            score_min=score_min,
            score_max=score_max,
            outcome=refused.read(text_param, params, "outcome", 32),
            reviewed=refused.read(choice_param, params, "reviewed", REVIEWED_STATES),
            q=refused.read(text_param, params, "q", MAX_QUERY_TEXT),
            # A search lists the best matches first unless another order is asked for.
            sort=refused.read(choice_param, params, "sort", SORTS) or (
                RELEVANCE if search_term(params.get("q")) else "newest"),
            failed_calls=refused.read(choice_param, params, "failed_calls", FAILED_CALLS_STATES),
        )

    def _param_values(self) -> dict[str, Any]:
        """Every query-string name ``from_params`` reads, with this value's (``None``: not
        set; the default sort is not set): the one list of the runs list's parameters,
        which ``as_params``, ``param_names`` and ``active`` derive from."""
        return {
            "q": self.q, "workspace": self.workspace_id or self.workspace_slug,
            "kind": self.kind, "status": self.status, "verdict": self.verdict,
            "feedback": self.feedback, "reviewed": self.reviewed, "score_min": self.score_min,
            "score_max": self.score_max, "outcome": self.outcome,
            "sort": None if self.sort == self.default_sort else self.sort,
            "failed_calls": self.failed_calls,
        }

    @classmethod
    def param_names(cls) -> tuple[str, ...]:
        """The query-string names of the runs list's filters and sort, in the order links
        write them (``q``, ``workspace``, ... ``sort``, ``failed_calls``): what a link
        that carries "the current list" takes along."""
        return tuple(cls()._param_values())

    def as_params(self, **overrides: Any) -> dict[str, str]:
        """The filters as query-string values (empty ones and the default sort left out),
        for links and forms; ``from_params`` reads them back."""
        values = {**self._param_values(), **overrides}
        return {k: str(v) for k, v in values.items() if v not in (None, "")}

    def validated(self) -> RunFilters:
        """This value when every field is allowed. Raises ``ValidationFailed`` naming the field."""
        allowed = {
            "kind": tuple(k.value for k in RunKind),
            "status": tuple(s.value for s in RunStatus),
            "verdict": VERIFIER_VERDICTS,
            "feedback": FEEDBACK_STATES,
            "reviewed": REVIEWED_STATES,
            "failed_calls": FAILED_CALLS_STATES,
        }
        for name, values in allowed.items():
            value = getattr(self, name)
            if value is not None and value not in values:
                raise ValidationFailed(name, f"must be one of {', '.join(values)}")
        if self.sort not in SORTS:
            raise ValidationFailed("sort", f"must be one of {', '.join(SORTS)}")
        for name in ("score_min", "score_max"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not 0 <= value <= 100):
                raise ValidationFailed(name, "must be a whole number from 0 to 100")
        if self.score_min is not None and self.score_max is not None \
                and self.score_min > self.score_max:
            raise ValidationFailed("score_max", "must not be below the minimum score")
        if self.q is not None and len(self.q) > MAX_QUERY_TEXT:
            raise ValidationFailed("q", f"at most {MAX_QUERY_TEXT} characters")
        if self.outcome is not None and len(self.outcome) > 32:
            raise ValidationFailed("outcome", "at most 32 characters")
        return self

    def with_match_count(self, session: Session) -> RunFilters:
        """This value with ``matched`` (the runs holding ``q`` when at most
        ``RANKED_MATCHES`` do: ``run_text.few_matches``), else ``many_matches`` and
        ``probe`` set from the index (``run_text.match_load``). One query for a term few
        runs hold, two for a common one; none without ``q`` or with a short one."""
        term = search_term(self.q)
        matched = few_matches(session, term)
        if matched is not None:
            return replace(self, many_matches=False, probe=False, matched=matched)
        many, probe = match_load(session, term)
        return replace(self, many_matches=many, probe=probe, matched=None)

    @property
    def default_sort(self) -> str:
        """The order a list gets without a ``sort`` parameter: ``relevance`` with a
        search term, else ``newest``."""
        return RELEVANCE if search_term(self.q) else "newest"

    @property
    def active(self) -> bool:
        """True when any filter (not the sort) narrows the list."""
        return any(value not in (None, "") for name, value in self._param_values().items()
                   if name != "sort")

