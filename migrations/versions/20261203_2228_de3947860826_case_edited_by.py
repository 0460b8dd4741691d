"""Cases: who saved the latest edit.

case_library.edited_by_id: a stale case page's 409 names who saved last.

Revision ID: de3947860826
Revises: 4d8e2b7c9a13
Create Date: 2026-12-03 22:28:57

"""
import warnings
from contextlib import contextmanager

import sqlalchemy as sa
from alembic import op


# revision identifiers, used by Alembic.
revision = 'de3947860826'
down_revision = '4d8e2b7c9a13'
branch_labels = None
depends_on = None


FK = 'fk_case_library_edited_by_id_user_account'


@contextmanager
def _quiet_context():
    """SQLite rebuilds case_library (batch mode), reflecting the tables it references:
    diagnosis_run's expression indexes cannot be reflected and only warn (they are not
    touched)."""
    with warnings.catch_warnings():
        warnings.filterwarnings('ignore', 'Skipped unsupported reflection', sa.exc.SAWarning)
        yield


def upgrade():
    with _quiet_context(), op.batch_alter_table('case_library', schema=None) as batch_op:
        batch_op.add_column(sa.Column('edited_by_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(batch_op.f(FK), 'user_account', ['edited_by_id'], ['id'],
                                    ondelete='SET NULL')


def downgrade():
    with _quiet_context(), op.batch_alter_table('case_library', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f(FK), type_='foreignkey')
        batch_op.drop_column('edited_by_id')
