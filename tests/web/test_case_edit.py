"""The case edit page shows the stored values; proposals are accepted explicitly (SPEC 7)."""

from __future__ import annotations

import re
from html import unescape

import pytest

from reviewapp.actors import Role
from reviewapp.models import Case


@pytest.fixture
def site(make):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    # Proposals (worked out by hand): AUTH ("unauthorized" + "401" in the query, 2 + 2),
    # HTTP_401 ("401 Unauthorized"), checkout-service (a name ending in -service).
    run = make.run(ws, query="Login to checkout-service fails with 401 Unauthorized")
    case = make.case(ws, run=run, title="Login failures", fault_category="GENERAL",
                     root_cause="expired signing key", solution="rotate it")
    return type("Site", (), dict(ws=ws, lead=lead, run=run, case=case))


def _fields(html):
    """{name: value} of the edit form's inputs and textareas, as a browser would submit them."""
    form = re.search(r'<form method="post" action="/cases/[^"]+/edit".*?</form>', html, re.S).group(0)
    values = {}
    for tag in re.findall(r"<input [^>]*>", form):
        name = re.search(r'name="([^"]+)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name and 'type="submit"' not in tag:
            values[name.group(1)] = unescape(value.group(1)) if value else ""
    for name, text in re.findall(r'<textarea [^>]*name="([^"]+)"[^>]*>(.*?)</textarea>', form, re.S):
        values[name] = re.sub(r"^\r?\n", "", unescape(text))
    for name, options in re.findall(r'<select [^>]*name="([^"]+)"[^>]*>(.*?)</select>', form, re.S):
        chosen = re.search(r'<option value="([^"]*)" selected>', options)
        values[name] = unescape(chosen.group(1)) if chosen else ""
    return values


def _stored(session, case_id):
    session.expire_all()
    c = session.get(Case, case_id)
    return (c.version, c.title, c.fault_category, c.error_code, c.service)


def test_the_form_shows_the_stored_values_and_the_proposals_as_hints(client, login, site):
    login(site.lead)
    html = client.get(f"/cases/{site.case.case_id}/edit").get_data(as_text=True)
    fields = _fields(html)
    assert (fields["fault_category"], fields["error_code"], fields["service"]) == ("GENERAL", "", "")
    assert fields["title"] == "Login failures" and fields["root_cause"] == "expired signing key"
    # The category by its label, as its select shows it (new-user walk, 2026-12-04).
    assert "Proposed from the query: Authentication / authorisation" in html
    assert "Proposed from the query: HTTP_401" in html
    for name, value in (("fault_category", "Authentication / authorisation"), ("error_code", "HTTP_401"),
                        ("service", "checkout-service")):
        assert re.search(rf'<button type="submit" name="accept" value="{name}"[^>]*>Use “{value}”</button>', html)
    # Enter in a text field submits the form's first submit button: that is "Save".
    form = html.split('action="/cases/', 1)[1]
    assert re.search(r'<button [^>]*>', form).group(0).count('name="accept"') == 0


def test_saving_a_changed_error_code_keeps_the_stored_category(client, login, site, session):
    """The reported bug: change only the error code, save, and the category became AUTH."""
    login(site.lead)
    fields = _fields(client.get(f"/cases/{site.case.case_id}/edit").get_data(as_text=True))
    saved = client.post(f"/cases/{site.case.case_id}/edit", data={**fields, "error_code": "E1042"})
    assert saved.status_code == 303
    assert _stored(session, site.case.case_id) == (2, "Login failures", "GENERAL", "E1042", None)


def test_saving_without_a_change_says_so_and_stores_nothing(client, login, site, session):
    """New-user finding: Save on an untouched form bumped the version (an edit by a
    person, as far as the verdict's case rule knew). It stores nothing and says so, on
    the edit page; a real change afterwards still saves from the same page's version."""
    login(site.lead)
    edit_url = f"/cases/{site.case.case_id}/edit"
    before = _stored(session, site.case.case_id)
    fields = _fields(client.get(edit_url).get_data(as_text=True))
    untouched = client.post(edit_url, data=fields)
    assert (untouched.status_code, untouched.headers["Location"]) == (303, edit_url)
    assert _stored(session, site.case.case_id) == before == (1, "Login failures", "GENERAL", None, None)
    page = client.get(edit_url).get_data(as_text=True)
    assert "No changes to save." in page and "Case saved." not in page
    saved = client.post(edit_url, data={**fields, "service": "checkout-service"})
    assert saved.status_code == 303
    assert _stored(session, site.case.case_id) == (2, "Login failures", "GENERAL", None, "checkout-service")
    assert "Case saved." in client.get(saved.headers["Location"]).get_data(as_text=True)


def test_accepting_a_proposal_fills_the_field_and_saves_nothing(client, login, site, session):
    login(site.lead)
    fields = _fields(client.get(f"/cases/{site.case.case_id}/edit").get_data(as_text=True))
    typed = {**fields, "title": "Login failures (typed)"}
    accepted = client.post(f"/cases/{site.case.case_id}/edit", data={**typed, "accept": "fault_category"})
    assert accepted.status_code == 200
    html = accepted.get_data(as_text=True)
    after = _fields(html)
    # The proposal fills its field, what was typed stays, nothing is stored until Save.
    assert (after["fault_category"], after["title"], after["error_code"]) == (
        "AUTH", "Login failures (typed)", "")
    assert 'value="fault_category">Use' not in html  # already the field's value
    assert _stored(session, site.case.case_id) == (1, "Login failures", "GENERAL", None, None)
    saved = client.post(f"/cases/{site.case.case_id}/edit", data=after)
    assert saved.status_code == 303
    assert _stored(session, site.case.case_id) == (2, "Login failures (typed)", "AUTH", None, None)


def test_accepting_an_unknown_field_or_without_a_proposal_changes_nothing(client, login, site, make, session):
    login(site.lead)
    fields = _fields(client.get(f"/cases/{site.case.case_id}/edit").get_data(as_text=True))
    odd = client.post(f"/cases/{site.case.case_id}/edit", data={**fields, "accept": "title"})
    assert odd.status_code == 200 and _fields(odd.get_data(as_text=True)) == fields
    legacy = make.case(site.ws, fault_category="DATABASE")  # no run: no proposals
    html = client.get(f"/cases/{legacy.case_id}/edit").get_data(as_text=True)
    assert 'name="accept"' not in html and _fields(html)["fault_category"] == "DATABASE"
    assert _stored(session, site.case.case_id)[0] == 1


def test_the_fault_category_is_a_select_of_the_workspaces_labels(client, login, site, make, session):
    """New-user walk (2026-12-04): "Fault category" was a free-text box expecting a code
    while its refusal listed labels ("use one of General / other, Resource exhaustion…").
    It is now a select of the workspace's categories by label, the stored one selected; a
    stored code the list no longer holds stays, marked so."""
    login(site.lead)
    html = client.get(f"/cases/{site.case.case_id}/edit").get_data(as_text=True)
    select = re.search(r'<select id="fault_category" name="fault_category"[^>]*>(.*?)</select>', html, re.S)
    assert select, "no fault-category select"
    options = re.findall(r'<option value="([^"]*)"( selected)?>([^<]*)</option>', select.group(1))
    assert ("GENERAL", " selected", "General / other") in options
    assert ("RESOURCE_EXHAUSTION", "", "Resource exhaustion") in options
    assert ("", "", "No category") in options and 'list="case-categories"' not in html
    assert _fields(html)["fault_category"] == "GENERAL"
    saved = client.post(f"/cases/{site.case.case_id}/edit", data={**_fields(html), "fault_category": "DATABASE"})
    assert saved.status_code == 303 and _stored(session, site.case.case_id)[2] == "DATABASE"
    session.get(Case, site.case.case_id).fault_category = "RETIRED_CODE"
    session.commit()
    html = client.get(f"/cases/{site.case.case_id}/edit").get_data(as_text=True)
    assert '<option value="RETIRED_CODE" selected>RETIRED_CODE (no longer listed)</option>' in html
