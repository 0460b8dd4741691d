"""user_account: an index on lower(username). Login matches the username ignoring case
(new-user finding: 'Alice' could not log in as 'alice', though a second account may not
differ from the first only in case); the login lookup and create_user's clash check both
search ``lower(username)``, which the unique index on ``username`` cannot serve. Not
unique: accounts made before that rule may differ only in case.

Revision ID: 1f6c3a9e5d24
Revises: 9e4b7d2c1a58
Create Date: 2026-12-03 11:00:00

"""
import sqlalchemy as sa
from alembic import op

revision = '1f6c3a9e5d24'
down_revision = '9e4b7d2c1a58'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('ix_user_account_username_lower', 'user_account', [sa.text('lower(username)')],
                    unique=False)


def downgrade():
    op.drop_index('ix_user_account_username_lower', table_name='user_account')
