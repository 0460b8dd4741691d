"""The dashboard's triage roll-up (issue 18): dashboard_triage_day, triage items per
workspace, state and UTC day they were opened, filled from the existing items.

From here on the triage services keep it (``rollups.move_triage_item``) and ``flask
dashboard rebuild`` recomputes it the same way; the dashboard's backlog reads it instead
of counting every item.

Revision ID: d7e3a9c1f542
Revises: e2a1dca3b88e
Create Date: 2026-12-02 09:40:00

"""
import sqlalchemy as sa
from alembic import op

revision = 'd7e3a9c1f542'
down_revision = 'e2a1dca3b88e'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'dashboard_triage_day',
        sa.Column('workspace_id', sa.Integer(), nullable=False),
        sa.Column('state', sa.String(length=16), nullable=False),
        sa.Column('day', sa.Date(), nullable=False),
        sa.Column('items', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspace.id'],
                                name=op.f('fk_dashboard_triage_day_workspace_id_workspace'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('workspace_id', 'state', 'day',
                                name=op.f('pk_dashboard_triage_day')),
    )
    _backfill()


def _backfill():
    bind = op.get_bind()
    if bind.dialect.name == 'postgresql':
        day = "(timezone('UTC', t.created_at))::date"
    else:
        day = "date(t.created_at)"
    bind.execute(sa.text(
        "INSERT INTO dashboard_triage_day (workspace_id, state, day, items) "
        f"SELECT t.workspace_id, t.state, {day}, count(*) FROM triage_item t "
        f"GROUP BY t.workspace_id, t.state, {day}"))


def downgrade():
    op.drop_table('dashboard_triage_day')
