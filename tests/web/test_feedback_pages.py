"""Thumbs endpoints: htmx fragment, no-JS redirect, 422 next to the field, delete,
stale CSRF, expired login (SPEC 6.1, 8, 10)."""

from __future__ import annotations

import re

import pytest

from reviewapp.extensions import db
from reviewapp.models import Feedback, Run

HX = {"HX-Request": "true"}


@pytest.fixture
def setup(make, login):
    ws = make.workspace()
    user = make.user(ws)
    run = make.run(ws)
    message = next(m for m in run.messages if m.role == "assistant")
    login(user)
    return {"ws": ws, "user": user, "run": run, "message": message}


def _rate(client, s, rating="positive", headers=HX, **extra):
    data = {"target_type": "chat_message", "target_id": s["message"].id, "rating": rating,
            "next": f"/runs/{s['run'].id}?kind=chat", **extra}
    return client.post("/feedback", data=data, headers=headers)


def test_htmx_rating_swaps_only_its_fragment_with_a_saved_state(client, setup):
    response = _rate(client, setup)
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert html.lstrip().startswith(f'<div id="fb-chat_message-{setup["message"].id}-0"')
    assert "<html" not in html and "✓ Saved" in html
    assert 'aria-pressed="true"' in html and "data-rating=\"positive\"" in html
    assert response.headers["HX-Trigger"] == "feedback-saved"
    db.session.expire_all()
    assert db.session.get(Run, setup["run"].id).feedback == "useful"


def test_plain_form_post_redirects_back_to_the_run_with_a_flash(client, setup):
    response = _rate(client, setup, headers={})
    assert response.status_code == 303
    # Back to the rated control (issue 17: no-JS ratings return to the rated part)
    control = f"fb-chat_message-{setup['message'].id}-0"
    assert response.headers["Location"] == f"/runs/{setup['run'].id}?kind=chat&rated={control}#{control}"
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "Your rating is saved." in page
    # The own rating is restored when the page opens.
    fragment = page.split(f'id="fb-chat_message-{setup["message"].id}-0"', 1)[1].split("</form>", 1)[0]
    assert 'aria-pressed="true" data-rating="positive"' in fragment


def test_next_cannot_leave_the_site(client, setup):
    response = _rate(client, setup, headers={}, next="https://evil.example.com/")
    assert response.headers["Location"] == "/"


def test_thumbs_down_opens_the_details_and_saves_reason_and_correction(client, setup):
    first = _rate(client, setup, rating="negative").get_data(as_text=True)
    assert "<details class=\"fb-more\" open>" in first and 'name="reason"' in first
    for code in ("incorrect", "incomplete", "citation", "unsafe", "other"):
        assert f'<option value="{code}"' in first
    second = _rate(client, setup, rating="negative", reason="incomplete",
                   correction="Add the rollback command.").get_data(as_text=True)
    assert '<option value="incomplete" selected>' in second
    assert "Add the rollback command." in second
    row = db.session.query(Feedback).one()
    assert (row.rating, row.reason, row.correction) == ("negative", "incomplete", "Add the rollback command.")


def test_citation_rating_uses_the_citation_as_subject(client, setup):
    response = _rate(client, setup, target_type="citation", subject_id="c2", rating="negative",
                     reason="citation")
    html = response.get_data(as_text=True)
    assert html.lstrip().startswith(f'<div id="fb-citation-{setup["message"].id}-c2"')
    row = db.session.query(Feedback).one()
    assert (row.target_type, row.subject_key) == ("citation", "c2")


@pytest.mark.parametrize("extra, field", [
    ({"reason": "not-a-reason"}, "reason"),
    ({"comment": "x" * 2001}, "comment"),
    ({"correction": "y" * 4001}, "correction"),
])
def test_invalid_details_come_back_422_next_to_the_field(client, setup, extra, field):
    response = _rate(client, setup, rating="negative", **extra)
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    fid = f'fb-chat_message-{setup["message"].id}-0'
    assert f'id="{fid}-{field}-error"' in html and 'aria-invalid="true"' in html
    assert "HX-Retarget" not in response.headers
    assert db.session.query(Feedback).count() == 0


def test_clicking_the_active_thumb_deletes_the_rating(client, setup):
    html = _rate(client, setup).get_data(as_text=True)
    delete_url = re.search(r'formaction="(/feedback/\d+/delete)"', html).group(1)
    response = client.post(delete_url, data={"next": f"/runs/{setup['run'].id}"}, headers=HX)
    body = response.get_data(as_text=True)
    assert response.status_code == 200 and "Rating removed" in body
    assert 'aria-pressed="true"' not in body
    assert response.headers["HX-Trigger"] == "feedback-saved"
    assert db.session.query(Feedback).count() == 0
    plain = client.post(delete_url, data={})
    assert plain.status_code == 403


def test_nobody_can_delete_someone_elses_rating(client, setup, make, login, app_factory):
    _rate(client, setup)
    row = db.session.query(Feedback).one()
    # Another app object on the same database: its requests get their own app context.
    other = app_factory().test_client()
    login(make.user(setup["ws"]), c=other)
    assert other.post(f"/feedback/{row.id}/delete", headers=HX).status_code == 403
    assert db.session.query(Feedback).count() == 1


def test_rating_a_foreign_target_is_403(client, setup, make):
    foreign = make.run(make.workspace())
    message = next(m for m in foreign.messages if m.role == "assistant")
    response = client.post("/feedback", headers=HX, data={
        "target_type": "chat_message", "target_id": message.id, "rating": "positive"})
    assert response.status_code == 403
    assert response.headers["HX-Retarget"] == "#messages"


def test_expired_login_redirects_the_whole_window(app_factory, setup):
    anonymous = app_factory().test_client()
    response = anonymous.post("/feedback", headers=HX, data={
        "target_type": "chat_message", "target_id": setup["message"].id, "rating": "positive"})
    assert response.status_code == 401
    assert response.headers["HX-Redirect"].startswith("/login")


def test_stale_csrf_token_gives_a_visible_message(app_factory, make, setup):
    from ..factories import DEFAULT_PASSWORD

    strict = app_factory(WTF_CSRF_ENABLED=True).test_client()
    login_page = strict.get("/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', login_page).group(1)
    strict.post("/login", data={"username": setup["user"].username, "password": DEFAULT_PASSWORD,
                                "csrf_token": token})
    response = strict.post("/feedback", headers={**HX, "X-CSRFToken": "stale"}, data={
        "target_type": "chat_message", "target_id": setup["message"].id, "rating": "positive"})
    assert response.status_code == 400
    assert response.headers["HX-Retarget"] == "#messages"
    assert "CSRF" in response.get_data(as_text=True)


def test_queue_progress_refreshes_and_queue_moves_on(client, setup, make):
    second = make.run(setup["ws"])
    first_stop = client.get("/queue")
    assert first_stop.status_code == 303
    assert first_stop.headers["Location"] == f"/runs/{second.id}?queue=1"
    page = client.get(first_stop.headers["Location"]).get_data(as_text=True)
    assert 'hx-trigger="load, feedback-saved from:body"' in page
    assert f'href="/queue?after={second.id}"' in page
    progress = client.get("/queue/progress", headers=HX).get_data(as_text=True)
    assert "<strong>0</strong> of 2 reviewed" in progress
    _rate(client, setup)
    assert "<strong>1</strong> of 2 reviewed" in client.get("/queue/progress").get_data(as_text=True)
    assert client.get("/queue").headers["Location"] == f"/runs/{second.id}?queue=1"
    message = next(m for m in second.messages if m.role == "assistant")
    client.post("/feedback", data={"target_type": "chat_message", "target_id": message.id,
                                   "rating": "negative"}, headers=HX)
    done = client.get("/queue")
    assert done.status_code == 200 and "You have rated every run in this list" in done.get_data(as_text=True)


def test_plain_form_post_with_a_bad_reason_says_so_and_goes_back(client, setup):
    response = _rate(client, setup, rating="negative", headers={}, reason="nonsense")
    assert response.status_code == 303
    control = f"fb-chat_message-{setup['message'].id}-0"
    assert response.headers["Location"] == f"/runs/{setup['run'].id}?kind=chat&refused={control}#{control}"
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "Your rating was not saved: reason" in page
    # ... at the control too, not only at the top of the page
    assert "Your rating was not saved: reason" in page.split(f'id="{control}"', 1)[1]
    assert db.session.query(Feedback).count() == 0


def _based_on(html: str) -> str:
    found = re.search(r'name="based_on" value="([^"]*)"', html)
    assert found, "the details form carries what it was based on"
    return found.group(1)


def test_a_stale_tabs_details_save_is_refused_409_and_keeps_the_newer_rating(client, setup):
    # Both tabs show the answer rated Not helpful (with a reason).
    first = _rate(client, setup, "negative", reason="incorrect", comment="old")
    tab_b = _based_on(first.get_data(as_text=True))
    # Tab A: Helpful (a thumb switch).
    assert _rate(client, setup, "positive", switch="1").status_code == 200
    # Tab B: saves its details form, based on the negative rating.
    stale = _rate(client, setup, "negative", reason="incorrect", comment="changed", based_on=tab_b)
    html = stale.get_data(as_text=True)
    assert stale.status_code == 409
    assert "changed in another tab" in html and 'role="alert"' in html
    assert 'aria-pressed="true" data-rating="positive"' in html  # the current state
    db.session.expire_all()
    row = db.session.query(Feedback).one()
    assert (row.rating, row.comment) == ("positive", "old")
    # Saving again from the refreshed control (its own based_on) works.
    fresh = _rate(client, setup, "positive", comment="changed", based_on=_based_on(html))
    assert fresh.status_code == 200
    db.session.expire_all()
    assert db.session.query(Feedback).one().comment == "changed"


def test_a_stale_tabs_refused_save_keeps_what_was_typed_beside_the_saved_values(client, setup):
    """The 409 fragment refilled the textareas with the other tab's comment and
    correction: what this tab's user typed was lost. It keeps the typed values and shows
    the currently saved ones beside them."""
    tab_b = _based_on(_rate(client, setup, "negative", reason="incorrect",
                            comment="tab A's comment").get_data(as_text=True))
    assert _rate(client, setup, "negative", reason="incorrect", comment="tab A saved this",
                 correction="A's fix", based_on=tab_b).status_code == 200
    stale = _rate(client, setup, "negative", reason="incorrect", comment="B typed <this> long text",
                  correction="B's own fix", based_on=tab_b)
    html = stale.get_data(as_text=True)
    assert stale.status_code == 409 and "Not saved" in html
    comment = re.search(r'<textarea [^>]*name="comment"[^>]*>([^<]*)</textarea>', html).group(1)
    correction = re.search(r'<textarea [^>]*name="correction"[^>]*>([^<]*)</textarea>', html).group(1)
    assert (comment, correction) == ("B typed &lt;this&gt; long text", "B&#39;s own fix")
    assert re.search(r'Saved now:\s*<q>tab A saved this</q>', html)
    assert re.search(r'Saved now:\s*<q>A&#39;s fix</q>', html)
    db.session.expire_all()
    assert db.session.query(Feedback).one().comment == "tab A saved this"


def test_a_stale_plain_form_save_goes_back_with_the_message(client, setup):
    tab_b = _based_on(_rate(client, setup, "negative", reason="incorrect").get_data(as_text=True))
    _rate(client, setup, "positive", switch="1")
    response = _rate(client, setup, "negative", headers={}, comment="x", based_on=tab_b)
    assert response.status_code == 303 and "refused=" in response.headers["Location"]
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "changed in another tab" in page
    db.session.expire_all()
    assert db.session.query(Feedback).one().rating == "positive"


def test_all_reviewers_initials_name_the_reviewers(client, setup):
    html = _rate(client, setup, "negative").get_data(as_text=True)
    others = html.split('class="fb-others"', 1)[1]
    name = setup["user"].username
    initials = re.search(r'class="initials"[^>]*>(.*?)</span>', others, re.S).group(1)
    assert f'title="{name}"' in initials  # each badge letter says whose it is
    assert f"not helpful: 1, by {name}" in re.sub(r"<[^>]+>", "", others).replace("  ", " ")


def test_a_retired_reason_is_shown_as_retired_and_a_comment_only_save_keeps_it(
        client, setup, session):
    _rate(client, setup, "negative", reason="incomplete")
    ws = setup["ws"]
    ws.settings = {**(ws.settings or {}), "feedback_reasons": ["citation", "other"]}
    session.commit()
    page = client.get(f"/runs/{setup['run'].id}").get_data(as_text=True)
    assert re.search(r'<option value="incomplete" selected>incomplete\s*\(retired\)</option>', page)
    saved = _rate(client, setup, "negative", reason="incomplete", comment="only this",
                  based_on=_based_on(page))
    assert saved.status_code == 200
    db.session.expire_all()
    assert (db.session.query(Feedback).one().reason, db.session.query(Feedback).one().comment) == (
        "incomplete", "only this")


def test_a_thumbs_up_offers_the_collapsed_details_with_the_positive_reasons(client, setup):
    # SPEC 6.1: every rating takes an optional reason, comment and correction; a positive
    # rating is offered the reasons whose polarity allows it: of the defaults only "other".
    html = _rate(client, setup, rating="positive").get_data(as_text=True)
    assert '<details class="fb-more">' in html  # present, not opened by itself
    assert "Why? Add a reason, comment or correction" in html
    reasons = html.split('name="reason"', 1)[1].split("</select>", 1)[0]
    assert re.findall(r'<option value="(\w+)"', reasons) == ["other"]
    saved = _rate(client, setup, rating="positive", reason="other",
                  comment="Exactly the runbook step.").get_data(as_text=True)
    assert "Exactly the runbook step." in saved
    row = db.session.query(Feedback).one()
    assert (row.rating, row.reason, row.comment) == ("positive", "other", "Exactly the runbook step.")


def test_the_status_line_shows_the_workspace_label_of_a_saved_reason(client, make, login):
    ws = make.workspace(feedback_reasons=[
        {"code": "xss_reason", "label": "<b>Scripted</b> & odd", "polarity": "either"}])
    user = make.user(ws)
    run = make.run(ws)
    message = next(m for m in run.messages if m.role == "assistant")
    login(user)
    html = _rate(client, {"run": run, "message": message}, rating="negative",
                 reason="xss_reason").get_data(as_text=True)
    assert "Your rating: &lt;b&gt;Scripted&lt;/b&gt; &amp; odd" in client.get(
        f"/runs/{run.id}").get_data(as_text=True)
    assert "xss reason" not in html and "<b>Scripted</b>" not in html
