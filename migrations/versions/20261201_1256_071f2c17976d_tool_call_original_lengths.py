"""tool_call_audit: original lengths of arguments, result and error (SPEC 10: "cut at N of M")

Revision ID: 071f2c17976d
Revises: 26f4c712eb85
Create Date: 2026-12-01 12:56:50.025917

"""
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = '071f2c17976d'
down_revision = '26f4c712eb85'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('tool_call_audit', schema=None) as batch_op:
        batch_op.add_column(sa.Column('arguments_length', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('result_length', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('error_length', sa.Integer(), nullable=True))


def downgrade():
    with op.batch_alter_table('tool_call_audit', schema=None) as batch_op:
        batch_op.drop_column('error_length')
        batch_op.drop_column('result_length')
        batch_op.drop_column('arguments_length')
