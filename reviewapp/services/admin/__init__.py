"""Users, workspaces, memberships, ingest tokens and workspace settings (SPEC 1, 2, 3, 8),
split by concern; every public name stays importable from ``reviewapp.services.admin``.

* ``accounts``   hashing, login, the cookie's user, one's own password and memberships
* ``members``    a workspace's members as its admins manage them (and the CLI)
* ``tokens``     ingest tokens
* ``workspaces`` create, rename, the ones an actor administers
* ``settings``   the workspace settings page (versioned) and the shared fault-category check
"""

from .accounts import (
    MIN_PASSWORD_LENGTH,
    SessionUser,
    actor_for,
    authenticate,
    change_own_password,
    check_new_password,
    end_all_sessions,
    fold_username,
    generate_password,
    get_user_by_username,
    hash_password,
    load_user,
    my_memberships,
    set_password,
)
from .members import (
    ROLE_CHOICES,
    MemberRow,
    NewAccount,
    add_member,
    change_role,
    create_member_account,
    create_user,
    list_members,
    parse_role,
    remove_member,
    reset_password,
    set_active,
    set_membership,
)
from .settings import (
    SettingsView,
    categories_of,
    category_filter,
    check_category,
    get_settings,
    update_settings,
)
from .tokens import (
    TOKEN_PREFIX,
    NewToken,
    TokenRow,
    authenticate_token,
    create_token,
    list_tokens,
    revoke_token,
    token_rows,
)
from .workspaces import (
    SLUG_RE,
    administered,
    create_workspace,
    get_workspace,
    get_workspace_by_slug,
    list_administered,
    rename_workspace,
)

__all__ = [
    "MIN_PASSWORD_LENGTH", "ROLE_CHOICES", "SLUG_RE", "TOKEN_PREFIX", "MemberRow", "NewAccount",
    "NewToken", "SessionUser", "SettingsView", "TokenRow", "categories_of", "category_filter", "check_category",
    "get_settings", "update_settings", "actor_for", "add_member", "administered", "authenticate",
    "authenticate_token", "change_own_password", "change_role", "check_new_password",
    "create_member_account", "create_token", "create_user", "create_workspace",
    "end_all_sessions", "fold_username", "generate_password", "get_user_by_username", "get_workspace",
    "get_workspace_by_slug", "hash_password", "list_administered", "list_members", "list_tokens", "load_user",
    "my_memberships", "parse_role", "remove_member", "rename_workspace", "reset_password",
    "revoke_token", "set_active", "set_membership", "set_password", "token_rows",
]
