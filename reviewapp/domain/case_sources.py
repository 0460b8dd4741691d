"""Where a case came from (``case_library.source_type``, SPEC 7), one registry. Pure:
stdlib only. The codes are the ``SourceType`` enum's values (a test keeps them equal)."""

from __future__ import annotations

from dataclasses import dataclass

from .vocabulary import Registry


@dataclass(frozen=True)
class CaseSource:
    """``code`` as stored; ``label`` as shown in filters."""

    code: str
    label: str


CASE_SOURCES: Registry[CaseSource] = Registry("source_type", (
    CaseSource("AUTO", "Automatic (a useful verdict)"),
    CaseSource("MANUAL", "Added by a person"),
))
