"""Queue form values out of range (tampered form, new-user report): 0 is a value, not a
missing one, so the message names the allowed range instead of "This field is required."."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role
from reviewapp.models import ReviewQueue


def _form(ws_id, **extra):
    return {"workspace": str(ws_id), "name": "Chat answers", "kind": "chat",
            "sample_percent": "100", "reviewers_per_run": "2", "reservation_minutes": "15",
            "reviewers": "all", "assignment": "open", **extra}


@pytest.mark.parametrize(("field", "message"), [
    ("reviewers_per_run", "Number must be between 1 and 5."),
    ("sample_percent", "Number must be between 1 and 100."),
    ("reservation_minutes", "Number must be between 1 and 240."),
])
def test_zero_names_the_allowed_range(client, login, make, session, field, message):
    ws = make.workspace()
    login(make.user(ws, Role.LEAD))
    refused = client.post("/queues/new", data=_form(ws.id, **{field: "0"}))
    html = refused.get_data(as_text=True)
    assert refused.status_code == 422
    assert message in html and "This field is required." not in html
    assert session.query(ReviewQueue).filter_by(workspace_id=ws.id).count() == 0
    # An empty value is still missing.
    empty = client.post("/queues/new", data=_form(ws.id, **{field: ""}))
    assert empty.status_code == 422 and "This field is required." in empty.get_data(as_text=True)
