"""The dashboard's roll-ups (issue 18): dashboard_run_day and dashboard_tool_day, filled
from the existing runs, tool calls and tool-call ratings.

Counts per workspace and UTC day of the run (``coalesce(started_at, created_at)``):
runs per value of kind, status, verdict, score band and verifier verdict ("" = none);
per tool its calls, failed calls, ratings, negative ratings and calls with a negative
rating. From here on the services keep them (``services/rollups.py``);
``flask dashboard rebuild`` recomputes them the same way.

Revision ID: 3e6019ba2422
Revises: 7c2d41a9e0b3
Create Date: 2026-12-01 20:45:00

"""
import sqlalchemy as sa
from alembic import op

revision = '3e6019ba2422'
down_revision = '7c2d41a9e0b3'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'dashboard_run_day',
        sa.Column('workspace_id', sa.Integer(), nullable=False),
        sa.Column('dimension', sa.String(length=16), nullable=False),
        sa.Column('day', sa.Date(), nullable=False),
        sa.Column('value', sa.String(length=32), nullable=False),
        sa.Column('runs', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspace.id'],
                                name=op.f('fk_dashboard_run_day_workspace_id_workspace'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('workspace_id', 'dimension', 'day', 'value',
                                name=op.f('pk_dashboard_run_day')),
    )
    op.create_table(
        'dashboard_tool_day',
        sa.Column('workspace_id', sa.Integer(), nullable=False),
        sa.Column('day', sa.Date(), nullable=False),
        sa.Column('tool_name', sa.String(length=200), nullable=False),
        sa.Column('calls', sa.Integer(), nullable=False),
        sa.Column('failed', sa.Integer(), nullable=False),
        sa.Column('rated', sa.Integer(), nullable=False),
        sa.Column('negative', sa.Integer(), nullable=False),
        sa.Column('disliked_calls', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspace.id'],
                                name=op.f('fk_dashboard_tool_day_workspace_id_workspace'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('workspace_id', 'day', 'tool_name',
                                name=op.f('pk_dashboard_tool_day')),
    )
    _backfill()


def _backfill():
    bind = op.get_bind()
    if bind.dialect.name == 'postgresql':
        day = "(timezone('UTC', coalesce(r.started_at, r.created_at)))::date"
    else:
        day = "date(coalesce(r.started_at, r.created_at))"
    band = ("CASE WHEN r.evidence_score IS NULL THEN '' WHEN r.evidence_score >= 90 THEN '9' "
            "WHEN r.evidence_score < 10 THEN '0' "
            "ELSE CAST(r.evidence_score / 10 AS VARCHAR(2)) END")
    dimensions = {
        'kind': "coalesce(r.kind, '')", 'status': "coalesce(r.status, '')",
        'verdict': "coalesce(r.feedback, '')", 'score_band': band,
        'verifier': "coalesce(r.verifier_verdict, '')",
    }
    for name, value in dimensions.items():
        bind.execute(sa.text(
            "INSERT INTO dashboard_run_day (workspace_id, dimension, day, value, runs) "
            f"SELECT r.workspace_id, '{name}', {day}, {value}, count(*) "
            f"FROM diagnosis_run r GROUP BY r.workspace_id, {day}, {value}"))
    bind.execute(sa.text(
        "INSERT INTO dashboard_tool_day "
        "(workspace_id, day, tool_name, calls, failed, rated, negative, disliked_calls) "
        "SELECT workspace_id, day, tool_name, sum(calls), sum(failed), sum(rated), "
        "sum(negative), sum(disliked) FROM ("
        f" SELECT r.workspace_id AS workspace_id, {day} AS day, t.tool_name AS tool_name,"
        "  1 AS calls, CASE WHEN t.status = 'failed' THEN 1 ELSE 0 END AS failed,"
        "  0 AS rated, 0 AS negative, 0 AS disliked"
        "  FROM tool_call_audit t JOIN diagnosis_run r ON r.id = t.run_pk"
        " UNION ALL"
        f" SELECT r.workspace_id, {day}, t.tool_name, 0, 0, count(*),"
        "  sum(CASE WHEN f.rating = 'negative' THEN 1 ELSE 0 END),"
        "  CASE WHEN sum(CASE WHEN f.rating = 'negative' THEN 1 ELSE 0 END) > 0"
        "  THEN 1 ELSE 0 END"
        "  FROM user_feedback f"
        "  JOIN tool_call_audit t ON t.run_pk = f.target_id AND t.id = f.subject_key"
        "   AND t.workspace_id = f.workspace_id"
        "  JOIN diagnosis_run r ON r.id = f.run_pk"
        "  WHERE f.target_type = 'tool_call'"
        f"  GROUP BY r.workspace_id, {day}, t.tool_name, t.id"
        ") AS counted GROUP BY workspace_id, day, tool_name"))


def downgrade():
    op.drop_table('dashboard_tool_day')
    op.drop_table('dashboard_run_day')
