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
