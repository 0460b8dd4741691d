"""review_queue_item: two partial indexes of the open items (completed_at IS NULL) for a
reviewer's next item (queue_work.next_item, issue 18): (queue_id, id), the queue's open
items oldest first, and (reserved_by, queue_id, id), "the item I already hold" among my
own open items. PostgreSQL scanned the queue's items for the held item, and walked the
primary key for the open ones (it does not take ``completed_at IS NULL`` as an equality,
so (queue_id, completed_at, id) did not give the id order).

Revision ID: ed1ed48f1e1f
Revises: 9c1f4e7b2a60
Create Date: 2026-12-02 10:00:00

"""
import sqlalchemy as sa
from alembic import op

revision = 'ed1ed48f1e1f'
down_revision = '9c1f4e7b2a60'
branch_labels = None
depends_on = None

OPEN = sa.text('completed_at IS NULL')
INDEXES = (('ix_review_queue_item_todo', ['queue_id', 'id']),
           ('ix_review_queue_item_holder', ['reserved_by', 'queue_id', 'id']))


def upgrade():
    for name, columns in INDEXES:
        op.create_index(name, 'review_queue_item', columns, unique=False,
                        sqlite_where=OPEN, postgresql_where=OPEN)


def downgrade():
    for name, _ in reversed(INDEXES):
        op.drop_index(name, table_name='review_queue_item')
