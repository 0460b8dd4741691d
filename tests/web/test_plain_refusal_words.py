"""Refusals in plain words (filters review, 2026-12-03): no WTForms default ("Invalid value,
must be one of: PASS, LOW_CONFID, ...", "Not a valid integer value."), no field code
("time_zone: ...", "csrf_token: ...", "queue: ..."), each message once."""

from __future__ import annotations

import re
from html import unescape

import pytest
from flask import g

from reviewapp.actors import Actor, Role
from reviewapp.errors import ValidationFailed
from reviewapp.services import admin


def _runs_summary(html):
    return unescape(" ".join(html.split('<p class="error" role="alert">', 1)[1].split("</p>", 1)[0].split()))


def test_the_runs_lists_choices_are_refused_with_their_labels(client, lead_workspace):
    response = client.get("/?verdict=MAYBE&kind=batch&sort=random")
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert _runs_summary(html) == (
        "Some filters are not valid; fix the fields marked above: Kind: choose Chat or AIOps; "
        "Verifier: choose Pass, Low confidence, Reject or Not verified; Sort: choose Newest first, Oldest first, "
        "Highest evidence score, Lowest evidence score, Most failed tool calls, Most tool calls or Best match "
        "(with a search).")
    assert "Invalid value" not in html and "LOW_CONFID," not in html
    assert '<small class="error">choose Pass, Low confidence, Reject or Not verified</small>' in html  # beside it


def _queue_form(ws_id, **extra):
    return {"workspace": str(ws_id), "name": "Chat answers", "kind": "chat",
            "sample_percent": "100", "reviewers_per_run": "2", "reservation_minutes": "15",
            "reviewers": "all", "assignment": "open", **extra}


@pytest.mark.parametrize(("field", "message"), [
    ("sample_percent", "Sample (% of matching runs) must be a whole number between 1 and 100."),
    ("reservation_minutes", "Reservation (minutes) must be a whole number between 1 and 240."),
    ("score_min", "Evidence score from must be a whole number between 0 and 100."),
])
def test_the_queue_form_says_which_field_wants_a_whole_number(client, make, login, field, message):
    ws = make.workspace()
    login(make.user(ws, Role.LEAD))
    response = client.post("/queues/new", data=_queue_form(ws.id, **{field: "ten"}))
    html = unescape(response.get_data(as_text=True))
    assert response.status_code == 422
    assert "Not a valid integer value" not in html
    error = re.search(rf'<small id="{field}-error" class="error">([^<]*)</small>', html)
    assert error and error.group(1) == message


def test_a_bad_setting_is_named_once_in_plain_words_beside_its_field(client, make, login, session):
    ws = make.workspace()
    login(make.user(ws, Role.ADMIN))
    view = admin.get_settings(session, Actor.system_actor(), ws.id)
    response = client.post(f"/admin/{ws.id}/settings",
                           data={"version": view.version, **view.values, "time_zone": "Mars/Olympus"})
    html = unescape(response.get_data(as_text=True))
    assert response.status_code == 400
    assert "time_zone:" not in html
    assert html.count("'Mars/Olympus' is not a time zone name") == 1
    field = re.search(r'<div class="field has-error">(.*?)</div>', html, re.S).group(1)
    assert re.search(r'<small id="set-time_zone-error" class="error">([^<]*)</small>', field).group(1) == \
        "'Mars/Olympus' is not a time zone name (e.g. UTC, Europe/Berlin)"
    tag = re.search(r'<input type="text" id="set-time_zone"[^>]*>', field).group(0)
    assert 'aria-invalid="true"' in tag and "set-time_zone-error" in tag and "autofocus" in tag
    alert = re.search(r'<div class="flash flash-error" role="alert">([^<]*)</div>', html).group(1)
    assert alert == "Nothing was saved: fix the field marked below."


def test_a_missing_queue_on_add_to_queue_is_said_in_plain_words(client, make, login):
    ws = make.workspace()
    login(make.user(ws, Role.LEAD))
    response = client.post("/queues/add-runs", data={"runs": str(make.run(ws).id)})
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    main = html.split("<main", 1)[1]
    assert "Choose the queue to add the checked runs to." in main and "queue:" not in main


def test_an_expired_button_form_is_said_in_plain_words(app_factory):
    """The queue buttons' own check of the CSRF token (``forms.validated``)."""
    from reviewapp.web.forms import NextItemForm, validated

    app = app_factory(WTF_CSRF_ENABLED=True)
    with app.test_request_context("/queues/next", method="POST", data={"csrf_token": "stale"}):
        g.csrf_valid = False
        with pytest.raises(ValidationFailed) as refused:
            validated(NextItemForm())
    assert refused.value.field == "csrf_token"
    assert refused.value.message == "This form expired: reload the page and try again."
