"""Admin in the browser: audit_event; user_account.must_change_password / last_login_at;
workspace.settings_version; one fault-category vocabulary (SPEC 7, 8)

Data: triage items and cases keep their fault category when it is a code of the merged
list (``reviewapp/domain/fault_categories.py``); ``OTHER`` becomes ``GENERAL``; any other
value (free text upper-cased by the old forms) is kept on the row and added to its
workspace's own list (``settings["fault_categories"]``), so nothing typed is lost and
the admin can rename or drop it on the settings page.

Revision ID: 5b1e0a9c4d27
Revises: 2eeb0f957fea
Create Date: 2026-12-01 16:10:00

"""
import json

import sqlalchemy as sa
from alembic import op

revision = '5b1e0a9c4d27'
down_revision = '2eeb0f957fea'
branch_labels = None
depends_on = None

# The merged list as it was when this migration was written (a migration must not
# follow later edits of the registry).
MERGED = (
    "GENERAL", "RESOURCE_EXHAUSTION", "DATABASE", "NETWORK", "DEPLOYMENT", "DEPENDENCY",
    "AUTH", "CONFIGURATION", "CAPACITY", "NO_EVIDENCE", "RETRIEVAL_MISS", "TOOL_FAILURE",
    "UNGROUNDED_CLAIM", "WRONG_ROOT_CAUSE", "INCOMPLETE_ANSWER", "UNSAFE_ADVICE",
    "CITATION_PROBLEM", "KNOWLEDGE_GAP",
)
LEGACY = {"OTHER": "GENERAL"}


def upgrade():
    op.create_table(
        'audit_event',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('workspace_id', sa.Integer(), nullable=True),
        sa.Column('actor_id', sa.Integer(), nullable=True),
        sa.Column('actor_label', sa.String(length=120), nullable=False),
        sa.Column('action', sa.String(length=48), nullable=False),
        sa.Column('target_type', sa.String(length=32), nullable=False),
        sa.Column('target_id', sa.String(length=64), nullable=False),
        sa.Column('target_label', sa.String(length=200), nullable=False),
        sa.Column('before', sa.JSON(none_as_null=True).with_variant(
            sa.dialects.postgresql.JSONB(none_as_null=True), 'postgresql'), nullable=True),
        sa.Column('after', sa.JSON(none_as_null=True).with_variant(
            sa.dialects.postgresql.JSONB(none_as_null=True), 'postgresql'), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['actor_id'], ['user_account.id'],
                                name=op.f('fk_audit_event_actor_id_user_account'), ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspace.id'],
                                name=op.f('fk_audit_event_workspace_id_workspace'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_event')),
    )
    op.create_index('ix_audit_event_workspace_id_id', 'audit_event', ['workspace_id', 'id'])
    with op.batch_alter_table('user_account', schema=None) as batch_op:
        batch_op.add_column(sa.Column('must_change_password', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
        batch_op.add_column(sa.Column('last_login_at', sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table('workspace', schema=None) as batch_op:
        batch_op.add_column(sa.Column('settings_version', sa.Integer(), nullable=False,
                                      server_default='1'))
    _merge_categories()


def _merge_categories():
    bind = op.get_bind()
    for table in ('triage_item', 'case_library'):
        for old, new in LEGACY.items():
            bind.execute(sa.text(f"UPDATE {table} SET fault_category = :new "
                                 "WHERE fault_category = :old"), {"old": old, "new": new})
    extras: dict[int, list[str]] = {}
    rows = bind.execute(sa.text(
        "SELECT DISTINCT t.workspace_id, t.fault_category FROM triage_item t "
        "WHERE t.fault_category IS NOT NULL "
        "UNION SELECT DISTINCT c.workspace_id, c.fault_category FROM case_library c "
        "WHERE c.fault_category IS NOT NULL")).all()
    for workspace_id, code in rows:
        if code not in MERGED and workspace_id is not None:
            extras.setdefault(workspace_id, []).append(code)
    for workspace_id, codes in extras.items():
        raw = bind.execute(sa.text("SELECT settings FROM workspace WHERE id = :id"),
                           {"id": workspace_id}).scalar()
        settings = (json.loads(raw) if isinstance(raw, str) else dict(raw or {}))
        current = settings.get("fault_categories") or list(MERGED)
        settings["fault_categories"] = [*current, *sorted(c for c in set(codes) if c not in current)]
        bind.execute(sa.text("UPDATE workspace SET settings = :s WHERE id = :id").bindparams(
            sa.bindparam("s", type_=sa.JSON().with_variant(
                sa.dialects.postgresql.JSONB(), 'postgresql'))),
            {"s": settings, "id": workspace_id})


def downgrade():
    with op.batch_alter_table('workspace', schema=None) as batch_op:
        batch_op.drop_column('settings_version')
    with op.batch_alter_table('user_account', schema=None) as batch_op:
        batch_op.drop_column('last_login_at')
        batch_op.drop_column('must_change_password')
    op.drop_index('ix_audit_event_workspace_id_id', table_name='audit_event')
    op.drop_table('audit_event')
