"""diagnosis_run: one index per sort order of the runs list besides time (issue 18), each
per workspace with the id last, so a list over one or several workspaces reads one index
range per workspace in the sort's order instead of scanning and sorting every run:
evidence score high first and low first (the expressions the sort uses: unscored runs
last either way), failed tool calls, tool calls.

Revision ID: e2a1dca3b88e
Revises: c5a9f2e7d134
Create Date: 2026-12-02 09:30:00

"""
import sqlalchemy as sa
from alembic import op

revision = 'e2a1dca3b88e'
down_revision = 'c5a9f2e7d134'
branch_labels = None
depends_on = None

INDEXES = (
    ('ix_diagnosis_run_workspace_score_high', ['workspace_id', sa.text('coalesce(evidence_score, -1)'), 'id']),
    ('ix_diagnosis_run_workspace_score_low', ['workspace_id', sa.text('coalesce(evidence_score, 101)'), 'id']),
    ('ix_diagnosis_run_workspace_failed', ['workspace_id', 'failed_tool_call_count', 'id']),
    ('ix_diagnosis_run_workspace_calls', ['workspace_id', 'tool_call_count', 'id']),
)


def upgrade():
    for name, columns in INDEXES:
        op.create_index(name, 'diagnosis_run', columns, unique=False)


def downgrade():
    for name, _ in reversed(INDEXES):
        op.drop_index(name, table_name='diagnosis_run')
