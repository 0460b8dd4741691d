"""Workspace settings (SPEC 8): read and save the settings of ``domain.workspace_settings.
SETTINGS`` as one versioned page, and the fault-category check that triage and cases share.

A save carries the version the page showed; the write is a compare-and-swap on
``workspace.settings_version``, so a stale tab gets ``Conflict`` (409) with the current
values instead of overwriting a colleague's change. Every changed key is recorded in the
audit log (one ``settings.change`` event: before → after of the changed keys).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ...actors import Actor, Role
from ...domain.audit import SETTINGS_CHANGE
from ...domain.fault_categories import FaultCategory, category_named, workspace_categories
from ...domain.vocabulary import Registry
from ...domain.workspace_settings import SETTINGS, time_zone_of
from ...errors import Conflict, Forbidden, ValidationFailed
from ...models import AuditEvent, Case, Workspace
from ..access import require_role
from ..audit import record_event


@dataclass(frozen=True)
class SettingsView:
    """The settings page: ``values`` maps each setting code to its text on the page."""

    workspace_id: int
    version: int
    values: dict[str, str]

    def as_dict(self) -> dict[str, Any]:
        return {"version": self.version, "values": self.values}


def _view(ws: Workspace) -> SettingsView:
    settings = ws.settings or {}
    return SettingsView(ws.id, ws.settings_version,
                        {row.code: row.show(settings) for row in SETTINGS})


def get_settings(session: Session, actor: Actor, workspace_id: int) -> SettingsView:
    """The workspace's settings as the page shows them. Admins of it only. Raises
    ``Forbidden`` (also for a missing workspace)."""
    require_role(session, actor, workspace_id, Role.ADMIN)
    ws = session.get(Workspace, workspace_id)
    if ws is None:
        raise Forbidden()
    view = _view(ws)
    session.commit()
    return view


def _version(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValidationFailed("version", "must be the settings version the page showed") from None



def _stale(session: Session, actor: Actor, workspace_id: int, current: SettingsView) -> Conflict:
    """The ``Conflict`` of a stale settings save, naming who saved last as the triage and
    case 409s do (the latest audited ``settings.change``): "by you, in another tab or
    window,", "by <username>", or nobody named when none is recorded."""
    last = session.execute(
        select(AuditEvent.actor_id, AuditEvent.actor_label)
        .where(AuditEvent.workspace_id == workspace_id, AuditEvent.action == SETTINGS_CHANGE)
        .order_by(AuditEvent.id.desc()).limit(1)).first()
    who = "" if last is None else (" by you, in another tab or window," if last[0] == actor.user_id
                                   and last[0] is not None else f" by {last[1]}")
    return Conflict(f"The settings were changed{who} since this page was loaded; nothing was saved. "
                    "Here are the current values.", details=current.as_dict())

def update_settings(session: Session, actor: Actor, workspace_id: int, version: Any,
                    values: Mapping[str, str]) -> SettingsView:
    """Save the settings of ``values`` (setting code → the page's text; codes left out
    stay as they are) when ``version`` is still the current one. Admins of the workspace
    only. The version is compared before the values are read: a stale tab always gets
    the current values. Audited when something changed (the version moves on only then). Raises
    ``Forbidden``, ``ValidationFailed`` (field: the setting's code, or ``version``),
    ``Conflict`` (stale version; ``details`` = the current values)."""
    expected = _version(version)
    require_role(session, actor, workspace_id, Role.ADMIN)
    ws = session.get(Workspace, workspace_id)
    if ws is None:
        raise Forbidden()
    if ws.settings_version != expected:
        current = _view(ws)
        raise _stale(session, actor, workspace_id, current)
    unknown = sorted(set(values) - set(SETTINGS.codes()))
    if unknown:
        raise ValidationFailed(unknown[0], f"not a setting; settings are {', '.join(SETTINGS.codes())}")
    parsed: dict[str, Any] = {}
    for code, text in values.items():
        try:
            parsed[code] = SETTINGS.get(code).parse(text if isinstance(text, str) else "")
        except ValueError as invalid:
            raise ValidationFailed(code, str(invalid)) from None
    old = dict(ws.settings or {})
    # Changed = what the app applies differs (saving the defaults as shown changes nothing).
    changed = sorted(k for k, v in parsed.items()
                     if SETTINGS.get(k).show(old) != SETTINGS.get(k).show({**old, k: v}))
    new = {**old, **{k: parsed[k] for k in changed}}
    if changed:
        done = session.execute(
            update(Workspace).where(Workspace.id == workspace_id,
                                    Workspace.settings_version == expected)
            .values(settings=new, settings_version=expected + 1)
            .execution_options(synchronize_session=False))
        if done.rowcount != 1:  # another save won the race since the read above
            session.rollback()
            ws = session.get(Workspace, workspace_id)
            raise _stale(session, actor, workspace_id, _view(ws))
        record_event(session, actor, workspace_id=workspace_id, action="settings.change",
                     target_type="workspace", target_id=workspace_id, target_label=ws.slug,
                     before={k: old.get(k) for k in changed}, after={k: new[k] for k in changed})
    session.commit()
    session.expire_all()
    return _view(session.get(Workspace, workspace_id))


def categories_of(session: Session, workspace_id: int) -> Registry[FaultCategory]:
    """The workspace's fault-category vocabulary (no access check: for services that
    already checked access to something of the workspace)."""
    return workspace_categories(session.scalar(select(Workspace.settings)
                                               .where(Workspace.id == workspace_id)))


def time_zone_in(session: Session, workspace_id: int) -> str:
    """The IANA zone the workspace's pages show its times in (``time_zone_of`` its
    settings: UTC by default). No access check, as ``categories_of``."""
    return time_zone_of(session.scalar(select(Workspace.settings)
                                       .where(Workspace.id == workspace_id)))


def check_category(session: Session, workspace_id: int, value: str | None, *,
                   required: bool = False) -> str | None:
    """The code of the workspace's fault categories that ``value`` names (surrounding
    spaces ignored; the code, or a code or label in any case: ``category_named``);
    ``None`` for blank unless ``required``. Raises
    ``ValidationFailed`` (``fault_category``) naming the allowed categories by their labels,
    as the pages' selects show them (SPEC 7); its ``details`` are ``{"allowed": [codes]}``."""
    code = (value or "").strip()
    if not code and not required:
        return None
    allowed = categories_of(session, workspace_id)
    named = category_named(allowed, code)
    if named is None:
        raise ValidationFailed("fault_category",
                               f"'{code[:64]}' is not a category of this workspace; "
                               f"use one of {', '.join(label for _, label in allowed.choices())}",
                               details={"allowed": list(allowed.codes())})
    return named


def category_filter(session: Session, workspace_ids: list[int], typed: str) -> str:
    """A case-library filter's fault category (the case list and its export, SPEC 7, 8)
    as the code stored on cases: ``typed`` as a code or a label of any of
    ``workspace_ids``' categories, ignoring case and surrounding blanks ("Disk full",
    "disk_full" -> ``DISK_FULL``); else ``typed`` upper-cased when a case of those
    workspaces still carries it (a code since dropped from the list). No access check
    (the caller scoped ``workspace_ids`` to the actor). Raises ``ValidationFailed``
    (``fault_category``) listing the categories by label when it names nothing."""
    labels: dict[str, None] = {}  # over the workspaces, in list order
    for settings in session.scalars(select(Workspace.settings)
                                    .where(Workspace.id.in_(workspace_ids)).order_by(Workspace.id)):
        categories = workspace_categories(settings)
        named = category_named(categories, typed.strip())
        if named is not None:
            return named
        labels.update(dict.fromkeys(label for _, label in categories.choices()))
    code = typed.strip().upper()
    carried = session.scalar(select(Case.case_id).where(
        Case.workspace_id.in_(workspace_ids), Case.fault_category == code).limit(1))
    if carried is not None:
        return code
    raise ValidationFailed("fault_category",
                           f"'{typed.strip()[:64]}' is no fault category of your workspaces "
                           f"nor of any case: use one of {', '.join(labels)}")
