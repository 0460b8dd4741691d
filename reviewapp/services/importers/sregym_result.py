"""The ``sregym-result`` format: SREGym's verdict files
(``<harness>_results_<problem>_<time>.json``), which give the runs logged beside them
their outcome. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._common import (
    RecordError,
)


def verdict_outcome(verdict: Any, source_name: str) -> tuple[str, dict[str, Any]]:
    """An SREGym verdict (``{problem_id, timestamp, return_code, success, usage_metrics?}``)
    as ``(external_outcome, detail)``: ``pass`` / ``fail`` from ``success``, with checks
    (the problem solved; the harness exited 0) and the verdict's facts. Raises
    ``RecordError`` for anything else."""
    if not is_verdict(verdict):
        raise RecordError("expected an SREGym verdict {problem_id, success, return_code}")
    checks = [{"name": "problem solved (success)", "passed": verdict["success"]}]
    code = verdict.get("return_code")
    if isinstance(code, int) and not isinstance(code, bool):
        checks.append({"name": "harness exited with code 0", "passed": code == 0,
                       "detail": None if code == 0 else f"return code {code}"})
    detail: dict[str, Any] = {"source": "sregym", "checks": checks, "file": source_name,
                              **{k: verdict[k] for k in ("problem_id", "timestamp", "return_code", "usage_metrics")
                                 if k in verdict}}
    return ("pass" if verdict["success"] else "fail"), detail


def is_verdict(record: Any) -> bool:
    """True for an SREGym verdict file's object."""
    return (isinstance(record, Mapping) and isinstance(record.get("problem_id"), str)
            and isinstance(record.get("success"), bool) and "messages" not in record)
