"""A reason the admin retired still filters what carries it (user walk): the feedback
export's ``reason`` refused ``incorrect`` once retired, though ratings show
"incorrect (retired)"; and the triage list's "Reviewer reason" took any text, so
``?reason=bogus`` showed 0 items silently. Both read one helper
(``export_filters.check_reason`` over ``triage.filter_reasons``)."""

from __future__ import annotations

import re

import pytest

from reviewapp.actors import Role
from reviewapp.errors import ValidationFailed
from reviewapp.services import exports, triage
from reviewapp.services.export_filters import FeedbackFilters
from reviewapp.services.triage import TriageFilters

REFUSAL = "must be one of Stale (stale), Other (other); or a retired one: incorrect"


@pytest.fixture
def retired(session, make):
    ws = make.workspace()
    admin, lead, rev = make.user(ws, Role.ADMIN), make.user(ws, Role.LEAD), make.user(ws)
    run = make.run(ws)
    item = make.triage_item(run)
    make.feedback_row(run, rev, reason="incorrect")
    ws.settings = {**(ws.settings or {}), "feedback_reasons": ["stale", "other"]}  # retired
    session.commit()
    return type("Retired", (), dict(ws=ws, admin=make.actor(admin), lead=make.actor(lead), item=item))


def test_the_feedback_export_filters_by_a_retired_reason_ratings_carry(session, retired):
    stream = exports.export_feedback(session, retired.admin,
                                     FeedbackFilters(workspace_id=retired.ws.id, reason="incorrect"))
    assert stream.total == 1
    assert [row["reason"] for row in stream.rows] == ["incorrect"]
    with pytest.raises(ValidationFailed) as refused:
        exports.export_feedback(session, retired.admin,
                                FeedbackFilters(workspace_id=retired.ws.id, reason="bogus"))
    assert (refused.value.field, refused.value.reason) == ("reason", REFUSAL)


def test_the_triage_reason_filter_refuses_an_unknown_reason_in_the_exports_words(session, retired):
    page = triage.list_items(session, retired.lead, TriageFilters.from_params({"reason": "incorrect"}))
    assert [row.id for row in page.rows] == [retired.item.id]
    with pytest.raises(ValidationFailed) as refused:
        triage.read_filters(session, retired.lead, {"reason": "bogus"})
    assert (refused.value.field, refused.value.reason) == ("reason", REFUSAL)
    with pytest.raises(ValidationFailed) as listed:
        triage.list_items(session, retired.lead, TriageFilters.from_params({"reason": "bogus"}))
    assert (listed.value.field, listed.value.reason) == ("reason", REFUSAL)


def test_the_triage_page_answers_400_naming_the_reason(client, login, make, session, retired):
    from reviewapp.models import User

    login(session.get(User, retired.lead.user_id))
    response = client.get("/triage/?reason=bogus")
    assert response.status_code == 400
    assert REFUSAL in response.get_data(as_text=True)
    page = client.get("/triage/?reason=incorrect")
    assert page.status_code == 200
    # The field's suggestions are the workspace's reasons and the retired one, not the defaults.
    codes = re.findall(r'<option value="([^"]*)">([^<]*)</option>',
                       page.get_data(as_text=True).split('id="reason-codes"')[1].split("</datalist>")[0])
    assert codes == [("stale", "Stale"), ("other", "Other"), ("incorrect", "incorrect (retired)")]
