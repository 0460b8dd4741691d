"""Login matches the username ignoring case (new-user finding): usernames must differ by
more than case (``create_user`` refuses 'Alice' beside 'alice' with a 409), so 'Alice'
names the account 'alice' and logs in as it. Usernames are ASCII (``USERNAME_RE``);
only ASCII letters fold, on SQLite and PostgreSQL alike, through the
``lower(username)`` index."""

from __future__ import annotations

import pytest
from sqlalchemy import insert, text

from reviewapp.actors import Role
from reviewapp.models import User
from reviewapp.services import admin
from reviewapp.services.admin import accounts
from tests.plans import explain, sent

from ...factories import DEFAULT_PASSWORD


@pytest.mark.parametrize("typed", ["alice", "Alice", "ALICE", "  aLiCe "])
def test_login_matches_the_username_ignoring_case(session, make, typed):
    alice = make.user(make.workspace(), Role.REVIEWER, username="alice")
    found = admin.authenticate(session, typed, DEFAULT_PASSWORD)
    assert found is not None
    assert (found.id, found.username) == (alice.id, "alice")  # the stored name, not the typed one


def test_a_mixed_case_account_logs_in_typed_in_lower_case(session, make):
    ann = make.user(make.workspace(), Role.REVIEWER, username="Ann.Lee")
    found = admin.authenticate(session, "ann.lee", DEFAULT_PASSWORD)
    assert found is not None and (found.id, found.username) == (ann.id, "Ann.Lee")


def test_the_other_case_still_needs_the_password_and_an_active_account(session, make):
    alice = make.user(make.workspace(), Role.REVIEWER, username="alice")
    assert admin.authenticate(session, "Alice", "wrong-password") is None
    alice.active = False
    session.commit()
    assert admin.authenticate(session, "Alice", DEFAULT_PASSWORD) is None


def test_only_ascii_letters_fold(session, make):
    """'\u212a' (KELVIN SIGN) lower-cases to an ASCII 'k' in Python; it is not a letter
    of any username, so it names nobody ('kate' stays unmatched)."""
    make.user(make.workspace(), Role.REVIEWER, username="kate")
    assert admin.authenticate(session, "\u212aate", DEFAULT_PASSWORD) is None
    assert admin.authenticate(session, "\u212aATE", DEFAULT_PASSWORD) is None


def test_accounts_from_before_the_case_rule_log_in_by_their_exact_name(session, make):
    """'bob' and 'Bob' may both exist from before ``create_user`` refused the second.
    The exact name picks its account; another spelling names neither (ambiguous)."""
    ws = make.workspace()
    lower, upper = make.user(ws, username="bob"), make.user(ws, username="Bob")
    assert admin.authenticate(session, "bob", DEFAULT_PASSWORD).id == lower.id
    assert admin.authenticate(session, "Bob", DEFAULT_PASSWORD).id == upper.id
    assert admin.authenticate(session, "BOB", DEFAULT_PASSWORD) is None


@pytest.mark.parametrize("typed", ["ghost", "\u212aate", "BOB", "Alice"])
def test_every_miss_verifies_one_hash_like_a_hit(session, make, monkeypatch, typed):
    """Constant work on a miss (unknown, non-ASCII, ambiguous, wrong password): one
    argon2 verification, as on a hit, so the answer's time does not tell them apart."""
    ws = make.workspace()
    for name in ("alice", "kate", "bob", "Bob"):
        make.user(ws, username=name)
    counting = _CountingHasher(accounts._hasher)
    monkeypatch.setattr(accounts, "_hasher", counting)
    password = "wrong-password" if typed == "Alice" else DEFAULT_PASSWORD
    assert admin.authenticate(session, typed, password) is None
    assert counting.verified == 1


class _CountingHasher:
    """The argon2 hasher, counting its verifications."""

    def __init__(self, real):
        self.real, self.verified = real, 0

    def verify(self, hash_, password):
        self.verified += 1
        return self.real.verify(hash_, password)

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_the_login_lookup_uses_the_lower_username_index(session, make):
    """On 3,000 accounts with fresh statistics, the lookup searches
    ``ix_user_account_username_lower``; it never scans ``user_account``."""
    session.execute(insert(User.__table__), [{
        "username": f"User{i}", "password_hash": "x", "active": True, "session_token": "t",
        "must_change_password": False} for i in range(3_000)])
    session.commit()
    session.execute(text("ANALYZE"))
    session.commit()
    _, seen = sent(lambda: admin.authenticate(session, "USER1234", "wrong-password"))
    [(statement, parameters)] = [(s, p) for s, p in seen if "FROM user_account" in s]
    plan = explain(session, statement, parameters)
    if session.connection().dialect.name == "postgresql":
        assert "ix_user_account_username_lower" in plan and "Seq Scan" not in plan, plan
    else:
        assert "USING INDEX ix_user_account_username_lower" in plan, plan
        assert "SCAN user_account" not in plan, plan
