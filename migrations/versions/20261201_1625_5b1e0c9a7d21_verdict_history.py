"""What a verdict leaves behind (issue 17): withdrawn / flagged cases (SPEC 7), triage item
history (automatic notes with their time), earlier text of rated parts (SPEC 10)

Revision ID: 5b1e0c9a7d21
Revises: 3c9c8ade23b7
Create Date: 2026-12-01 16:10:00

"""
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = '5b1e0c9a7d21'
down_revision = '3c9c8ade23b7'
branch_labels = None
depends_on = None

_NOW = sa.text('(CURRENT_TIMESTAMP)')


def upgrade():
    with op.batch_alter_table('case_library', schema=None) as batch_op:
        batch_op.add_column(sa.Column('withdrawn_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('run_not_useful_at', sa.DateTime(timezone=True), nullable=True))

    op.create_table(
        'triage_event',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('item_id', sa.Integer(), nullable=False),
        sa.Column('workspace_id', sa.Integer(), nullable=False),
        sa.Column('actor_id', sa.Integer(), nullable=True),
        sa.Column('action', sa.String(length=32), nullable=False),
        sa.Column('detail', sa.Text(), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), server_default=_NOW, nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), server_default=_NOW, nullable=False),
        sa.ForeignKeyConstraint(['item_id'], ['triage_item.id'],
                                name=op.f('fk_triage_event_item_id_triage_item'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspace.id'],
                                name=op.f('fk_triage_event_workspace_id_workspace'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['actor_id'], ['user_account.id'],
                                name=op.f('fk_triage_event_actor_id_user_account'), ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_triage_event')),
    )
    with op.batch_alter_table('triage_event', schema=None) as batch_op:
        batch_op.create_index('ix_triage_event_item', ['item_id', 'id'], unique=False)

    op.create_table(
        'target_revision',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('workspace_id', sa.Integer(), nullable=False),
        sa.Column('run_pk', sa.Integer(), nullable=False),
        sa.Column('target_type', sa.String(length=32), nullable=False),
        sa.Column('target_id', sa.Integer(), nullable=False),
        sa.Column('content', sa.Text(), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), server_default=_NOW, nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), server_default=_NOW, nullable=False),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspace.id'],
                                name=op.f('fk_target_revision_workspace_id_workspace'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['run_pk'], ['diagnosis_run.id'],
                                name=op.f('fk_target_revision_run_pk_diagnosis_run'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_target_revision')),
    )
    with op.batch_alter_table('target_revision', schema=None) as batch_op:
        batch_op.create_index('ix_target_revision_target', ['target_type', 'target_id', 'created_at'],
                              unique=False)
        batch_op.create_index('ix_target_revision_run', ['run_pk'], unique=False)


def downgrade():
    with op.batch_alter_table('target_revision', schema=None) as batch_op:
        batch_op.drop_index('ix_target_revision_run')
        batch_op.drop_index('ix_target_revision_target')
    op.drop_table('target_revision')
    with op.batch_alter_table('triage_event', schema=None) as batch_op:
        batch_op.drop_index('ix_triage_event_item')
    op.drop_table('triage_event')
    with op.batch_alter_table('case_library', schema=None) as batch_op:
        batch_op.drop_column('run_not_useful_at')
        batch_op.drop_column('withdrawn_at')
