"""The tool-call audit lifecycle: started / completed / failed (SPEC 4).

Events and complete records both land here, keyed by (workspace, call id), so an event
can never touch another tenant's row. The rules:

* ``started`` creates the row; a ``started`` that arrives after the terminal event of a
  compensated row fills in the real start, recomputes the duration, clears ``compensated``.
* ``completed`` / ``failed`` finalise the same row; without a row they create and
  finalise it at once and mark it ``compensated`` (start = the terminal event's time, so
  the duration is 0 and the UI says it is not the tool's real duration).
* Replays (same id, same status) change nothing; a terminal event for a row that is
  already terminal with another status is rejected; ``duration_ms`` is never negative:
  an event whose time puts the end before the start is still applied (nothing received
  is dropped) with duration 0 ms, and its result carries a ``warning`` saying so.
* Timestamps outside the years 2000-2100 are refused (``ValidationFailed``).
* ``delta`` (streamed partial output) is accepted and never stored.
* Secrets are redacted in arguments, results and errors before anything is stored,
  then results / errors are serialised and cut to 2,000 characters.
* The runtime log holds tool name, argument keys, status, duration and error class only.

The package, by concern: ``events`` (the API's entry: validate, apply, commit), its
``_event`` (one event's shape and redaction) and ``_lifecycle`` (the row state machine,
written set-based), ``records`` (complete records of a run document), ``_columns`` (what
both paths store) and ``runtime_log`` (the value-free log line).
"""

from __future__ import annotations

from ._columns import STORED_EVENTS, TERMINAL
from .events import DEFAULT_MAX_EVENTS, EventResult, apply_events
from .records import check_records, upsert_records
from .runtime_log import error_class, log, log_safe

__all__ = ["DEFAULT_MAX_EVENTS", "STORED_EVENTS", "TERMINAL", "EventResult", "apply_events",
           "check_records", "error_class", "log", "log_safe", "upsert_records"]
