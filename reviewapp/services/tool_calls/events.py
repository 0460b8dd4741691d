"""Tool-call lifecycle events from the agent (``POST /api/v1/tool-events``, OTLP, the
demo): validated one by one, applied in order, committed once (SPEC 4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from ...actors import Actor, Role
from ...domain.ids import id_problem
from ...domain.json_text import find_problem
from ...domain.redaction import SUMMARY_LIMIT
from ...errors import PayloadTooLarge, ValidationFailed
from ...models import Run, RunStatus
from ...models.base import utcnow
from ..access import require_role
from ..evaluations import refresh_run
from ..retry import retry_on_conflict
from ..run_text import store_call_text
from ._columns import STORED_EVENTS
from ._event import Event, parse_event
from ._lifecycle import BUMP_COUNTERS, Batch, apply_event
from .records import NO_SUCH_STEP

DEFAULT_MAX_EVENTS = 1000


@dataclass(frozen=True)
class EventResult:
    """What one event did: ``created`` | ``updated`` | ``unchanged`` | ``rejected`` |
    ``ignored`` (a ``delta``), with a short ``message`` saying why when useful, and a
    ``warning`` when the event was applied but its facts contradict the row (an end
    before the start: the duration is recorded as 0 ms, SPEC 4). ``cut``: for an applied
    event, each of its texts stored cut (``output`` / ``error``) as ``{"stored": 2000,
    "length": M}`` characters (SPEC 4, 10): the agent learns it from the answer."""

    index: int
    id: str | None
    event: str | None
    result: str
    message: str = ""
    warning: str = ""
    field: str = ""  # the path of a shape error (e.g. ``[3].timestamp``); its result is rejected
    cut: dict[str, dict[str, int]] | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"index", "id", "event", "result"[, "field"][, "message"][, "warning"][, "cut"]}`` for
        the API answer; ``id`` / ``event`` are null when the event did not carry a valid one."""
        out: dict[str, Any] = {"index": self.index, "id": self.id, "event": self.event,
                               "result": self.result}
        if self.field:
            out["field"] = self.field
        if self.message:
            out["message"] = self.message
        if self.warning:
            out["warning"] = self.warning
        if self.cut:
            out["cut"] = self.cut
        return out


def apply_events(
    session: Session, actor: Actor, workspace_id: int, raw_events: Sequence[Any], *,
    batch: bool = True, max_events: int = DEFAULT_MAX_EVENTS,
) -> list[EventResult]:
    """Apply tool-call lifecycle events to runs of ``workspace_id``; commit once (SPEC 4).

    ``raw_events``: decoded JSON objects of ``schemas/tool_event.schema.json``; ``batch``
    says whether they came as an array (error paths then start with ``[i]``). Every event
    is validated on its own: in a batch, an event with a shape error (unknown field, bad
    value, unreadable or out-of-range timestamp, a ``run_id`` holding a secret) gets a
    ``rejected`` result carrying its ``field`` path (e.g. ``[3].timestamp``) and message,
    and the valid events are still
    applied; a single event (``batch=False``) with a shape error raises
    ``ValidationFailed`` naming the field. Then each event is applied in order on its
    own: a rejected event (unknown run_id, terminal after another terminal, an id that
    belongs to another run, a ``step_id`` that names no step of the run: its result
    carries the ``field``, ``[i].step_id`` or ``step_id``) is reported in its result and
    the rest still apply. Results
    come back in request order, one per event.
    Events without timestamp take the time the server received them.
    The runs' call counters follow; a finished run whose calls changed is re-scored
    (``evaluations.refresh_run``); a RUNNING run is scored when it finishes (SPEC 5.1).
    Raises ``Forbidden`` (actor may not write into ``workspace_id``), ``ValidationFailed``,
    ``PayloadTooLarge`` (more than ``max_events``).
    """
    require_role(session, actor, workspace_id, Role.REVIEWER if actor.is_token else Role.ADMIN)
    if len(raw_events) > max_events:
        raise PayloadTooLarge(f"a batch holds at most {max_events} events, got {len(raw_events)}")
    if not raw_events:
        raise ValidationFailed("$", "send one event or a non-empty array of events")
    now, clean_run_ids = utcnow(), set()
    if not batch:
        events = [parse_event(raw, i, "", now, clean_run_ids) for i, raw in enumerate(raw_events)]
        return retry_on_conflict(session, lambda: _apply_all(session, workspace_id, events,
                                                             batched=False))
    events, invalid = [], []
    for index, raw in enumerate(raw_events):
        try:
            events.append(parse_event(raw, index, f"[{index}]", now, clean_run_ids))
        except ValidationFailed as exc:
            invalid.append(_invalid_result(index, raw, exc))
    applied = retry_on_conflict(
        session, lambda: _apply_all(session, workspace_id, events)) if events else []
    return sorted([*applied, *invalid], key=lambda r: r.index)


def _invalid_result(index: int, raw: Any, error: ValidationFailed) -> EventResult:
    """The ``rejected`` result of an event that failed its shape check, with what it
    carried of id and event (``None`` when they are not valid themselves)."""
    fields = raw if isinstance(raw, Mapping) else {}
    call_id = fields.get("id")
    event = fields.get("event")
    message = error.reason
    return EventResult(index, call_id if _valid_id(call_id) else None,
                       event if event in ("started", "completed", "failed", "delta") else None,
                       "rejected", message, field=error.field)


def _valid_id(value: Any) -> bool:
    """Whether a rejected event's ``id`` can be echoed as its id: a text of at most 160
    characters that the identifier rule keeps and that can be stored (no NUL, no lone
    surrogate)."""
    return (isinstance(value, str) and len(value) <= 160 and id_problem(value) is None
            and find_problem(value) is None)


def _cut_texts(ev: Event) -> dict[str, dict[str, int]] | None:
    """The event's texts stored cut: ``{"output" | "error": {"stored", "length"}}`` in
    characters, ``None`` when neither was longer than ``SUMMARY_LIMIT`` (SPEC 4)."""
    lengths = ev.lengths or {}
    cut = {name: {"stored": SUMMARY_LIMIT, "length": lengths[column]}
           for name, column in (("output", "result_length"), ("error", "error_length"))
           if (lengths.get(column) or 0) > SUMMARY_LIMIT}
    return cut or None


def _apply_all(session: Session, workspace_id: int, events: list[Event], *,
               batched: bool = True) -> list[EventResult]:
    stored = [ev for ev in events if ev.event in STORED_EVENTS]
    batch = Batch(session, workspace_id, stored) if stored else None
    results: list[EventResult] = []
    touched: dict[int, Any] = {}
    for ev in events:
        if batch is None or ev.event not in STORED_EVENTS:
            results.append(EventResult(ev.index, ev.id, ev.event, "ignored",
                                       "delta events are shown live, never stored"))
            continue
        run = batch.runs.get(ev.run_id)
        if run is None:
            results.append(EventResult(ev.index, ev.id, ev.event, "rejected", "unknown run_id"))
            continue
        if ev.step_id and batch.step_pk(run, ev.step_id) is None:
            results.append(EventResult(ev.index, ev.id, ev.event, "rejected",
                                       f"step_id {NO_SUCH_STEP}",
                                       field=f"[{ev.index}].step_id" if batched else "step_id"))
            continue
        result, message, warning = apply_event(batch, run, ev)
        if result in ("created", "updated"):
            touched[run.id] = run
        results.append(EventResult(ev.index, ev.id, ev.event, result, message, warning,
                                   cut=_cut_texts(ev) if result in ("created", "updated") else None))
    if batch is not None:
        batch.write()
    bumps = [{"pk": run.id, "added": batch.added.get(run.id, 0), "failed": batch.failed.get(run.id, 0),
              "now": utcnow()}
             for run in touched.values() if run.status == RunStatus.RUNNING.value]
    if bumps:
        # Counters follow the calls; scoring waits for the end of the run (SPEC 5.1).
        batch.conn.execute(BUMP_COUNTERS, bumps)
    for run in touched.values():
        if run.status != RunStatus.RUNNING.value:
            refresh_run(session, session.get(Run, run.id))
    if batch is not None:
        store_call_text(session, batch.text_changed())  # the calls' text is searched (SPEC 8)
    session.commit()
    return results
