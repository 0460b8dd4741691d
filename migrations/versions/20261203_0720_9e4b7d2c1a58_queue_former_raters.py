"""review_queue_former_rater: in a queue that names its reviewers only their answer
ratings count (issue 16: an admin's or a lead's rating from the run page counted towards
an item's N, its verdict and disputes); a reviewer who stops being named keeps counting
for the ratings they gave, recorded here per (queue, run, user).

Backfill: who stopped being named left no record before this migration, except the
assignments an assigned queue keeps on the items a departed reviewer rated (their
finished work stays theirs): those ratings are recorded. Then every item of a named
queue is counted again — the different reviewers named on it, or recorded here, who
rated its run's answer-level target (the condition of the completion migration
7c2d41a9e0b3, ``services/answer.answer_rating_condition``, written out in SQL) — and
its ``completed_at`` re-derived: cleared below the queue's N, set to now where the
count reaches it and it had none; queues open to all are left as they are.

Revision ID: 9e4b7d2c1a58
Revises: 6a7ddba9d1a7
Create Date: 2026-12-03 07:20:00

"""
import sqlalchemy as sa
from alembic import op

revision = '9e4b7d2c1a58'
down_revision = '6a7ddba9d1a7'
branch_labels = None
depends_on = None


def _answer_rating(f: str, r: str) -> str:
    """SQL: the rating ``f`` (user_feedback) of run ``r`` (diagnosis_run) rates the run's
    answer-level target."""
    return f"""{f}.subject_key = '' AND (
  ({f}.target_type = 'chat_message'
   AND EXISTS (SELECT 1 FROM message m WHERE m.id = {f}.target_id AND m.run_pk = {r}.id
               AND m.role = 'assistant' AND TRIM(COALESCE(m.content, '')) != ''
               AND NOT EXISTS (SELECT 1 FROM message l WHERE l.run_pk = m.run_pk
                               AND l.role = 'assistant' AND l.ordinal > m.ordinal
                               AND TRIM(COALESCE(l.content, '')) != ''))
   AND ({r}.kind = 'chat' OR NOT EXISTS (SELECT 1 FROM diagnostic_report d
                                         WHERE d.run_pk = {r}.id)))
  OR ({f}.target_type = 'diagnostic_report' AND {r}.kind = 'aiops'))"""


_NAMED = "SELECT q.id FROM review_queue q WHERE q.reviewers = 'named'"
_NEEDED = ("(SELECT q.reviewers_per_run FROM review_queue q "
           "WHERE q.id = review_queue_item.queue_id)")


def upgrade():
    op.create_table('review_queue_former_rater',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('queue_id', sa.Integer(), nullable=False),
    sa.Column('run_pk', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('(CURRENT_TIMESTAMP)'), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('(CURRENT_TIMESTAMP)'), nullable=False),
    sa.ForeignKeyConstraint(['queue_id'], ['review_queue.id'], name=op.f('fk_review_queue_former_rater_queue_id_review_queue'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['run_pk'], ['diagnosis_run.id'], name=op.f('fk_review_queue_former_rater_run_pk_diagnosis_run'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['user_account.id'], name=op.f('fk_review_queue_former_rater_user_id_user_account'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_review_queue_former_rater')),
    sa.UniqueConstraint('queue_id', 'run_pk', 'user_id', name=op.f('uq_review_queue_former_rater_queue_id_run_pk_user_id'))
    )
    op.execute(f"""
INSERT INTO review_queue_former_rater (queue_id, run_pk, user_id)
SELECT DISTINCT i.queue_id, i.run_pk, a.user_id
FROM review_queue_assignment a JOIN review_queue_item i ON i.id = a.item_id
WHERE i.queue_id IN ({_NAMED})
  AND NOT EXISTS (SELECT 1 FROM review_queue_reviewer n
                  WHERE n.queue_id = i.queue_id AND n.user_id = a.user_id)
  AND EXISTS (SELECT 1 FROM user_feedback f JOIN diagnosis_run r ON r.id = f.run_pk
              WHERE f.run_pk = i.run_pk AND f.author_id = a.user_id
                AND {_answer_rating('f', 'r')})""")
    op.execute(f"""
UPDATE review_queue_item SET ratings_count = (
  SELECT COUNT(DISTINCT f.author_id) FROM user_feedback f
  JOIN diagnosis_run r ON r.id = f.run_pk
  WHERE f.run_pk = review_queue_item.run_pk AND {_answer_rating('f', 'r')}
    AND (EXISTS (SELECT 1 FROM review_queue_reviewer n
                 WHERE n.queue_id = review_queue_item.queue_id AND n.user_id = f.author_id)
         OR EXISTS (SELECT 1 FROM review_queue_former_rater k
                    WHERE k.queue_id = review_queue_item.queue_id
                      AND k.run_pk = f.run_pk AND k.user_id = f.author_id)))
WHERE queue_id IN ({_NAMED})""")
    op.execute(f"UPDATE review_queue_item SET completed_at = NULL WHERE queue_id IN ({_NAMED}) "
               f"AND ratings_count < {_NEEDED}")
    op.execute(f"UPDATE review_queue_item SET completed_at = CURRENT_TIMESTAMP "
               f"WHERE queue_id IN ({_NAMED}) AND completed_at IS NULL "
               f"AND ratings_count >= {_NEEDED}")


def downgrade():
    op.drop_table('review_queue_former_rater')
