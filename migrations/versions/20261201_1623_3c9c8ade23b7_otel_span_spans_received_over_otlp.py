"""otel_span: spans received over OTLP

Revision ID: 3c9c8ade23b7
Revises: 5b7e0c1d9a42
Create Date: 2026-12-01 16:05:53.536062

"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

# revision identifiers, used by Alembic.
revision = '3c9c8ade23b7'
down_revision = '5b7e0c1d9a42'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('otel_span',
    sa.Column('workspace_id', sa.Integer(), nullable=False),
    sa.Column('trace_id', sa.String(length=32), nullable=False),
    sa.Column('span_id', sa.String(length=16), nullable=False),
    sa.Column('parent_span_id', sa.String(length=16), nullable=True),
    sa.Column('is_tool', sa.Boolean(), nullable=False),
    sa.Column('start_ns', sa.BigInteger(), nullable=False),
    sa.Column('data', sa.JSON().with_variant(postgresql.JSONB(), 'postgresql'), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspace.id'], name=op.f('fk_otel_span_workspace_id_workspace'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('workspace_id', 'trace_id', 'span_id', name=op.f('pk_otel_span'))
    )


def downgrade():
    op.drop_table('otel_span')
