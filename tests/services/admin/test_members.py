"""Members, accounts and tokens as admins manage them (SPEC 1, 2, 8), with the audit log
each change writes, and the cross-workspace rules: an admin of W1 never reaches W2."""

from __future__ import annotations

import json

import pytest
from argon2 import PasswordHasher
from sqlalchemy import func, select

from reviewapp.actors import Actor, Role
from reviewapp.errors import Conflict, Forbidden, ValidationFailed
from reviewapp.models import AuditEvent, IngestToken, Membership, User
from reviewapp.services import admin, audit

from ...factories import DEFAULT_PASSWORD


@pytest.fixture
def two(make):
    """W1 and W2, an admin of each, a member of W1 only, a member of both."""
    w1, w2 = make.workspace(slug="w1"), make.workspace(slug="w2")
    a1, a2 = make.user(w1, Role.ADMIN, username="a1"), make.user(w2, Role.ADMIN, username="a2")
    only1 = make.user(w1, Role.REVIEWER, username="only1")
    both = make.user(w1, Role.LEAD, username="both")
    make.session.add(Membership(user_id=both.id, workspace_id=w2.id, role="reviewer"))
    make.session.commit()
    return type("Two", (), dict(w1=w1, w2=w2, a1=a1, a2=a2, only1=only1, both=both,
                                act1=make.actor(a1), act2=make.actor(a2)))


def _events(session, workspace_id):
    session.expire_all()
    return session.scalars(select(AuditEvent).where(AuditEvent.workspace_id == workspace_id,
                                                    AuditEvent.action != "workspace.create")
                           .order_by(AuditEvent.id)).all()


def _role(session, user_id, ws_id):
    session.expire_all()
    return session.scalar(select(Membership.role).where(Membership.user_id == user_id,
                                                        Membership.workspace_id == ws_id))


def test_create_member_account_generates_a_one_time_password_and_audits_without_it(session, two):
    new = admin.create_member_account(session, two.act1, two.w1.id, "newbie", "lead")
    assert new.generated and len(new.password) == 16
    user = session.get(User, new.user.id)
    assert user.must_change_password is True
    assert PasswordHasher().verify(user.password_hash, new.password)
    assert _role(session, user.id, two.w1.id) == "lead"
    [event] = _events(session, two.w1.id)
    assert (event.action, event.actor_label, event.target_label) == ("user.create", "a1", "newbie")
    assert event.after == {"username": "newbie", "role": "lead", "must_change_password": True}
    assert new.password not in json.dumps([event.before, event.after, event.target_label])


def test_create_member_account_takes_a_typed_password(session, two):
    new = admin.create_member_account(session, two.act1, two.w1.id, "typed", "reviewer", "s3cret-typed")
    assert not new.generated and new.password == "s3cret-typed"
    assert admin.authenticate(session, "typed", "s3cret-typed") is not None


@pytest.mark.parametrize("username,password,field", [
    ("bad name", None, "username"), ("ok", "short", "password"), ("ok2", "x" * 201, "password")])
def test_create_member_account_refuses_bad_input_naming_the_field(session, two, username, password, field):
    with pytest.raises(ValidationFailed) as err:
        admin.create_member_account(session, two.act1, two.w1.id, username, "reviewer", password)
    assert err.value.field == field


@pytest.mark.parametrize("first,second", [("rev2", "Rev2"), ("Ann.Lee", "ann.lee"), ("BOB", "bob")])
def test_a_username_that_differs_only_in_case_is_taken(session, two, first, second):
    """New-user finding: 'rev2' and 'Rev2' could both exist, two people an audit log or a
    queue's reviewer list cannot tell apart. The second is a Conflict naming the first;
    nothing is created."""
    admin.create_member_account(session, two.act1, two.w1.id, first, "reviewer", DEFAULT_PASSWORD)
    with pytest.raises(Conflict) as taken:
        admin.create_member_account(session, two.act1, two.w1.id, second, "reviewer", DEFAULT_PASSWORD)
    assert taken.value.message == f"user '{first}' already exists: usernames must differ by more than case"
    session.rollback()
    names = session.scalars(select(User.username).where(func.lower(User.username) == first.lower())).all()
    assert names == [first]


def test_an_admin_creates_accounts_only_in_a_workspace_they_administer(session, two):
    with pytest.raises(Forbidden):
        admin.create_member_account(session, two.act1, two.w2.id, "intruder", "admin")
    with pytest.raises(Forbidden):
        admin.create_user(session, two.act1, "loose", DEFAULT_PASSWORD)  # no workspace
    lead = Actor.for_user(two.both.id, "both")
    with pytest.raises(Forbidden):
        admin.create_member_account(session, lead, two.w1.id, "by-lead", "reviewer")
    assert admin.get_user_by_username(session, "intruder") is None


def test_add_change_remove_member_with_audit(session, two, make):
    outsider = make.user(None, username="outsider")
    admin.add_member(session, two.act1, two.w1.id, "outsider", "reviewer")
    admin.change_role(session, two.act1, two.w1.id, outsider.id, "lead")
    assert _role(session, outsider.id, two.w1.id) == "lead"
    admin.remove_member(session, two.act1, two.w1.id, outsider.id)
    assert _role(session, outsider.id, two.w1.id) is None
    assert session.get(User, outsider.id) is not None  # the account stays
    events = [(e.action, e.before, e.after) for e in _events(session, two.w1.id)]
    assert events == [("member.add", None, {"role": "reviewer"}),
                      ("member.role", {"role": "reviewer"}, {"role": "lead"}),
                      ("member.remove", {"role": "lead", "open_assignments": 0, "held_items": 0,
                                         "named_reviewer_of": 0},
                       None)]


def test_add_member_refuses_unknown_user_and_existing_member(session, two):
    with pytest.raises(ValidationFailed) as err:
        admin.add_member(session, two.act1, two.w1.id, "nobody", "reviewer")
    assert err.value.field == "username"
    with pytest.raises(Conflict):
        admin.add_member(session, two.act1, two.w1.id, "only1", "lead")


def test_the_last_admin_cannot_be_demoted_or_removed(session, two):
    with pytest.raises(Conflict):
        admin.change_role(session, two.act1, two.w1.id, two.a1.id, "lead")
    with pytest.raises(Conflict):
        admin.remove_member(session, two.act1, two.w1.id, two.a1.id)
    admin.change_role(session, two.act1, two.w1.id, two.only1.id, "admin")
    admin.change_role(session, two.act1, two.w1.id, two.a1.id, "lead")  # now another admin exists
    assert _role(session, two.a1.id, two.w1.id) == "lead"


def test_an_admin_of_w1_cannot_touch_w2_members(session, two):
    """A user who is no member of the named workspace reads as missing (SPEC 2)."""
    for call in (
        lambda: admin.change_role(session, two.act1, two.w2.id, two.a2.id, "reviewer"),
        lambda: admin.remove_member(session, two.act1, two.w2.id, two.both.id),
        lambda: admin.change_role(session, two.act1, two.w1.id, two.a2.id, "reviewer"),
        lambda: admin.remove_member(session, two.act1, two.w1.id, two.a2.id),
        lambda: admin.set_active(session, two.act1, two.w1.id, two.a2.id, False),
        lambda: admin.reset_password(session, two.act1, two.w1.id, two.a2.id),
        lambda: admin.list_members(session, two.act1, two.w2.id),
        lambda: admin.add_member(session, two.act1, two.w2.id, "only1", "reviewer"),
    ):
        with pytest.raises(Forbidden):
            call()
    assert _role(session, two.a2.id, two.w2.id) == "admin"
    assert _role(session, two.both.id, two.w2.id) == "reviewer"


def test_account_changes_need_admin_of_every_workspace_of_the_account(session, two):
    """``both`` is in W1 and W2: a1 may change its role in W1, not its password or flag."""
    with pytest.raises(Forbidden):
        admin.set_active(session, two.act1, two.w1.id, two.both.id, False)
    with pytest.raises(Forbidden):
        admin.reset_password(session, two.act1, two.w1.id, two.both.id, "another-one-1")
    session.expire_all()
    assert session.get(User, two.both.id).active is True
    assert admin.authenticate(session, "both", DEFAULT_PASSWORD) is not None
    rows = {r.username: r for r in admin.list_members(session, two.act1, two.w1.id)}
    assert (rows["both"].manageable, rows["only1"].manageable) == (False, True)
    admin.change_role(session, two.act1, two.w1.id, two.both.id, "reviewer")


def test_deactivate_logs_out_and_blocks_login_reactivate_restores(session, two):
    token_before = session.get(User, two.only1.id).session_token
    admin.set_active(session, two.act1, two.w1.id, two.only1.id, False)
    session.expire_all()
    user = session.get(User, two.only1.id)
    assert user.active is False and user.session_token != token_before
    assert admin.authenticate(session, "only1", DEFAULT_PASSWORD) is None
    admin.set_active(session, two.act1, two.w1.id, two.only1.id, True)
    assert admin.authenticate(session, "only1", DEFAULT_PASSWORD) is not None
    assert [e.action for e in _events(session, two.w1.id)] == ["user.deactivate", "user.activate"]


def test_an_admin_cannot_deactivate_themselves(session, two):
    with pytest.raises(ValidationFailed):
        admin.set_active(session, two.act1, two.w1.id, two.a1.id, False)


def test_reset_password_is_one_time_and_never_in_the_log(session, two):
    password = admin.reset_password(session, two.act1, two.w1.id, two.only1.id)
    session.expire_all()
    assert session.get(User, two.only1.id).must_change_password is True
    assert admin.authenticate(session, "only1", password) is not None
    raw = json.dumps([(e.before, e.after, e.target_label) for e in _events(session, two.w1.id)])
    assert password not in raw and "must_change_password" in raw


def test_change_own_password_needs_the_current_one(session, two):
    me = Actor.for_user(two.only1.id, "only1")
    with pytest.raises(ValidationFailed) as err:
        admin.change_own_password(session, me, "wrong-password", "brand-new-pass")
    assert err.value.field == "current_password"
    with pytest.raises(ValidationFailed) as err:
        admin.change_own_password(session, me, DEFAULT_PASSWORD, "short")
    assert err.value.field == "new_password"
    with pytest.raises(ValidationFailed) as err:
        admin.change_own_password(session, me, DEFAULT_PASSWORD, DEFAULT_PASSWORD)
    assert err.value.field == "new_password"
    old_token = session.get(User, two.only1.id).session_token
    fresh = admin.change_own_password(session, me, DEFAULT_PASSWORD, "brand-new-pass")
    assert fresh.session_token != old_token and fresh.must_change_password is False
    assert admin.authenticate(session, "only1", "brand-new-pass") is not None
    assert admin.authenticate(session, "only1", DEFAULT_PASSWORD) is None
    assert session.get(User, two.only1.id).password_hash.startswith("$argon2id$")


def test_login_records_last_login(session, two):
    assert session.get(User, two.only1.id).last_login_at is None
    admin.authenticate(session, "only1", DEFAULT_PASSWORD)
    session.expire_all()
    assert session.get(User, two.only1.id).last_login_at is not None


def test_tokens_create_revoke_with_audit_and_isolation(session, two):
    new = admin.create_token(session, two.act1, two.w1.id, "agent-prod")
    rows = admin.token_rows(session, two.act1, two.w1.id)
    assert [(r.name, r.created_by, r.revoked) for r in rows] == [("agent-prod", "a1", False)]
    with pytest.raises(Forbidden):
        admin.token_rows(session, two.act2, two.w1.id)
    with pytest.raises(Forbidden):  # a2 administers W2, and names W2: still W1's token
        admin.revoke_token(session, two.act2, new.token.id, two.w2.id)
    with pytest.raises(Forbidden):  # a1 names W1 but the token id is of W2
        other = admin.create_token(session, two.act2, two.w2.id, "w2-agent")
        admin.revoke_token(session, two.act1, other.token.id, two.w1.id)
    admin.revoke_token(session, two.act1, new.token.id, two.w1.id)
    admin.revoke_token(session, two.act1, new.token.id, two.w1.id)  # idempotent
    session.expire_all()
    assert session.get(IngestToken, new.token.id).revoked is True
    events = _events(session, two.w1.id)
    assert [e.action for e in events] == ["token.create", "token.revoke"]
    raw = json.dumps([(e.before, e.after, e.target_label) for e in events])
    assert new.secret not in raw and new.token.secret_hash not in raw
    assert new.secret[4:10] not in raw  # not even the prefix people see on the page


def test_audit_log_lists_only_the_workspace_and_only_for_its_admins(session, two):
    admin.create_token(session, two.act1, two.w1.id, "t1")
    admin.create_token(session, two.act2, two.w2.id, "t2")
    rows, more = audit.list_events(session, two.act1, two.w1.id)
    assert [(r.action, r.target) for r in rows] == [("token.create", "t1"), ("workspace.create", "w1")]
    assert more is None
    with pytest.raises(Forbidden):
        audit.list_events(session, two.act1, two.w2.id)
    with pytest.raises(Forbidden):
        audit.list_events(session, Actor.for_user(two.both.id, "both"), two.w1.id)


def test_audit_scrubs_secret_keys_whatever_the_caller_passes(session, two):
    event = audit.record_event(session, two.act1, workspace_id=two.w1.id, action="user.create",
                               target_type="user", target_id=1,
                               after={"password": "p4ss", "nested": {"secret": "s"}, "ok": 1})
    session.commit()
    assert event.after == {"password": "[not recorded]", "nested": {"secret": "[not recorded]"}, "ok": 1}


@pytest.mark.parametrize("weak", ["password", "12345678", "qwertyuiop", "Password1", "letmein123",
                                  "only1only1"])
def test_a_password_one_chooses_oneself_must_not_be_easy_to_guess(session, two, weak):
    """New-user walk: 'password' was accepted as one's own new password (only the length
    was checked). A password a person chooses for themself (``change_own_password``) is
    refused when zxcvbn estimates fewer than 10^6 guesses (a common password, a keyboard
    run, a digit tail on a common word, the username repeated), with zxcvbn's warning; the
    old one keeps working."""
    me = Actor.for_user(two.only1.id, "only1")
    with pytest.raises(ValidationFailed) as err:
        admin.change_own_password(session, me, DEFAULT_PASSWORD, weak)
    assert err.value.field == "new_password"
    assert err.value.reason.startswith("is too easy to guess")
    assert admin.authenticate(session, "only1", DEFAULT_PASSWORD) is not None


def test_guessability_reads_at_most_the_first_64_characters(session, two):
    """zxcvbn's time grows faster than the length; 200 characters cost it about half a
    second. Only the first 64 are estimated (a long password is not refused for its
    tail): a weak start is refused, a strong start of a long password accepted."""
    me = Actor.for_user(two.only1.id, "only1")
    with pytest.raises(ValidationFailed):
        admin.change_own_password(session, me, DEFAULT_PASSWORD, "a1" * 32 + "Zq!8-vortex-lamp" * 8)
    long_one = ("vortex-lamp-quartz-" * 11)[:200]
    admin.change_own_password(session, me, DEFAULT_PASSWORD, long_one)
    assert admin.authenticate(session, "only1", long_one) is not None
