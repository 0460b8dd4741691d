"""user_feedback: an index of each author's rated runs per workspace (author_id,
workspace_id, run_pk), so the runs list's count for "reviewed by me" starts from the
user's ratings instead of testing every run of the workspace for one (issue 18).

Revision ID: a8d2f6c3e917
Revises: ed1ed48f1e1f
Create Date: 2026-12-02 10:05:00

"""
from alembic import op

revision = 'a8d2f6c3e917'
down_revision = 'ed1ed48f1e1f'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('ix_user_feedback_author_workspace_run', 'user_feedback',
                    ['author_id', 'workspace_id', 'run_pk'], unique=False)


def downgrade():
    op.drop_index('ix_user_feedback_author_workspace_run', table_name='user_feedback')
