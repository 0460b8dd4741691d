"""review_queue_item: the open items of finished runs with no answer-level target leave
their queues (session 11 finding). A queue completes an item on ratings of its run's
answer-level target (an AIOps run's report, else the run's last assistant message with
text); a finished run with neither (a FAILED AIOps run with only a step) stayed 0/N
forever and held the queue's progress below 100 %. From here on the fill rule
(``services/runs/queue_fill.py``: ``takes_in``, ``nothing_to_rate``) keeps such runs out;
this takes out the items already there, with their assignments (deleted first: SQLite
enforces the cascade only with its foreign keys on). Complete items and RUNNING runs'
items stay. Data only; the downgrade brings nothing back.

Revision ID: 6a7ddba9d1a7
Revises: f4c2a8e1d937
Create Date: 2026-12-03 08:00:00

"""
import sqlalchemy as sa
from alembic import op

revision = '6a7ddba9d1a7'
down_revision = 'f4c2a8e1d937'
branch_labels = None
depends_on = None

# What "text" means for an answer (domain.feedback.ANSWER_BLANKS when this was written):
# something left after trimming these.
BLANKS = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003"
          "\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")

# The open items of finished runs without an answer-level target.
_STALE = """
SELECT i.id FROM review_queue_item i JOIN diagnosis_run r ON r.id = i.run_pk
WHERE i.completed_at IS NULL AND r.status <> 'RUNNING'
  AND NOT (
    (r.kind = 'aiops' AND EXISTS (SELECT 1 FROM diagnostic_report d WHERE d.run_pk = r.id))
    OR EXISTS (SELECT 1 FROM message m WHERE m.run_pk = r.id AND m.role = 'assistant'
               AND {trim}(COALESCE(m.content, ''), :blanks) <> ''))
"""


def upgrade():
    bind = op.get_bind()
    stale = _STALE.format(trim='btrim' if bind.dialect.name == 'postgresql' else 'trim')
    bind.execute(sa.text(f"DELETE FROM review_queue_assignment WHERE item_id IN ({stale})"),
                 {'blanks': BLANKS})
    bind.execute(sa.text(f"DELETE FROM review_queue_item WHERE id IN ({stale})"),
                 {'blanks': BLANKS})


def downgrade():
    pass  # the items could never complete; the fill rule would not take them in again
