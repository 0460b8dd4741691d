"""diagnosis_run.rateable: the run is finished and has something a reviewer can rate (an
assistant message with text, a diagnostic step or a report), kept by the services
(services/runs/rateable.py) and filled here for existing runs with the same rule; and
a partial index of rateable runs per workspace, newest first, which the review queue's
"next run I have not rated" reads instead of probing every run's parts (issue 18).

Revision ID: 9c1f4e7b2a60
Revises: d7e3a9c1f542
Create Date: 2026-12-02 09:50:00

"""
import sqlalchemy as sa
from alembic import op

revision = '9c1f4e7b2a60'
down_revision = 'd7e3a9c1f542'
branch_labels = None
depends_on = None

# What "text" means for an answer (domain.feedback.ANSWER_BLANKS when this was written):
# something left after trimming these.
BLANKS = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003"
          "\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")

_FILL = """
UPDATE diagnosis_run SET rateable = {true}
WHERE status <> 'RUNNING' AND (
  EXISTS (SELECT 1 FROM message m WHERE m.run_pk = diagnosis_run.id AND m.role = 'assistant'
          AND {trim}(COALESCE(m.content, ''), :blanks) <> '')
  OR EXISTS (SELECT 1 FROM diagnostic_step s WHERE s.run_pk = diagnosis_run.id)
  OR EXISTS (SELECT 1 FROM diagnostic_report d WHERE d.run_pk = diagnosis_run.id))
"""


def upgrade():
    op.add_column('diagnosis_run', sa.Column('rateable', sa.Boolean(), nullable=False,
                                             server_default=sa.false()))
    postgres = op.get_bind().dialect.name == 'postgresql'
    op.get_bind().execute(
        sa.text(_FILL.format(true='true' if postgres else '1',
                             trim='btrim' if postgres else 'trim')),
        {'blanks': BLANKS})
    op.create_index('ix_diagnosis_run_workspace_rateable', 'diagnosis_run',
                    ['workspace_id', 'created_at', 'id'], unique=False,
                    sqlite_where=sa.text('rateable = 1'), postgresql_where=sa.text('rateable'))


def downgrade():
    op.drop_index('ix_diagnosis_run_workspace_rateable', table_name='diagnosis_run',
                  sqlite_where=sa.text('rateable = 1'), postgresql_where=sa.text('rateable'))
    # Not a batch rebuild on SQLite (ALTER TABLE ... DROP COLUMN since 3.35): a rebuild
    # would lose the expression indexes of e2a1dca3b88e and the search index's trigger.
    op.drop_column('diagnosis_run', 'rateable')
