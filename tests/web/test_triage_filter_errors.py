"""The triage list's refused filters and bulk actions read as the runs list's do (new-user
walk, 2026-12-03): the field's label and the message once, next to the field and in the
list's place, no "400" and no field code, and no "N items match" for a list that was not
filtered. A bulk action with nothing ticked says so once, at the bulk controls."""

from __future__ import annotations

import re
from html import unescape

import pytest

from reviewapp.actors import Role

HTMX = {"HX-Request": "true"}
SUMMARY = "Some filters are not valid; fix the fields marked above: "


@pytest.fixture
def lead(make, login):
    ws = make.workspace()
    user = make.user(ws, Role.LEAD)
    items = [make.triage_item(make.run(ws)) for _ in range(2)]
    login(user)
    return items


def _summary(html):
    body = html.split('<section id="triage-table"', 1)[1]
    return " ".join(body.split('<p class="error" role="alert">', 1)[1].split("</p>", 1)[0].split())


@pytest.mark.parametrize(("query", "message"), [
    ("score_min=80&score_max=10", "Score to: must not be below the minimum score."),
    ("score_min=abc", "Score from: must be a whole number."),
    ("date_from=2026-11-30&date_to=2026-11-01", "Opened from: must not be after the end day."),
])
def test_a_refused_filter_is_named_by_its_label_once_and_lists_nothing(client, lead, query, message):
    response = client.get(f"/triage/?{query}")
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert 'role="search" aria-label="Filter the queue"' in html  # the list page, its form
    assert _summary(html) == SUMMARY + message
    main = html.split("<main", 1)[1]
    assert main.count(message.split(": ", 1)[1].rstrip(".")) == 2  # the summary and the field
    assert "400" not in main and "score_max" not in main.split("<form", 1)[0]
    assert "match" not in main and "triage-row-" not in main  # no claim, no unfiltered rows
    assert 'id="bulk-form"' not in main


def test_a_workspace_id_the_lead_does_not_triage_in_is_named_and_shown_though_they_have_one(client, make, lead):
    """New-user walk: ``/triage/?workspace=77`` listed nothing and, the lead having one
    workspace, showed no Workspace field to fix. It is refused as the runs list refuses an
    unknown workspace, the field shown and marked, whether the workspace exists or not."""
    other = make.workspace()
    make.triage_item(make.run(other))
    for unknown in (other.id, 999_999):
        response = client.get(f"/triage/?workspace={unknown}&score_min=80&score_max=10")
        html = response.get_data(as_text=True)
        assert response.status_code == 400
        assert unescape(_summary(html)) == SUMMARY + (f"Workspace: you have no workspace '{unknown}'; "
                                            "Score to: must not be below the minimum score.")
        select = re.search(r'<select id="f-workspace"[^>]*>', html).group(0)
        assert 'aria-invalid="true"' in select and "autofocus" in select
        assert f'<small id="f-workspace-error" class="error">you have no workspace &#39;{unknown}&#39;</small>' in html
        assert "match" not in html.split("<main", 1)[1] and "triage-row-" not in html
    assert client.get(f"/triage/?workspace={lead[0].workspace_id}").status_code == 200


def test_a_refused_score_keeps_what_was_typed_and_marks_the_field(client, lead):
    html = client.get("/triage/?score_min=80&score_max=10").get_data(as_text=True)
    assert re.search(r'<input id="f-smin"[^>]*value="80"', html)
    smax = re.search(r'<input id="f-smax"[^>]*>', html).group(0)
    assert 'value="10"' in smax and 'aria-invalid="true"' in smax
    assert 'aria-describedby="f-smax-error"' in smax
    assert '<small id="f-smax-error" class="error">must not be below the minimum score</small>' in html


def test_an_htmx_filter_refusal_answers_in_the_table_with_the_marked_filters(client, lead):
    response = client.get("/triage/?score_min=80&score_max=10", headers=HTMX)
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert "HX-Retarget" not in response.headers  # not the page's message region as well
    assert html.lstrip().startswith('<section id="triage-table"')
    assert _summary(html) == SUMMARY + "Score to: must not be below the minimum score."
    assert '<div id="filter-grid" class="filter-fields" hx-swap-oob="true">' in html
    assert "400" not in html and "match" not in html


def test_the_next_htmx_filter_after_a_refusal_brings_unmarked_filters(client, lead):
    response = client.get("/triage/?kind=chat", headers={**HTMX, "X-Filter-Errors": "1"})
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert '<div id="filter-grid" class="filter-fields" hx-swap-oob="true">' in html
    assert 'aria-invalid' not in html and "2 items match" in html


@pytest.mark.parametrize("action", ["move", "assign"])
def test_a_bulk_action_with_nothing_ticked_says_so_once_at_the_bulk_controls(client, lead, action):
    response = client.post("/triage/bulk", headers=HTMX,
                           data={"action": action, "state": "triaged", "next": "/triage/"})
    html = response.get_data(as_text=True)
    assert "HX-Retarget" not in response.headers
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    assert text == "Nothing was changed: tick the box of at least one item first."
    assert 'role="alert"' in html


def test_a_bulk_action_with_nothing_ticked_without_javascript_goes_back_with_the_message(client, lead):
    response = client.post("/triage/bulk", data={"action": "move", "state": "triaged",
                                                 "next": "/triage/?kind=chat"})
    assert response.status_code == 303 and response.headers["Location"].endswith("/triage/?kind=chat")
    html = client.get(response.headers["Location"]).get_data(as_text=True)
    assert html.count("Nothing was changed: tick the box of at least one item first.") == 1
    assert "400" not in html.split("<main", 1)[1] and "items: tick" not in html


MANY = "assignee=999999&score_min=abc&date_from=2026-11-30&date_to=2026-11-01"
MANY_SUMMARY = SUMMARY + ("Assignee: must be someone items can be assigned to; Score from: must be a whole number; "
                          "Opened from: must not be after the end day.")


def _marked(html):
    """The ids of the controls marked invalid, in the page's order; which has autofocus."""
    controls = re.findall(r"<(?:input|select)\b[^>]*>", html)
    marked = [re.search(r'\sid="([^"]+)"', c).group(1) for c in controls if 'aria-invalid="true"' in c]
    focused = [re.search(r'\sid="([^"]+)"', c).group(1) for c in controls if re.search(r"\sautofocus\b", c)]
    return marked, focused


def test_several_refused_filters_are_each_named_and_marked_and_the_first_is_focused(client, lead):
    """New-user walk: with several bad fields only the first was named; and the page came
    back with nothing focused. Each is named by its label (in the page's order) in the
    list's place and beside its field; the first takes the focus (as the queue forms)."""
    response = client.get(f"/triage/?{MANY}")
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert _summary(html) == MANY_SUMMARY
    assert _marked(html) == (["f-assignee", "f-smin", "f-from"], ["f-assignee"])
    for field_id, message in (("f-assignee", "must be someone items can be assigned to"),
                              ("f-smin", "must be a whole number"), ("f-from", "must not be after the end day")):
        assert f'<small id="{field_id}-error" class="error">{message}</small>' in html
    assert re.search(r'<input id="f-smin"[^>]*value="abc"', html)
    assert re.search(r'<input id="f-to"[^>]*value="2026-11-01"', html)
    main = html.split("<main", 1)[1]
    assert "match" not in main and "triage-row-" not in main and 'id="bulk-form"' not in main


def test_several_refused_filters_over_htmx_are_each_named_and_the_first_is_focused(client, lead):
    response = client.get(f"/triage/?{MANY}", headers={**HTMX, "X-Filter-Focus": "1"})
    html = response.get_data(as_text=True)
    assert response.status_code == 400 and "HX-Retarget" not in response.headers
    assert html.lstrip().startswith('<section id="triage-table"')
    assert _summary(html) == MANY_SUMMARY
    assert '<div id="filter-grid" class="filter-fields" hx-swap-oob="true">' in html
    assert _marked(html) == (["f-assignee", "f-smin", "f-from"], ["f-assignee"])
    assert "match" not in html and "triage-row-" not in html


def test_an_unknown_assignee_is_refused_naming_the_field(client, lead):
    """New-user walk: ``?assignee=999999`` silently listed nothing."""
    response = client.get("/triage/?assignee=999999")
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert _summary(html) == SUMMARY + "Assignee: must be someone items can be assigned to."
    assert _marked(html) == (["f-assignee"], ["f-assignee"])
    assert '<option value="999999" selected>user id 999999</option>' in html  # kept, as typed
    assert "match" not in html.split("<main", 1)[1]
