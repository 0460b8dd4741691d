"""Triage items: index by assignee.

An index on (assignee_id, workspace_id): the triage list's Assignee filter offers who holds
an item of the lead's workspaces (a former lead keeps theirs), one probe per person.

Revision ID: 4d8e2b7c9a13
Revises: 1f6c3a9e5d24
Create Date: 2026-12-03 22:15:00

"""
from alembic import op

revision = '4d8e2b7c9a13'
down_revision = '1f6c3a9e5d24'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('ix_triage_item_assignee_workspace', 'triage_item', ['assignee_id', 'workspace_id'],
                    unique=False)


def downgrade():
    op.drop_index('ix_triage_item_assignee_workspace', table_name='triage_item')
