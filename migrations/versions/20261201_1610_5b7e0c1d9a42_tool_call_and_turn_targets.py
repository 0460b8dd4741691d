"""user_feedback.target_type: two more targets, tool_call and conversation_turn (SPEC 6.1)

A ``tool_call`` rating's ``target_id`` is the call's run and its ``subject_key`` the
agent's call id (domain/target_types.py); a ``conversation_turn`` rating's target is an
assistant message that is not the answer. Only the CHECK constraint changes.

Revision ID: 5b7e0c1d9a42
Revises: 071f2c17976d
Create Date: 2026-12-01 16:10:00

"""
from alembic import op

# revision identifiers, used by Alembic.
revision = '5b7e0c1d9a42'
down_revision = '071f2c17976d'
branch_labels = None
depends_on = None

_BEFORE = ('chat_message', 'citation', 'diagnostic_step', 'diagnostic_report')
_AFTER = _BEFORE + ('tool_call', 'conversation_turn')


def _set_types(types):
    # SQLite rebuilds the table: keep AUTOINCREMENT (ids are never reused, models/feedback.py).
    with op.batch_alter_table('user_feedback', schema=None,
                              table_kwargs={'sqlite_autoincrement': True}) as batch_op:
        batch_op.drop_constraint(op.f('ck_user_feedback_target_type'), type_='check')
        batch_op.create_check_constraint(
            op.f('ck_user_feedback_target_type'), f"target_type IN {types!r}")


def upgrade():
    _set_types(_AFTER)


def downgrade():
    op.execute(f"DELETE FROM user_feedback WHERE target_type NOT IN {_BEFORE!r}")
    _set_types(_BEFORE)
