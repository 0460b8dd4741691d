"""A user whose password an admin chose acts only to change it (SPEC 8), whatever the
caller: the pages send them to their account page, the session-authenticated JSON API
answers 403 ``AUTH_PASSWORD_CHANGE_REQUIRED``, and the service that turns a logged-in
user into an ``Actor`` refuses them, so no view or handler can forget the rule."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select, update

from reviewapp.errors import PasswordChangeRequired
from reviewapp.models import Feedback, User
from reviewapp.services import admin
from reviewapp.services.admin.accounts import SessionUser

from ..factories import DEFAULT_PASSWORD
from ..services.feedback.helpers import answer_message

REQUIRED = {"error": {"code": "AUTH_PASSWORD_CHANGE_REQUIRED",
                      "message": "Change your password first: an admin set it. "
                                 "Your account page (/account/) has the form."}}


@pytest.fixture
def pending(make, session, login):
    """A reviewer of a workspace with one run, logged in, who must change the password."""
    ws = make.workspace()
    user = make.user(ws)
    run = make.run(ws, session_id="pending-session")
    session.execute(update(User).where(User.id == user.id).values(must_change_password=True))
    session.commit()
    client = login(user)
    return type("Pending", (), dict(user=user, run=run, client=client))


def _feedback_rows(session) -> int:
    session.rollback()
    return session.scalar(select(func.count()).select_from(Feedback))


def test_the_json_api_refuses_with_a_403_naming_the_reason(pending, session):
    message_id = answer_message(pending.run).id
    client = pending.client
    answers = [
        client.get(f"/api/feedback/targets?runPk={pending.run.id}"),
        client.put("/api/feedback/targets", json={"targetType": "chat_message",
                                                  "targetId": message_id, "rating": "positive"}),
        client.post("/api/feedback", json={"sessionId": "pending-session",
                                           "feedback": "useful"}),
        client.get(f"/api/runs/{pending.run.run_id}/trace"),
        client.delete("/api/feedback/1"),
    ]
    assert [a.status_code for a in answers] == [403] * 5
    assert [a.get_json() for a in answers] == [REQUIRED] * 5
    assert _feedback_rows(session) == 0


def test_pages_still_send_the_user_to_the_account_page(pending):
    client = pending.client
    page = client.get("/")
    assert page.status_code == 303 and page.headers["Location"].endswith("/account/")
    fragment = client.get("/", headers={"HX-Request": "true"})
    assert fragment.status_code == 204 and fragment.headers["HX-Redirect"].endswith("/account/")
    assert client.get("/account/").status_code == 200


def test_after_the_change_the_api_answers_as_usual(pending, session):
    client = pending.client
    changed = client.post("/account/password", data={
        "current_password": DEFAULT_PASSWORD, "new_password": "my-own-pass-1",
        "confirm": "my-own-pass-1"})
    assert changed.status_code == 303
    listing = client.get(f"/api/feedback/targets?runPk={pending.run.id}")
    assert listing.status_code == 200 and listing.get_json() == {"feedback": []}
    saved = client.put("/api/feedback/targets", json={
        "targetType": "chat_message", "targetId": answer_message(pending.run).id,
        "rating": "positive"})
    assert saved.status_code == 200
    assert _feedback_rows(session) == 1


def test_logout_still_works_while_the_change_is_pending(pending):
    assert pending.client.post("/logout").status_code == 303
    assert pending.client.get("/account/").status_code == 303  # logged out: to the login page


def test_the_actor_service_refuses_a_pending_user_except_to_change_the_password():
    user = SessionUser(7, "nina", True, "t" * 32, must_change_password=True)
    with pytest.raises(PasswordChangeRequired) as refused:
        admin.actor_for(user)
    assert (refused.value.status, refused.value.code) == (403, "AUTH_PASSWORD_CHANGE_REQUIRED")
    own = admin.actor_for(user, password_change=True)
    assert (own.user_id, own.label, own.system, own.token_id) == (7, "nina", False, None)
    done = admin.actor_for(SessionUser(8, "otto", True, "u" * 32))
    assert (done.user_id, done.label) == (8, "otto")


def test_the_account_page_says_why_once(pending):
    """The walk at 390 px showed the reason twice, a flash above the page's own alert."""
    client = pending.client
    client.get("/runs/")
    html = client.get("/account/").get_data(as_text=True)
    assert html.count("set by an admin") == 1
