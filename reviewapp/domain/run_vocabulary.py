"""Two vocabularies of a run, one registry each (SPEC 3): its ``kind`` (what started it)
and its execution ``status``. Pure: stdlib only.

The stored codes are the ``RunKind`` / ``RunStatus`` enums' values (a test keeps them
equal); pages, filters and form choices take their labels from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from .vocabulary import Registry


@dataclass(frozen=True)
class RunKindRow:
    """``code`` as stored in ``diagnosis_run.kind``; ``label`` as shown."""

    code: str
    label: str


@dataclass(frozen=True)
class RunStatusRow:
    """``code`` as stored in ``diagnosis_run.status``; ``label`` as shown."""

    code: str
    label: str


RUN_KINDS: Registry[RunKindRow] = Registry("kind", (
    RunKindRow("chat", "Chat"),
    RunKindRow("aiops", "AIOps"),
))

RUN_STATUSES: Registry[RunStatusRow] = Registry("status", (
    RunStatusRow("RUNNING", "Running"),
    RunStatusRow("SUCCESS", "Success"),
    RunStatusRow("FAILED", "Failed"),
))
