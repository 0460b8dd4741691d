"""Runs, the page's rating targets: what one thumbs control shows (``TargetState``), how
it names a tool call, and the workspace's reasons it offers (SPEC 6.1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...domain.reasons import workspace_reasons as reason_registry
from ...domain.target_types import control_label
from ...models import Workspace


@dataclass(frozen=True)
class TargetState:
    """What one thumbs control shows: the target, the actor's own rating (``mine``, a
    Feedback or ``None``), every reviewer's ``summary`` (TargetSummary or ``None``), the
    workspace's reason codes and the (code, label) pairs a negative rating may carry
    (``reason_choices``, SPEC 6.1)."""

    target_type: str
    target_id: int
    subject_key: str
    run_pk: int
    mine: Any
    summary: Any
    reasons: list[str]
    reason_choices: tuple[tuple[str, str], ...] = ()
    positive_reason_choices: tuple[tuple[str, str], ...] = ()
    # ``mine`` was given before the target's text changed (SPEC 10).
    earlier_version: bool = False
    name: str | None = None
    # The target's ratings make the run's verdict and a lead decided it (``Decided``):
    # the control says so instead of only that the reviewers disagree.
    decided: Any = None
    # The run's kind ("chat", "aiops"): how the part is named (an AIOps answer is its conclusion).
    run_kind: str = ""

    def choices_for(self, rating: str) -> tuple[tuple[str, str], ...]:
        """The reason (code, label) pairs a ``rating`` may carry (SPEC 6.1 polarity)."""
        return self.positive_reason_choices if rating == "positive" else self.reason_choices

    def reason_label(self, code: str) -> str:
        """How a saved reason ``code`` reads: the workspace's label for it (its reason
        list, SPEC 6.1), or the code with ``_`` as spaces once the workspace retired it."""
        for known, text in (*self.reason_choices, *self.positive_reason_choices):
            if known == code:
                return text
        return code.replace("_", " ")

    @property
    def label(self) -> str:
        """How the control names its target ("the answer"): ``name`` when one of many
        targets of one type needs its own ("tool call 3 (search)"), else the
        registry's label for the run's kind ("the conclusion" of an AIOps run,
        ``domain.target_types.control_label``)."""
        return self.name or control_label(self.target_type, self.run_kind)


def tool_call_name(tool_name: str) -> str:
    """How a thumbs control names one tool call ("tool call search_flights")."""
    return f"tool call {tool_name}"


def workspace_reasons(workspace: Workspace) -> list[str]:
    """The workspace's feedback reason codes (``domain.reasons.workspace_reasons``: its
    own list, or the default one; SPEC 6.1)."""
    return list(reason_registry(workspace.settings).codes())


def reason_choices(workspace: Workspace, rating: str = "negative") -> tuple[tuple[str, str], ...]:
    """(code, label) of the workspace's reasons a ``rating`` (default negative) may carry
    (the thumbs' reason select), in the workspace's order."""
    return tuple((row.code, row.label) for row in reason_registry(workspace.settings)
                 if row.allows(rating))
