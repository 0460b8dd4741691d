"""Where the real agent-run data sets live (``../shared/data`` next to the repository).

Tests read them in place, never from a copy in the repo. Looked up in order:
``REVIEWAPP_SHARED_DATA``, ``<repo>/../shared/data``, ``/work/shared/data``. When none
exists the test is skipped with a one-line notice, except under ``CI=true`` where it fails.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    """The data directory; skips (or fails under CI) when it cannot be found."""
    candidates = [os.environ.get("REVIEWAPP_SHARED_DATA"), _REPO.parent / "shared" / "data",
                  "/work/shared/data"]
    for candidate in candidates:
        if candidate and Path(candidate, "tau-bench").is_dir():
            return Path(candidate)
    message = "shared data sets not found (set REVIEWAPP_SHARED_DATA to ../shared/data)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def tau_bench_file() -> Path:
    """``tau-bench/gpt-4o-airline.json`` (200 runs)."""
    return shared_data_dir() / "tau-bench" / "gpt-4o-airline.json"


def tau_run_answered_in_messages(index: int = 0) -> tuple[dict, str]:
    """τ-bench record ``index`` as an agent sends a chat run over the API when it keeps
    the answer in its messages: the trajectory's user / assistant / tool messages, no
    top-level ``answer``. Returns ``(run document, its answer)``, the answer read from
    the raw file with plain ``json``: the last assistant message with text."""
    import json

    traj = json.loads(tau_bench_file().read_text())[index]["traj"]
    answer = next(m["content"] for m in reversed(traj)
                  if m["role"] == "assistant" and (m["content"] or "").strip())
    query = next(m["content"] for m in traj if m["role"] == "user")
    messages = [{"id": f"m{i}", "role": m["role"], "content": m["content"]}
                for i, m in enumerate(traj) if m["role"] != "system"]
    return {"session_id": f"tau-session-{index}", "kind": "chat", "query": query,
            "status": "SUCCESS", "messages": messages}, answer
