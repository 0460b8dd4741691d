"""review_queue_item.ratings_count / completed_at: an item's completion stored (issue 16)

The next item of a queue was found by counting each item's answer-level raters; it is
now an index range (queue_id, completed_at null, id). Backfill: every item's count of
different reviewers who rated its run's answer-level target — a chat run's last
assistant message with text (an AIOps run's too when it has no report), an AIOps run's
report (``services/agreement.answer_rating_condition``, written out here in SQL) — and
``completed_at`` = now where that count reaches the queue's ``reviewers_per_run``.

Revision ID: 7c2d41a9e0b3
Revises: 5b1e0a9c4d27
Create Date: 2026-12-01 20:30:00

"""
import sqlalchemy as sa
from alembic import op

revision = '7c2d41a9e0b3'
down_revision = '5b1e0a9c4d27'
branch_labels = None
depends_on = None

# One item's raters: the answer-level condition of services/agreement.py in plain SQL.
_RATERS = """
SELECT COUNT(DISTINCT f.author_id) FROM user_feedback f
JOIN diagnosis_run r ON r.id = f.run_pk
WHERE f.run_pk = review_queue_item.run_pk AND f.subject_key = '' AND (
  (f.target_type = 'chat_message'
   AND EXISTS (SELECT 1 FROM message m WHERE m.id = f.target_id AND m.run_pk = r.id
               AND m.role = 'assistant' AND TRIM(COALESCE(m.content, '')) != ''
               AND NOT EXISTS (SELECT 1 FROM message l WHERE l.run_pk = m.run_pk
                               AND l.role = 'assistant' AND l.ordinal > m.ordinal
                               AND TRIM(COALESCE(l.content, '')) != ''))
   AND (r.kind = 'chat' OR NOT EXISTS (SELECT 1 FROM diagnostic_report d
                                        WHERE d.run_pk = r.id)))
  OR (f.target_type = 'diagnostic_report' AND r.kind = 'aiops'))
"""


def upgrade():
    with op.batch_alter_table('review_queue_item', schema=None) as batch_op:
        batch_op.add_column(sa.Column('ratings_count', sa.Integer(), server_default='0',
                                      nullable=False))
        batch_op.add_column(sa.Column('completed_at', sa.DateTime(timezone=True),
                                      nullable=True))
        batch_op.create_check_constraint(op.f('ck_review_queue_item_ratings_count'),
                                        'ratings_count >= 0')
        batch_op.create_index('ix_review_queue_item_open', ['queue_id', 'completed_at', 'id'],
                              unique=False)
    op.execute(f"UPDATE review_queue_item SET ratings_count = ({_RATERS})")
    op.execute("UPDATE review_queue_item SET completed_at = CURRENT_TIMESTAMP "
               "WHERE ratings_count >= (SELECT q.reviewers_per_run FROM review_queue q "
               "WHERE q.id = review_queue_item.queue_id)")


def downgrade():
    with op.batch_alter_table('review_queue_item', schema=None) as batch_op:
        batch_op.drop_index('ix_review_queue_item_open')
        batch_op.drop_constraint(op.f('ck_review_queue_item_ratings_count'), type_='check')
        batch_op.drop_column('completed_at')
        batch_op.drop_column('ratings_count')
