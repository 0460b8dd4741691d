"""The ``tau-bench`` format: tau-bench trajectory records, one run each, with the
benchmark's reward as the external outcome. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._common import (
    DEFAULT_OPTIONS,
    Adapted,
    Builder,
    Options,
    RecordError,
    Warn,
    check_run_id,
)
from .openai_messages import chat_messages_doc

# tau-bench actions that change nothing: an expected one not taken is no missed write.
READ_ONLY_PREFIXES = ("get_", "search_", "list_", "find_")


READ_ONLY_ACTIONS = frozenset({"calculate", "think", "transfer_to_human_agents"})


def missed_write_actions(expected: Any, calls: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The expected write actions (``[{name, kwargs}]``, tau-bench's ``info.task.actions``)
    that no call made with the same name and the same arguments; ``None`` when the record
    lists no expected actions. Read-only actions (``get_`` / ``search_`` / ``list_`` /
    ``find_`` ..., ``calculate``, ``think``, ``transfer_to_human_agents``) are left out:
    they change no state, and the benchmark judges the final state."""
    if not isinstance(expected, list):
        return None
    made = [(c["tool_name"], c.get("arguments")) for c in calls]
    missed = []
    for action in expected:
        if not isinstance(action, Mapping) or not isinstance(action.get("name"), str):
            continue
        name = action["name"]
        if name.startswith(READ_ONLY_PREFIXES) or name in READ_ONLY_ACTIONS:
            continue
        if (name, action.get("kwargs")) not in made:
            missed.append({"name": name, "kwargs": action.get("kwargs")})
    return missed


def adapt_tau_bench(record: Any, stem: str, options: Options = DEFAULT_OPTIONS) -> Adapted:
    """A tau-bench trajectory record (``task_id``, ``trial``, ``reward``, ``traj``) as a
    chat run: openai-messages plus status ``SUCCESS``, ``reward`` kept as
    ``external_outcome`` pass / fail with detail ``{source, reward, task_id, trial,
    missed_actions?}`` (``missed_write_actions`` of ``info.task.actions``, when listed);
    run id ``tau-<file stem>-t<task>-r<trial>``."""
    task_id, trial, reward = _checked(record)
    builder = Builder(check_run_id(f"tau-{stem}-t{task_id}-r{trial}", "run id"), options)
    doc = chat_messages_doc(record["traj"], builder)
    doc.update(
        status="FAILED" if builder.gave_up else "SUCCESS",
        external_outcome="pass" if reward >= 1 else "fail",
        external_outcome_detail={"source": "tau-bench", "reward": reward, "task_id": task_id,
                                 "trial": trial},
    )
    missed = missed_write_actions(_expected_actions(record), builder.calls)
    if missed is not None:
        doc["external_outcome_detail"]["missed_actions"] = missed
    return builder.adapted(doc)


def _checked(record: Any) -> tuple[int, int, int | float]:
    """``(task_id, trial, reward)`` of a tau-bench record; ``RecordError`` when it is not
    an object with ``traj``, ids that are integers and a numeric reward."""
    if not isinstance(record, Mapping) or "traj" not in record:
        raise RecordError("expected a tau-bench record with traj")
    task_id, trial, reward = record.get("task_id"), record.get("trial"), record.get("reward")
    if not isinstance(task_id, int) or not isinstance(trial, int):
        raise RecordError("task_id and trial must be integers")
    if not isinstance(reward, (int, float)) or isinstance(reward, bool):
        raise RecordError("reward must be a number")
    return task_id, trial, reward


def _expected_actions(record: Mapping[str, Any]) -> Any:
    """``info.task.actions`` of the record (None when ``info`` or ``task`` is not an object)."""
    info = record.get("info")
    task = info.get("task") if isinstance(info, Mapping) else None
    return task.get("actions") if isinstance(task, Mapping) else None


def tau_bench_run(record: Any, stem: str) -> tuple[str, dict[str, Any], list[Warn]]:
    """``adapt_tau_bench`` as ``(run_id, document, warnings)``."""
    return adapt_tau_bench(record, stem).as_tuple()
