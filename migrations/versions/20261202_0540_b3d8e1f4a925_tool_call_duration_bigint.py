"""A tool call's ``duration_ms`` becomes a 64-bit integer on PostgreSQL.

SPEC 10 accepts timestamps from 2000 to 2100, so a call may last up to about 3.2e12 ms;
a 32-bit ``integer`` holds about 24.8 days (2,147,483,647 ms) and PostgreSQL refused the
update with "integer out of range" (a late ``started`` event for a call that had no start
time, for example). SQLite's INTEGER is already 64-bit: nothing changes there.

Revision ID: b3d8e1f4a925
Revises: 4b7e2c9d1a56
Create Date: 2026-12-02 05:40:00

"""
import sqlalchemy as sa
from alembic import op

revision = 'b3d8e1f4a925'
down_revision = '4b7e2c9d1a56'
branch_labels = None
depends_on = None


def upgrade():
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column("tool_call_audit", "duration_ms", type_=sa.BigInteger(),
                        existing_type=sa.Integer(), existing_nullable=True)


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        # Durations past the 32-bit range cannot go back: they become unknown (NULL).
        op.execute("UPDATE tool_call_audit SET duration_ms = NULL WHERE duration_ms > 2147483647")
        op.alter_column("tool_call_audit", "duration_ms", type_=sa.Integer(),
                        existing_type=sa.BigInteger(), existing_nullable=True)
