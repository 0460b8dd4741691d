"""Deactivating an account and revoking an ingest token ask first, as removing a member
does (user-walk finding: each happened in one click). The button opens its page asking
"Deactivate <user>'s account?" / "Revoke the token “<name>”?" (server-rendered, so it
works without JavaScript); the question's own button posts ``confirm=1``; a POST without
it changes nothing and asks. Reactivating stays one click (it takes nothing away). The
question is only asked about what the admin may change: a member of another workspace, a
shared account, another workspace's token and a missing id get the same 403."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.actors import Actor, Role
from reviewapp.models import IngestToken, Membership, User
from reviewapp.services import admin

MISSING = 987654321


@pytest.fixture
def site(make, session):
    w1, w2 = make.workspace(slug="w1", name="One"), make.workspace(slug="w2", name="Two")
    a1 = make.user(w1, Role.ADMIN, username="a1")
    nina = make.user(w1, Role.REVIEWER, username="nina")
    member2 = make.user(w2, Role.REVIEWER, username="member2")
    shared = make.user(w1, Role.REVIEWER, username="shared")
    session.add(Membership(user_id=shared.id, workspace_id=w2.id, role="lead"))
    session.commit()
    token = admin.create_token(session, Actor.system_actor(), w1.id, "agent-prod").token
    token2 = admin.create_token(session, Actor.system_actor(), w2.id, "w2-agent").token
    return type("Site", (), dict(w1=w1, w2=w2, a1=a1, nina=nina, member2=member2, shared=shared,
                                 token=token, token2=token2))


def _active(session, user_id: int) -> bool:
    session.rollback()
    value = session.scalar(select(User.active).where(User.id == user_id))
    session.rollback()
    return bool(value)


def _revoked(session, token_id: int) -> bool:
    session.rollback()
    value = session.scalar(select(IngestToken.revoked).where(IngestToken.id == token_id))
    session.rollback()
    return bool(value)


def test_deactivating_an_account_asks_first(client, login, session, site):
    login(site.a1)
    members = client.get(f"/admin/{site.w1.id}/members").get_data(as_text=True)
    row = members.split(f'id="member-{site.nina.id}"', 1)[1].split("</tr>", 1)[0]
    # The row's button opens the question (a GET), it does not post the change.
    assert f'action="/admin/{site.w1.id}/members/{site.nina.id}/deactivate"' in row
    asked = client.get(f"/admin/{site.w1.id}/members/{site.nina.id}/deactivate")
    text = asked.get_data(as_text=True)
    assert asked.status_code == 200 and "Deactivate nina’s account?" in text
    assert 'name="confirm" value="1"' in text and "Cancel" in text
    assert _active(session, site.nina.id)
    # A POST without the confirmation asks too and changes nothing.
    posted = client.post(f"/admin/{site.w1.id}/members/{site.nina.id}/active", data={"active": "0"})
    assert posted.status_code == 200 and "Deactivate nina’s account?" in posted.get_data(as_text=True)
    assert _active(session, site.nina.id)
    done = client.post(f"/admin/{site.w1.id}/members/{site.nina.id}/active",
                       data={"active": "0", "confirm": "1"})
    assert done.status_code == 303 and not _active(session, site.nina.id)
    # Reactivating takes nothing away: one click.
    back = client.post(f"/admin/{site.w1.id}/members/{site.nina.id}/active", data={"active": "1"})
    assert back.status_code == 303 and _active(session, site.nina.id)


def test_revoking_a_token_asks_first(client, login, session, site):
    login(site.a1)
    tokens = client.get(f"/admin/{site.w1.id}/tokens").get_data(as_text=True)
    row = tokens.split(f'id="token-{site.token.id}"', 1)[1].split("</tr>", 1)[0]
    assert f'action="/admin/{site.w1.id}/tokens/{site.token.id}/revoke"' in row
    assert 'method="get"' in row
    asked = client.get(f"/admin/{site.w1.id}/tokens/{site.token.id}/revoke")
    text = asked.get_data(as_text=True)
    assert asked.status_code == 200 and "Revoke the token “agent-prod”?" in text
    assert 'name="confirm" value="1"' in text and "Cancel" in text
    assert not _revoked(session, site.token.id)
    posted = client.post(f"/admin/{site.w1.id}/tokens/{site.token.id}/revoke", data={})
    assert posted.status_code == 200 and "Revoke the token “agent-prod”?" in posted.get_data(as_text=True)
    assert not _revoked(session, site.token.id)
    done = client.post(f"/admin/{site.w1.id}/tokens/{site.token.id}/revoke", data={"confirm": "1"})
    assert done.status_code == 303 and _revoked(session, site.token.id)


@pytest.mark.parametrize("path, ids", [
    ("members/{}/deactivate", ("member2", "shared")),
    ("tokens/{}/revoke", ("token2",)),
])
def test_the_question_is_asked_only_about_what_the_admin_may_change(client, login, site, path, ids):
    login(site.a1)
    missing = client.get(f"/admin/{site.w1.id}/" + path.format(MISSING))
    assert missing.status_code == 403
    for name in ids:
        answer = client.get(f"/admin/{site.w1.id}/" + path.format(getattr(site, name).id))
        assert (answer.status_code, answer.get_data()) == (403, missing.get_data()), name


@pytest.mark.parametrize("path", ["members/{nina}/deactivate", "tokens/{token}/revoke", "members/{nina}/remove"])
def test_the_question_puts_the_focus_on_cancel(client, login, site, path):
    """The page opens with the focus on "Cancel", not on the red button (a walk found
    Enter confirming a deactivation)."""
    login(site.a1)
    text = client.get(f"/admin/{site.w1.id}/" + path.format(nina=site.nina.id, token=site.token.id)).get_data(as_text=True)
    form = text.split('class="card confirm-remove"', 1)[1].split("</form>", 1)[0]
    assert [line.strip() for line in form.splitlines() if "autofocus" in line] == [
        f'<a class="button" href="/admin/{site.w1.id}/{path.split("/")[0]}" autofocus>Cancel</a>']
    assert '<button type="submit" class="danger">' in form


def test_the_questions_show_hostile_names_escaped(client, login, make, session):
    """The three questions share one macro (``confirm_card``); the names in the heading and
    the button are text, escaped like every other value of the page."""
    ws = make.workspace(slug="w3", name="<i>Ops</i>")
    boss = make.user(ws, Role.ADMIN, username="boss")
    nina = make.user(ws, Role.REVIEWER, username="nina")
    token = admin.create_token(session, Actor.system_actor(), ws.id, '<b>agent</b>"x').token
    login(boss)
    removing = client.get(f"/admin/{ws.id}/members/{nina.id}/remove").get_data(as_text=True)
    assert "Remove nina from &lt;i&gt;Ops&lt;/i&gt;?" in removing and "<i>Ops</i>" not in removing
    revoking = client.get(f"/admin/{ws.id}/tokens/{token.id}/revoke").get_data(as_text=True)
    assert "Revoke the token “&lt;b&gt;agent&lt;/b&gt;&#34;x”?" in revoking
    assert "Revoke &lt;b&gt;agent&lt;/b&gt;&#34;x</button>" in revoking
    assert "<b>agent</b>" not in revoking
