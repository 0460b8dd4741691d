"""Admin pages (SPEC 8), per workspace, for its admins: members and accounts, ingest
tokens, workspaces. Every rule is in ``services/admin``; a view reads the form, calls
one service and answers: 303 back to the page after a change (Post/Redirect/Get), the
page itself (200 / 201, ``no-store``) when it must show a secret once (a new account's
or a reset's password, a new token's secret; never kept in the session cookie, which is
signed, not encrypted), the page again with the service's message on a refused change
(400 / 409). A workspace the user does not administer answers 403, the same as a
missing one (SPEC 2)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import (
    Blueprint,
    Response,
    current_app,
    make_response,
    render_template,
    request,
    url_for,
)
from flask_login import login_required

from ..domain import export_format
from ..domain.audit import AUDIT_ACTIONS
from ..domain.workspace_settings import SETTINGS
from ..errors import Conflict, Forbidden, ValidationFailed
from ..extensions import db
from ..services import admin, audit
from .auth import current_actor
from .forms import (
    ActiveForm,
    AddMemberForm,
    AuditFilterForm,
    ConfirmForm,
    NewAccountForm,
    RenameWorkspaceForm,
    ResetPasswordForm,
    RoleForm,
    TokenForm,
    WorkspaceForm,
    first_invalid,
    settings_form,
    show_service_error,
)
from .responses import attachment, see_other

bp = Blueprint("admin", __name__, url_prefix="/admin")
# The sections of a workspace's admin pages: (endpoint in this blueprint, label).
ADMIN_TABS: tuple[tuple[str, str], ...] = (("members", "Members"), ("tokens", "Ingest tokens"),
                                            ("settings", "Settings"), ("audit", "Audit log"))


@bp.context_processor
def _admin_context() -> dict[str, Any]:
    return {"admin_tabs": ADMIN_TABS}


def _page(workspace_id: int, tab: str, status: int = 200, **context: Any) -> Response:
    """The members or tokens page of the workspace (access checked by the services)."""
    actor = current_actor()
    ws = admin.get_workspace(db.session, actor, workspace_id)
    if tab == "members":
        context["members"] = admin.list_members(db.session, actor, workspace_id)
        if "remove_id" in context:  # "Remove ... from the workspace?" (a member of this one)
            context["removing"] = _asked_about(context["members"], "user_id", context["remove_id"])
        if "deactivate_id" in context:  # "Deactivate ...'s account?" (one the admin manages)
            context["deactivating"] = _asked_about(context["members"], "user_id",
                                                   context["deactivate_id"])
            if not context["deactivating"].manageable:
                raise Forbidden()
    elif tab == "tokens":
        context["tokens"] = admin.token_rows(db.session, actor, workspace_id)
        if "revoke_id" in context:  # "Revoke the token ...?" (one of this workspace)
            context["revoking"] = _asked_about(context["tokens"], "id", context["revoke_id"])
    elif tab == "audit":
        context["form"] = form = AuditFilterForm(formdata=request.args)
        context["actions"] = AUDIT_ACTIONS
        try:
            context["filters"] = audit.read_filters(request.args)
        except ValidationFailed as refused:  # each refused one beside its field, no events
            if not show_service_error(form, refused):
                raise
            context.update(filters=audit.AuditFilters(), events=[], next_cursor=None,
                           position=None, focus=first_invalid(form))
            status = 400
        else:
            cursor = request.args.get("cursor") or None
            limit = current_app.config.get("AUDIT_PAGE_SIZE", audit.PAGE_SIZE)
            context["events"], context["next_cursor"] = audit.list_events(
                db.session, actor, workspace_id, context["filters"], cursor=cursor, limit=limit)
            context["position"] = audit.page_position(
                db.session, actor, workspace_id, context["filters"],
                context["events"][0] if cursor and context["events"] else None, limit)
    elif tab == "settings":
        context.setdefault("view", admin.get_settings(db.session, actor, workspace_id))
        context["settings"] = SETTINGS
    response = make_response(render_template(
        f"admin/{tab}.html", ws=ws, tab=tab, roles=admin.ROLE_CHOICES,
        workspaces=admin.administered(db.session, actor), **context), status)
    response.headers["Cache-Control"] = "no-store"
    return response


def _asked_about(rows: list[Any], key: str, wanted: int) -> Any:
    """The row a confirmation asks about (``getattr(row, key) == wanted``); ``Forbidden``
    when the page has none (another workspace's, or missing: one answer, SPEC 2)."""
    row = next((r for r in rows if getattr(r, key) == wanted), None)
    if row is None:
        raise Forbidden()
    return row


def _change(workspace_id: int, tab: str, message: str, call: Callable[[], object]) -> Response:
    """Run one change; 303 back with ``message``, or the page again with the refusal."""
    try:
        call()
    except (ValidationFailed, Conflict) as refused:
        db.session.rollback()
        return _page(workspace_id, tab, refused.status, error=refused.message)
    return see_other(message, url_for(f"admin.{tab}", workspace_id=workspace_id))


def _index(status: int = 200, error: str | None = None) -> Response:
    workspaces = admin.list_administered(db.session, current_actor())
    return make_response(render_template("admin/index.html", workspaces=workspaces,
                                         error=error), status)


@bp.get("/")
@login_required
def index() -> Response:
    """The workspaces the user administers: rename them, create another."""
    return _index()


@bp.post("/workspaces")
@login_required
def create_workspace() -> Response:
    """Create a workspace; its creator becomes its admin."""
    form = WorkspaceForm()
    try:
        ws = admin.create_workspace(db.session, current_actor(), form.slug.data or "",
                                    form.name.data or "")
    except (ValidationFailed, Conflict) as refused:
        db.session.rollback()
        return _index(refused.status, refused.message)
    return see_other(f"Workspace '{ws.slug}' created; you are its admin.",
                     url_for("admin.members", workspace_id=ws.id))


@bp.post("/<int:workspace_id>/rename")
@login_required
def rename_workspace(workspace_id: int) -> Response:
    """Give the workspace another display name."""
    form = RenameWorkspaceForm()
    try:
        admin.rename_workspace(db.session, current_actor(), workspace_id, form.name.data or "")
    except ValidationFailed as refused:
        db.session.rollback()
        return _index(refused.status, refused.message)
    return see_other("Workspace renamed.", url_for("admin.index"))


@bp.get("/<int:workspace_id>/audit", endpoint="audit")
@login_required
def audit_log(workspace_id: int) -> Response:
    """The audit log, newest first, 100 a page; filter by action."""
    return _page(workspace_id, "audit")


@bp.get("/<int:workspace_id>/audit.<any(csv, jsonl):fmt>")
@login_required
def audit_export(workspace_id: int, fmt: str) -> Response:
    """The whole audit log (filtered by action) as CSV or JSONL, streamed."""
    rows = audit.export_events(db.session, current_actor(), workspace_id,
                               audit.AuditFilters.from_params(request.args),
                               json_values=fmt == "jsonl")
    chunks = export_format.chunks(fmt, audit.EXPORT_COLUMNS, rows)
    return attachment(chunks, f"audit-{workspace_id}", fmt)


@bp.get("/<int:workspace_id>/members")
@login_required
def members(workspace_id: int) -> Response:
    """Members with role, last login and active flag; add / create forms."""
    return _page(workspace_id, "members")


@bp.post("/<int:workspace_id>/members/add")
@login_required
def add_member(workspace_id: int) -> Response:
    """Give an existing account a role here."""
    form = AddMemberForm()
    return _change(workspace_id, "members", f"'{form.username.data}' added.", lambda: admin.add_member(
        db.session, current_actor(), workspace_id, form.username.data or "", form.role.data or ""))


@bp.post("/<int:workspace_id>/members/new")
@login_required
def new_account(workspace_id: int) -> Response:
    """Create an account; its one-time password is shown on this answer only."""
    form = NewAccountForm()
    try:
        new = admin.create_member_account(db.session, current_actor(), workspace_id,
                                          form.username.data or "", form.role.data or "",
                                          form.password.data)
    except (ValidationFailed, Conflict) as refused:
        db.session.rollback()
        return _page(workspace_id, "members", refused.status, error=refused.message)
    return _page(workspace_id, "members", one_time={"user_id": new.user.id, "password": new.password})


@bp.post("/<int:workspace_id>/members/<int:user_id>/role")
@login_required
def change_role(workspace_id: int, user_id: int) -> Response:
    """Change a member's role."""
    form = RoleForm()
    return _change(workspace_id, "members", "Role changed.", lambda: admin.change_role(
        db.session, current_actor(), workspace_id, user_id, form.role.data or ""))


@bp.post("/<int:workspace_id>/members/<int:user_id>/remove")
@login_required
def remove_member(workspace_id: int, user_id: int) -> Response:
    """Remove the membership (the account stays) when the form says ``confirm=1`` (the
    confirmation's own button); otherwise the members page asking first, as the GET.
    403 for a user who is no member of the workspace, as for a foreign workspace."""
    if ConfirmForm().confirm.data != "1":
        return _page(workspace_id, "members", remove_id=user_id)
    return _change(workspace_id, "members", "Member removed.", lambda: admin.remove_member(
        db.session, current_actor(), workspace_id, user_id))


@bp.get("/<int:workspace_id>/members/<int:user_id>/remove")
@login_required
def confirm_remove_member(workspace_id: int, user_id: int) -> Response:
    """The members page asking "Remove <user> from <workspace>?" (new-user finding: one
    click removed at once); its button posts the removal, "Cancel" goes back. Works
    without JavaScript. 403 for a user who is no member of the workspace."""
    return _page(workspace_id, "members", remove_id=user_id)


@bp.post("/<int:workspace_id>/members/<int:user_id>/active")
@login_required
def set_active(workspace_id: int, user_id: int) -> Response:
    """Deactivate (``active=0``) or reactivate (``active=1``) an account the admin fully
    administers. Deactivating needs ``confirm=1`` (the question's own button); without it
    the members page asks first, as the GET ``confirm_deactivate``. Reactivating takes
    nothing away: one click."""
    form = ActiveForm()
    active = form.active.data == "1"
    if not active and ConfirmForm().confirm.data != "1":
        return _page(workspace_id, "members", deactivate_id=user_id)
    return _change(workspace_id, "members", "Account reactivated." if active else "Account deactivated.",
                   lambda: admin.set_active(db.session, current_actor(), workspace_id, user_id, active))


@bp.get("/<int:workspace_id>/members/<int:user_id>/deactivate")
@login_required
def confirm_deactivate(workspace_id: int, user_id: int) -> Response:
    """The members page asking "Deactivate <user>'s account?" (user-walk finding: one
    click deactivated at once); its button posts the deactivation, "Cancel" goes back.
    Works without JavaScript. 403 for a user who is no member of the workspace or whose
    account the admin does not fully administer (a shared account), as the POST."""
    return _page(workspace_id, "members", deactivate_id=user_id)


@bp.post("/<int:workspace_id>/members/<int:user_id>/password")
@login_required
def reset_password(workspace_id: int, user_id: int) -> Response:
    """Set a one-time password, shown on this answer only."""
    form = ResetPasswordForm()
    try:
        password = admin.reset_password(db.session, current_actor(), workspace_id, user_id,
                                        form.password.data)
    except (ValidationFailed, Conflict) as refused:
        db.session.rollback()
        return _page(workspace_id, "members", refused.status, error=refused.message)
    return _page(workspace_id, "members", one_time={"user_id": user_id, "password": password})


@bp.get("/<int:workspace_id>/tokens")
@login_required
def tokens(workspace_id: int) -> Response:
    """Ingest tokens: name, prefix, created by, last used, state; create and revoke."""
    return _page(workspace_id, "tokens")


@bp.post("/<int:workspace_id>/tokens")
@login_required
def create_token(workspace_id: int) -> Response:
    """Create a token: 201 with the tokens page showing its secret this once (``no-store``).
    The secret is on this answer only, never in the session cookie (signed, not encrypted:
    anyone holding the cookie could read it). In a browser, app.js turns the page's history
    entry into a GET of the tokens page, so a reload shows no secret and creates no second
    token."""
    form = TokenForm()
    try:
        new = admin.create_token(db.session, current_actor(), workspace_id, form.name.data or "")
    except ValidationFailed as refused:
        db.session.rollback()
        return _page(workspace_id, "tokens", refused.status, error=refused.message)
    return _page(workspace_id, "tokens", 201, new_token={"name": new.token.name,
                                                         "secret": new.secret})


@bp.post("/<int:workspace_id>/tokens/<int:token_id>/revoke")
@login_required
def revoke_token(workspace_id: int, token_id: int) -> Response:
    """Revoke a token of this workspace when the form says ``confirm=1`` (the question's
    own button); otherwise the tokens page asking first, as the GET. 403 for a token of
    another workspace or a missing one."""
    if ConfirmForm().confirm.data != "1":
        return _page(workspace_id, "tokens", revoke_id=token_id)
    return _change(workspace_id, "tokens", "Token revoked.", lambda: admin.revoke_token(
        db.session, current_actor(), token_id, workspace_id))


@bp.get("/<int:workspace_id>/tokens/<int:token_id>/revoke")
@login_required
def confirm_revoke_token(workspace_id: int, token_id: int) -> Response:
    """The tokens page asking "Revoke the token <name>?" (user-walk finding: one click
    revoked at once); its button posts the revocation, "Cancel" goes back. Works without
    JavaScript. 403 for a token of another workspace or a missing one."""
    return _page(workspace_id, "tokens", revoke_id=token_id)


@bp.get("/<int:workspace_id>/settings")
@login_required
def settings(workspace_id: int) -> Response:
    """The workspace settings, one versioned form (SPEC 8)."""
    return _page(workspace_id, "settings")


@bp.post("/<int:workspace_id>/settings")
@login_required
def save_settings(workspace_id: int) -> Response:
    """Save the settings; a stale version gets 409 with what was typed kept in the form
    (now on the current version) and the saved value beside each field that differs, an
    invalid value 400 with the typed values in the form."""
    form = settings_form(SETTINGS)
    typed = {row.code: form[row.code].data or "" for row in SETTINGS}
    try:
        admin.update_settings(db.session, current_actor(), workspace_id, form.version.data, typed)
    except ValidationFailed as refused:
        db.session.rollback()
        view = admin.get_settings(db.session, current_actor(), workspace_id)
        shown = admin.SettingsView(workspace_id, view.version, typed)
        if refused.field not in {row.code for row in SETTINGS}:
            return _page(workspace_id, "settings", 400, view=shown, error=refused.message)
        # The reason once, beside its field (which takes the focus); the banner only says so.
        return _page(workspace_id, "settings", 400, view=shown, error_field=refused.field,
                     field_error=refused.reason, error="Nothing was saved: fix the field marked below.")
    except Conflict as stale:
        db.session.rollback()
        view = admin.get_settings(db.session, current_actor(), workspace_id)
        saved_now = {code: text for code, text in view.values.items()
                     if text.replace("\r\n", "\n").strip() != typed.get(code, "").replace("\r\n", "\n").strip()}
        return _page(workspace_id, "settings", 409, error=stale.message,
                     view=admin.SettingsView(workspace_id, view.version, typed), saved_now=saved_now)
    return see_other("Settings saved.", url_for("admin.settings", workspace_id=workspace_id))
