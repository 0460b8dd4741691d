"""Runs (SPEC 3, 8, 9, 10), split by concern:

- ``ingest``: upsert a run document, finish a run, set its external outcome (``_children`` keeps rated parts on a
  re-ingest);
- ``filters``: what a runs list shows (``RunFilters``, ``from_params`` / ``as_params``) and its one
  sort table; ``scope``: which runs a list covers (the visible runs narrowed by the filters);
  ``matches``: where a search matched; ``listing``: one keyset page with its bounded counts,
  a run's neighbours, a run found by its agent run id;
- ``detail``: the run page's read model; ``targets``: what its thumbs controls show;
  ``timeline``: its tool-call timeline and one tool call; ``_loading``: the run with its access
  check and the ratings every page read starts with.

Every public name stays importable from ``reviewapp.services.runs``.
"""

from __future__ import annotations

from ._loading import Dispute, target_decision
from .detail import (
    CitationView,
    RunDetail,
    VerdictView,
    evaluation_view,
    get_run,
    get_run_detail,
    get_verdict,
)
from .filters import (
    FAILED_CALLS_STATES,
    FEEDBACK_STATES,
    MAX_QUERY_TEXT,
    REVIEWED_STATES,
    SORTS,
    VERIFIER_VERDICTS,
    RunFilters,
)
from .ingest import (
    ANSWER_MESSAGE_ID,
    UpsertResult,
    check_run_id,
    finish_run,
    outcome_only,
    set_outcome,
    upsert_run,
)
from .listing import (
    COUNT_CAP,
    FILTERED_COUNT_CAP,
    Count,
    RunById,
    RunPage,
    find_run_by_id,
    list_runs,
    read_filters,
)
from .matches import match_places
from .rateable import rateable_run
from .scope import filtered_runs, single_workspace
from .targets import TargetState, reason_choices, tool_call_name, workspace_reasons
from .timeline import (
    FIRST_CALLS,
    MORE_CALLS,
    OpenedCall,
    Shown,
    Timeline,
    TimelineCall,
    TimelineRow,
    get_timeline,
    get_timeline_chunk,
    get_tool_call,
)

__all__ = [
    "FAILED_CALLS_STATES", "FIRST_CALLS", "MORE_CALLS", "OpenedCall", "Shown", "get_timeline_chunk", "RunById", "find_run_by_id", "match_places",
    "ANSWER_MESSAGE_ID", "COUNT_CAP", "FEEDBACK_STATES", "FILTERED_COUNT_CAP", "MAX_QUERY_TEXT",
    "REVIEWED_STATES", "SORTS", "VERIFIER_VERDICTS", "CitationView", "Count", "Dispute", "RunDetail", "target_decision",
    "RunFilters", "RunPage", "TargetState", "Timeline", "TimelineCall", "TimelineRow",
    "UpsertResult", "check_run_id", "evaluation_view", "filtered_runs",
    "VerdictView", "finish_run", "get_run", "get_run_detail", "get_verdict", "get_timeline", "get_tool_call", "list_runs",
    "read_filters",
    "outcome_only", "rateable_run", "reason_choices", "set_outcome", "single_workspace",
    "tool_call_name", "upsert_run",
    "workspace_reasons",
]
