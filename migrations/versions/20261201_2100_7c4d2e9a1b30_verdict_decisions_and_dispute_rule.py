"""verdict_decision (a lead's decision on a disputed run) and review_queue.dispute_rule
(which split of N > 1 ratings needs a decision), issue 16

Revision ID: 7c4d2e9a1b30
Revises: 7e1488da72e7
Create Date: 2026-12-01 20:30:00

"""
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = '7c4d2e9a1b30'
down_revision = '7e1488da72e7'
branch_labels = None
depends_on = None

_NOW = sa.text('(CURRENT_TIMESTAMP)')


def upgrade():
    with op.batch_alter_table('review_queue', schema=None) as batch_op:
        batch_op.add_column(sa.Column('dispute_rule', sa.String(length=16), server_default='tie',
                                      nullable=False))
        batch_op.create_check_constraint(op.f('ck_review_queue_dispute_rule'), "dispute_rule IN ('tie', 'any_split')")

    op.create_table(
        'verdict_decision',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('workspace_id', sa.Integer(), nullable=False),
        sa.Column('run_pk', sa.Integer(), nullable=False),
        sa.Column('queue_id', sa.Integer(), nullable=True),
        sa.Column('decided_by', sa.Integer(), nullable=True),
        sa.Column('verdict', sa.String(length=16), nullable=False),
        sa.Column('note', sa.Text(), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), server_default=_NOW, nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), server_default=_NOW, nullable=False),
        sa.CheckConstraint("verdict IN ('useful', 'not_useful')", name=op.f('ck_verdict_decision_verdict')),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspace.id'],
                                name=op.f('fk_verdict_decision_workspace_id_workspace'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['run_pk'], ['diagnosis_run.id'],
                                name=op.f('fk_verdict_decision_run_pk_diagnosis_run'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['queue_id'], ['review_queue.id'],
                                name=op.f('fk_verdict_decision_queue_id_review_queue'), ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['decided_by'], ['user_account.id'],
                                name=op.f('fk_verdict_decision_decided_by_user_account'), ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_verdict_decision')),
    )
    with op.batch_alter_table('verdict_decision', schema=None) as batch_op:
        batch_op.create_index('ix_verdict_decision_run', ['run_pk', 'id'], unique=False)
        batch_op.create_index('ix_verdict_decision_workspace_created',
                              ['workspace_id', 'created_at', 'id'], unique=False)


def downgrade():
    with op.batch_alter_table('verdict_decision', schema=None) as batch_op:
        batch_op.drop_index('ix_verdict_decision_workspace_created')
        batch_op.drop_index('ix_verdict_decision_run')
    op.drop_table('verdict_decision')
    with op.batch_alter_table('review_queue', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_review_queue_dispute_rule'), type_='check')
        batch_op.drop_column('dispute_rule')
