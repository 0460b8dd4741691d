"""The feedback export's filters (SPEC 8): parsed from query-string / CLI values, and the
reason check that needs the exported workspaces' reasons."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any, ClassVar

from sqlalchemy.orm import Session

from ..actors import Actor
from ..errors import ValidationFailed
from ..models import Rating, RunKind, TargetType
from .access import role_workspace_choice
from .params import (
    Refusals,
    choice_param,
    read_date_range,
    text_param,
    workspace_param,
    workspace_ref,
)


@dataclass(frozen=True)
class FeedbackFilters:
    """Filters of the feedback export: workspace, the day a rating was created (UTC,
    inclusive), ``rating``, ``target_type``, reviewer ``reason`` code and the run's
    ``kind``."""

    workspace_id: int | None = None
    date_from: date | None = None
    date_to: date | None = None
    rating: str | None = None
    target_type: str | None = None
    reason: str | None = None
    kind: str | None = None

    # The query-string names ``from_params`` reads (the export refuses any other).
    PARAM_NAMES: ClassVar[tuple[str, ...]] = (
        "workspace", "date_from", "date_to", "rating", "target_type", "reason", "kind")

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> FeedbackFilters:
        """Parse query-string / CLI values (``services.params``). Raises one
        ``ValidationFailed`` naming every refused field (``problems``)."""
        refused = Refusals()
        workspace_id = refused.read(workspace_param, params)
        date_from, date_to = read_date_range(params, refused)
        filters = cls(
            workspace_id=workspace_id, date_from=date_from, date_to=date_to,
            rating=refused.read(choice_param, params, "rating", (r.value for r in Rating)),
            target_type=refused.read(choice_param, params, "target_type", (t.value for t in TargetType)),
            reason=refused.read(text_param, params, "reason", 80),
            kind=refused.read(choice_param, params, "kind", (k.value for k in RunKind)),
        )
        refused.check()
        return filters


def reason_refusal(reason: str, choices: Iterable[tuple[str, str]],
                   retired: Iterable[str] = ()) -> str | None:
    """Why a reason filter's ``reason`` finds nothing on purpose, else ``None``: it must
    be one of ``choices`` ((code, label) of the reasons the filtered workspaces rate
    with) or of the ``retired`` codes their ratings still carry
    (``triage._rows.filter_reasons``), as a rating's reason must be one of the first
    (``feedback.ratings._check_reason``): an unknown code would find nothing, silently.
    Lists them as "Label (code)", then "; or a retired one: code, ...". The one wording of
    the feedback export's and the triage list's reason filters."""
    listed, old = tuple(choices), tuple(retired)
    if not listed and not old:
        return "must be blank: there is no workspace to export"
    if reason in {code for code, _ in listed} or reason in old:
        return None
    also = f"; or a retired one: {', '.join(old)}" if old else ""
    return "must be one of " + ", ".join(f"{label} ({code})" for code, label in listed) + also


def check_reason(reason: str, choices: Iterable[tuple[str, str]], retired: Iterable[str] = ()) -> None:
    """``reason_refusal`` as an error. Raises ``ValidationFailed`` on ``reason``."""
    refusal = reason_refusal(reason, choices, retired)
    if refusal is not None:
        raise ValidationFailed("reason", refusal)


def with_workspace_id(session: Session, actor: Actor, params: Mapping[str, Any],
                      admin_of: list[int], refused: Refusals) -> dict[str, Any]:
    """``params`` with its ``workspace`` (an id or a short name, ``params.workspace_ref``)
    as the id the exports' own filters read. A workspace the actor does not administer
    (``admin_of``) is kept in ``refused`` in the triage and case lists' words
    (``access.role_workspace_choice``: ``no_workspace``, or the role they hold there) and
    left out, as is one of a refused shape."""
    out = dict(params)
    if "workspace" not in params:
        return out
    ref = refused.read(workspace_ref, params)
    ws_id, reason = role_workspace_choice(session, actor, ref, admin_of, "admins export its data")
    if reason:
        refused.add("workspace", reason)
    if ws_id is None or reason:
        out.pop("workspace")
    else:
        out["workspace"] = str(ws_id)
    return out
