"""user_rated_runs: per user and workspace, the runs holding a rating of the user and
how many of them are rateable (issue 18), filled from the existing ratings.

From here on the services keep it (``services/rated_runs.py``) and ``flask dashboard
rebuild`` recomputes it the same way; the review queue's progress and the runs list's
"reviewed by me" count read it instead of every rating of the user.

Revision ID: b3f1c7d9e254
Revises: a8d2f6c3e917
Create Date: 2026-12-02 13:30:00

"""
import sqlalchemy as sa
from alembic import op

revision = 'b3f1c7d9e254'
down_revision = 'a8d2f6c3e917'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'user_rated_runs',
        sa.Column('author_id', sa.Integer(), nullable=False),
        sa.Column('workspace_id', sa.Integer(), nullable=False),
        sa.Column('runs', sa.Integer(), nullable=False),
        sa.Column('rateable_runs', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['author_id'], ['user_account.id'],
                                name=op.f('fk_user_rated_runs_author_id_user_account'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspace.id'],
                                name=op.f('fk_user_rated_runs_workspace_id_workspace'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('author_id', 'workspace_id', name=op.f('pk_user_rated_runs')),
    )
    _backfill()


def _backfill():
    # The rated runs of each author and workspace (the (author_id, workspace_id, run_pk)
    # index gives them in order), then their rateable flag.
    rateable = "CASE WHEN r.rateable THEN 1 ELSE 0 END"
    op.get_bind().execute(sa.text(
        "INSERT INTO user_rated_runs (author_id, workspace_id, runs, rateable_runs) "
        f"SELECT m.author_id, m.workspace_id, count(*), sum({rateable}) "
        "FROM (SELECT DISTINCT author_id, workspace_id, run_pk FROM user_feedback) m "
        "JOIN diagnosis_run r ON r.id = m.run_pk "
        "GROUP BY m.author_id, m.workspace_id"))


def downgrade():
    op.drop_table('user_rated_runs')
