"""No test writes into the package tree (TEAM standards, issue 12): parallel workers
import from ``reviewapp/``, so a probe file written there can break another worker.

Two nets, both installed by ``conftest.py``:

- an audit hook (PEP 578) sees every write-mode open, rename, removal, ``mkdir`` ... in
  this process (any thread) and names the test during which it happened;
- a snapshot of the tree's file names taken at session start and compared at session
  end catches a file a subprocess (a CLI run, a race server) added or removed. (Not the
  files' times: a developer editing a module during a long run is no test's write.)

Byte-code caches (``__pycache__``) are Python's own and not counted."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

PACKAGE = os.path.realpath(Path(__file__).resolve().parent.parent / "reviewapp")

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# Audit event -> the positions of its arguments that name a path it changes.
_CHANGING_EVENTS: dict[str, tuple[int, ...]] = {
    "os.rename": (0, 1), "os.replace": (0, 1), "os.link": (1,), "os.symlink": (1,),
    "shutil.copyfile": (1,), "shutil.copytree": (1,), "shutil.rmtree": (0,),
    "os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.truncate": (0,),
    "os.chmod": (0,), "os.utime": (0,), "sqlite3.connect": (0,),
}

# ``(event, path)`` of each write seen since the last ``take_violations()``.
_violations: list[tuple[str, str]] = []


def in_package(path: Any) -> str | None:
    """``path`` (str, bytes or path-like; a file descriptor is not a path) relative to the
    package when it lies inside it, outside ``__pycache__``; else None."""
    if isinstance(path, int) or path is None:
        return None
    try:
        text = os.fsdecode(path)
    except TypeError:
        return None
    if not text or text.startswith((":", "file:")):  # sqlite ':memory:' and URIs
        return None
    full = os.path.realpath(os.path.abspath(text))
    if full != PACKAGE and not full.startswith(PACKAGE + os.sep):
        return None
    relative = os.path.relpath(full, os.path.dirname(PACKAGE))
    return None if "__pycache__" in relative.split(os.sep) else relative


def written_paths(event: str, args: tuple[Any, ...]) -> list[str]:
    """The package paths (relative to the repository) that audit ``event`` with ``args``
    changes: a write-mode ``open`` (by its flags) or one of ``_CHANGING_EVENTS``."""
    if event == "open":
        if len(args) < 3 or not isinstance(args[2], int) or not args[2] & _WRITE_FLAGS:
            return []
        positions: tuple[int, ...] = (0,)
    else:
        positions = _CHANGING_EVENTS.get(event, ())
    return [hit for i in positions if i < len(args) and (hit := in_package(args[i]))]


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" or event in _CHANGING_EVENTS:
        _violations.extend((event, path) for path in written_paths(event, args))


_installed = False


def install() -> None:
    """Add the audit hook (once per process; an audit hook cannot be removed)."""
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True


def take_violations() -> list[tuple[str, str]]:
    """The writes seen since the last call, and forget them."""
    seen = list(_violations)
    del _violations[: len(seen)]
    return seen


def snapshot() -> set[str]:
    """The relative path of every file under the package (``__pycache__`` aside)."""
    files = set()
    for directory, subdirectories, names in os.walk(PACKAGE):
        subdirectories[:] = [d for d in subdirectories if d != "__pycache__"]
        for name in names:
            files.add(os.path.relpath(os.path.join(directory, name), PACKAGE))
    return files


def changes(before: set[str], after: set[str]) -> list[str]:
    """What differs between two snapshots, one line per file (added, removed)."""
    return sorted([f"added {p}" for p in after - before] + [f"removed {p}" for p in before - after])
