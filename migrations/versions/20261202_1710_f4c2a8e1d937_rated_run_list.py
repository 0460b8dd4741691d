"""rated_run: per user, each run holding a rating of theirs, with the run's workspace and
creation time, indexed (author_id, workspace_id, run_created_at, run_pk): the runs
list's "reviewed by me" in list order (issue 18), filled from the existing ratings.

From here on the services keep it (``services/rated_runs.py``) and ``flask dashboard
rebuild`` recomputes it the same way.

Revision ID: f4c2a8e1d937
Revises: b3f1c7d9e254
Create Date: 2026-12-02 17:10:00

"""
import sqlalchemy as sa
from alembic import op

revision = 'f4c2a8e1d937'
down_revision = 'b3f1c7d9e254'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'rated_run',
        sa.Column('run_pk', sa.Integer(), nullable=False),
        sa.Column('author_id', sa.Integer(), nullable=False),
        sa.Column('workspace_id', sa.Integer(), nullable=False),
        sa.Column('run_created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['run_pk'], ['diagnosis_run.id'],
                                name=op.f('fk_rated_run_run_pk_diagnosis_run'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['author_id'], ['user_account.id'],
                                name=op.f('fk_rated_run_author_id_user_account'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspace.id'],
                                name=op.f('fk_rated_run_workspace_id_workspace'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('run_pk', 'author_id', name=op.f('pk_rated_run')),
    )
    _backfill()
    op.create_index('ix_rated_run_author_workspace_created', 'rated_run',
                    ['author_id', 'workspace_id', 'run_created_at', 'run_pk'], unique=False)


def _backfill():
    # Each (author, run) pair of the ratings once, with the run's workspace and time.
    op.get_bind().execute(sa.text(
        "INSERT INTO rated_run (run_pk, author_id, workspace_id, run_created_at) "
        "SELECT r.id, m.author_id, r.workspace_id, r.created_at "
        "FROM (SELECT DISTINCT author_id, run_pk FROM user_feedback) m "
        "JOIN diagnosis_run r ON r.id = m.run_pk"))


def downgrade():
    op.drop_index('ix_rated_run_author_workspace_created', table_name='rated_run')
    op.drop_table('rated_run')
