"""review_queue_removal: runs a lead removed from a queue, so its rule does not bring
them back (a queue edit re-applied the rule and the removed runs re-entered).

Runs removed before this migration left no record; they stay out until the rule is
applied again.

Revision ID: c5a9f2e7d134
Revises: b3d8e1f4a925
Create Date: 2026-12-02 05:50:00

"""
import sqlalchemy as sa
from alembic import op

revision = 'c5a9f2e7d134'
down_revision = 'b3d8e1f4a925'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('review_queue_removal',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('queue_id', sa.Integer(), nullable=False),
    sa.Column('run_pk', sa.Integer(), nullable=False),
    sa.Column('removed_by', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('(CURRENT_TIMESTAMP)'), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('(CURRENT_TIMESTAMP)'), nullable=False),
    sa.ForeignKeyConstraint(['queue_id'], ['review_queue.id'], name=op.f('fk_review_queue_removal_queue_id_review_queue'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['run_pk'], ['diagnosis_run.id'], name=op.f('fk_review_queue_removal_run_pk_diagnosis_run'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['removed_by'], ['user_account.id'], name=op.f('fk_review_queue_removal_removed_by_user_account'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_review_queue_removal')),
    sa.UniqueConstraint('queue_id', 'run_pk', name=op.f('uq_review_queue_removal_queue_id_run_pk'))
    )
    with op.batch_alter_table('review_queue_removal', schema=None) as batch_op:
        batch_op.create_index('ix_review_queue_removal_run', ['run_pk'], unique=False)


def downgrade():
    with op.batch_alter_table('review_queue_removal', schema=None) as batch_op:
        batch_op.drop_index('ix_review_queue_removal_run')
    op.drop_table('review_queue_removal')
