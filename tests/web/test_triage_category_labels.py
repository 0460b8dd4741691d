"""A fault category reads as its workspace's label wherever the triage pages show one (new-user
walk, 2026-12-03: DATABASE / RESOURCE_EXHAUSTION in the list's State column, the item history
and the 409 page); a code the workspace's list no longer holds reads as the code."""

from __future__ import annotations

import re

import pytest

from reviewapp.actors import Role
from reviewapp.models import TriageItem

LABEL = "Database <trouble>"  # the workspace's own label, escaped on the page
SHOWN = "Database &lt;trouble&gt;"


@pytest.fixture
def site(make, login, session):
    ws = make.workspace(fault_categories=["GENERAL", {"code": "DATABASE", "label": LABEL}])
    lead = make.user(ws, Role.LEAD)
    item = make.triage_item(make.run(ws))
    login(lead)
    return type("Site", (), dict(ws=ws, item=item))


def _state_cell(html, item_id):
    row = html.split(f'id="triage-row-{item_id}"', 1)[1].split("</tr>", 1)[0]
    return row.split('data-label="State">', 1)[1].split("</td>", 1)[0]


def test_the_list_shows_the_category_label_and_an_unlisted_code_as_the_code(client, site, session):
    assert client.post(f"/triage/{site.item.id}/category",
                       data={"version": "1", "fault_category": "DATABASE"}).status_code == 303
    cell = _state_cell(client.get("/triage/").get_data(as_text=True), site.item.id)
    assert SHOWN in cell and "DATABASE" not in cell.replace('title="DATABASE"', "")
    session.get(TriageItem, site.item.id).fault_category = "DROPPED_CODE"
    session.commit()
    cell = _state_cell(client.get("/triage/").get_data(as_text=True), site.item.id)
    assert "DROPPED_CODE" in cell


def test_the_item_history_names_the_category_by_its_label(client, site):
    client.post(f"/triage/{site.item.id}/category", data={"version": "1", "fault_category": "DATABASE"})
    client.post(f"/triage/{site.item.id}/category", data={"version": "2", "fault_category": ""})
    html = client.get(f"/triage/{site.item.id}").get_data(as_text=True)
    history = html.split('id="item-history-h"', 1)[1].split("</ol>", 1)[0]
    changes = [" ".join(m.split()) for m in re.findall(r"Fault category changed: ([^<]*)</li>", history)]
    assert changes == [SHOWN, "cleared"]


def test_the_stale_page_shows_the_current_category_by_its_label(client, site):
    client.post(f"/triage/{site.item.id}/category", data={"version": "1", "fault_category": "DATABASE"})
    stale = client.post(f"/triage/{site.item.id}/category", data={"version": "1", "fault_category": "GENERAL"})
    assert stale.status_code == 409
    html = stale.get_data(as_text=True)
    current = html.split("<h2>Current values</h2>", 1)[1].split("</dl>", 1)[0]
    value = re.search(r"<dt>Fault category</dt><dd[^>]*>(.*?)</dd>", current, re.S).group(1)
    assert value.strip() == SHOWN


def test_saving_a_category_without_javascript_comes_back_at_the_category_field(client, site):
    """New-user walk (keyboard): after "Save category" the page opened at its top, the focus
    on <body>. The 303 goes back to the item page at the field (its id, the fragment), which
    app.js focuses on load (as the queue page's refused assignment, 7e00282)."""
    saved = client.post(f"/triage/{site.item.id}/category", data={
        "version": "1", "fault_category": "DATABASE", "next": f"/triage/{site.item.id}"})
    assert saved.status_code == 303 and saved.headers["Location"] == f"/triage/{site.item.id}#fault_category"
    html = client.get(f"/triage/{site.item.id}").get_data(as_text=True)
    assert '<select id="fault_category" name="fault_category"' in html
    accepted = client.post(f"/triage/{site.item.id}/category", data={
        "version": "2", "fault_category": "GENERAL", "proposal": "1", "next": f"/triage/{site.item.id}"})
    assert accepted.headers["Location"] == f"/triage/{site.item.id}#fault_category"
    note = client.post(f"/triage/{site.item.id}/note", data={
        "version": "3", "note": "x", "next": f"/triage/{site.item.id}"})
    assert note.headers["Location"] == f"/triage/{site.item.id}"  # only the category's own answer


def test_the_stale_page_shows_the_submitted_category_by_its_label(client, site):
    """New-user walk (second): "Your version (not saved)" read DATABASE while the current
    values beside it read the label. Both read the workspace's label."""
    client.post(f"/triage/{site.item.id}/category", data={"version": "1", "fault_category": "GENERAL"})
    stale = client.post(f"/triage/{site.item.id}/category", data={"version": "1", "fault_category": "DATABASE"})
    assert stale.status_code == 409
    yours = stale.get_data(as_text=True).split("<h2>Your version (not saved)</h2>", 1)[1].split("</dl>", 1)[0]
    value = re.search(r"<dt>Fault category</dt><dd[^>]*>(.*?)</dd>", yours, re.S).group(1)
    assert value.strip() == SHOWN


def test_a_refused_category_lists_the_workspace_labels(client, site, session):
    """New-user walk (second): a refused category listed the codes (GENERAL, DATABASE)
    where the select shows labels; it lists the labels."""
    refused = client.post(f"/triage/{site.item.id}/category", data={  # an accept from an older page
        "version": "1", "fault_category": "NO_EVIDENCE", "proposal": "1"})
    page = client.get(refused.headers["Location"]).get_data(as_text=True)
    assert re.search(r'<div class="flash flash-error">([^<]*)</div>', page).group(1) == (
        "The proposal was not accepted: &#39;NO_EVIDENCE&#39; is not a category of this workspace; "
        "use one of General / other, Database &lt;trouble&gt;")


def _accept_button(html):
    found = re.search(r'<form [^>]*class="action-block accept">.*?<button type="submit">(.*?)</button>', html, re.S)
    return found.group(1) if found else None


def _hint(html):
    return " ".join(re.sub(r"<[^>]+>", "", re.search(
        r'<small id="category-hint" class="hint">(.*?)</small>', html, re.S).group(1)).split())


def test_the_proposal_is_no_longer_offered_once_a_category_is_chosen(client, make, login, session):
    """New-user walk (second): "Accept the proposal “No evidence”" stayed on offer after the
    lead had chosen another category. Once a category is set nothing is offered; the hint
    still names the proposal, and says so when it is the chosen one."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    item = make.triage_item(make.run(ws))  # no tool calls: the rules propose NO_EVIDENCE
    login(lead)
    html = client.get(f"/triage/{item.id}").get_data(as_text=True)
    assert _accept_button(html) == "Accept the proposal “No evidence”"
    assert _hint(html).startswith("Proposed: No evidence, because ")
    client.post(f"/triage/{item.id}/category", data={"version": "1", "fault_category": "DATABASE"})
    html = client.get(f"/triage/{item.id}").get_data(as_text=True)
    assert _accept_button(html) is None
    assert _hint(html).startswith("Proposed: No evidence, because ")
    client.post(f"/triage/{item.id}/category", data={"version": "2", "fault_category": "NO_EVIDENCE"})
    html = client.get(f"/triage/{item.id}").get_data(as_text=True)
    assert _accept_button(html) is None
    assert _hint(html).startswith("Proposed: No evidence (chosen), because ")
    client.post(f"/triage/{item.id}/category", data={"version": "3", "fault_category": ""})
    assert _accept_button(client.get(f"/triage/{item.id}").get_data(as_text=True)) == \
        "Accept the proposal “No evidence”"
