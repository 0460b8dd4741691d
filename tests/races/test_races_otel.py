"""Two exporters sending the same trace at once (issue 13, SPEC 4): two gunicorn processes
on one database (SQLite WAL, or PostgreSQL when ``REVIEWAPP_TEST_DB_URL`` is set) get the
whole trace twice and its two halves, all at once; the trace ends as one run with each
tool call once, every step once, the root's status, and no 5xx."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import func, select

from reviewapp.models import DiagnosticStep, OtelSpan, Run, ToolCall

from .servers import fire
from .world import REPS, World, no_5xx, serving_world

_seq = itertools.count(1)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from serving_world(tmp_path_factory, "races-otel")


def _span(trace: str, n: int, name: str, start_ms: int, end_ms: int, parent: str | None,
          **attributes: str) -> dict[str, Any]:
    base = time.time_ns() - 3_600_000_000_000
    span = {"traceId": trace, "spanId": f"{n:016x}", "name": name,
            "startTimeUnixNano": str(base + start_ms * 1_000_000),
            "endTimeUnixNano": str(base + end_ms * 1_000_000),
            "attributes": [{"key": k.replace("__", "."), "value": {"stringValue": v}}
                           for k, v in attributes.items()]}
    if parent:
        span["parentSpanId"] = parent
    return span


def _trace(trace: str) -> list[dict[str, Any]]:
    root = f"{1:016x}"
    return [
        _span(trace, 1, "invoke_agent bot", 0, 100, None, gen_ai__operation__name="invoke_agent",
              gen_ai__input__messages='[{"role": "user", "parts": [{"type": "text", "content": "Q"}]}]'),
        _span(trace, 2, "chat a", 1, 5, root, gen_ai__operation__name="chat"),
        _span(trace, 3, "chat b", 50, 60, root, gen_ai__operation__name="chat"),
        _span(trace, 4, "execute_tool logs", 10, 20, root, gen_ai__operation__name="execute_tool"),
        _span(trace, 5, "execute_tool metrics", 20, 30, root, gen_ai__operation__name="execute_tool"),
        _span(trace, 6, "execute_tool traces", 30, 40, root, gen_ai__operation__name="execute_tool"),
    ]


def _body(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def test_two_exporters_sending_one_trace_at_once_end_in_one_run(world: World) -> None:
    for _ in range(REPS):
        trace = f"{next(_seq):032x}"
        spans = _trace(trace)
        halves = (spans[1:4], [spans[0], *spans[4:]])
        bodies = [_body(spans), _body(spans), _body(halves[0]), _body(halves[1])]
        calls = [lambda s=world.as_token(), b=world.base(i), body=body: s.post(
            f"{b}/v1/traces", json=body, timeout=60) for i, body in enumerate(bodies)]
        responses = fire(calls)
        no_5xx(responses)
        assert [(r.status_code, r.json()) for r in responses] == [(200, {})] * 4

        def state(s: Any) -> tuple:
            runs = s.scalars(select(Run).where(Run.workspace_id == world.ws_id,
                                               Run.run_id == trace)).all()
            assert len(runs) == 1
            run = runs[0]
            calls = s.scalars(select(ToolCall).where(ToolCall.run_pk == run.id)).all()
            steps = s.scalars(select(DiagnosticStep.name).where(DiagnosticStep.run_pk == run.id)
                              .order_by(DiagnosticStep.ordinal)).all()
            kept = s.scalar(select(func.count()).select_from(OtelSpan).where(
                OtelSpan.workspace_id == world.ws_id, OtelSpan.trace_id == trace))
            return (run.status, run.query, run.tool_call_count, sorted(c.status for c in calls),
                    sorted(c.compensated for c in calls), list(steps), kept)

        assert world.read(state) == ("SUCCESS", "Q", 3, ["completed"] * 3, [False] * 3,
                                     ["chat a", "chat b"], 6)
