"""The case list's workspace filter (new-user walk, 2026-12-03): a workspace the reader is
not in answered "0 matching"; it is refused, naming the field."""

from __future__ import annotations

import re
from html import unescape


def test_a_workspace_id_the_reader_is_not_in_is_refused_by_name(client, make, lead_workspace):
    other = make.workspace()
    make.case(other, title="theirs")
    make.case(lead_workspace, title="ours")
    for unknown in (other.id, 999_999):
        response = client.get(f"/cases/?workspace={unknown}")
        html = unescape(response.get_data(as_text=True))
        assert response.status_code == 400
        assert f"Workspace: you have no workspace '{unknown}'." in html  # the list's summary
        assert "0 matching" not in html and "theirs" not in html
    html = client.get(f"/cases/?workspace={lead_workspace.id}").get_data(as_text=True)
    assert "ours" in html and "theirs" not in html


# --- A refused filter reads as the runs and triage lists' (filters review, 2026-12-03): the
# cases page answered a bare 400 page naming one field by its code ("source_type: ...").

SUMMARY = "Some filters are not valid; fix the fields marked above: "
# The Source filter refused in the labels its select shows (tidy walk: it said "AUTO or MANUAL").
SOURCE_WORDS = "must be one of Automatic (a useful verdict) (AUTO), Added by a person (MANUAL)"


def _summary(html):
    body = html.split('<section id="cases-table"', 1)[1]
    return unescape(" ".join(body.split('<p class="error" role="alert">', 1)[1].split("</p>", 1)[0].split()))


def _marked(html):
    """The ids of the controls marked invalid, in the page's order; which has autofocus."""
    controls = re.findall(r"<(?:input|select)\b[^>]*>", html)
    marked = [re.search(r'\sid="([^"]+)"', c).group(1) for c in controls if 'aria-invalid="true"' in c]
    focused = [re.search(r'\sid="([^"]+)"', c).group(1) for c in controls if re.search(r"\sautofocus\b", c)]
    return marked, focused


MANY = "workspace=no-such-team&fault_category=not+a+category&source_type=BOTH&service=" + "s" * 121


def test_every_refused_filter_is_named_by_its_label_marked_and_the_first_focused(client, make, lead_workspace):
    make.case(lead_workspace, title="ours")
    response = client.get(f"/cases/?{MANY}")
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert 'role="search" aria-label="Search cases"' in html  # the list page, its form
    summary = _summary(html)
    assert summary.startswith(SUMMARY + "Workspace: you have no workspace 'no-such-team'; Category: 'not a category' "
                                        "is no fault category of your workspaces nor of any case: use one of ")
    assert summary.endswith("; Service: at most 120 characters; Source: " + SOURCE_WORDS + ".")
    # The workspace field is shown though the reader has one workspace, so it can be fixed.
    assert _marked(html) == (["c-ws", "c-cat", "c-svc", "c-src"], ["c-ws"])
    assert f'<small id="c-src-error" class="error">{SOURCE_WORDS}</small>' in html
    assert re.search(r'<input id="c-cat"[^>]*value="not a category"', html)  # kept as typed
    assert '<option value="BOTH" selected>BOTH</option>' in html
    main = html.split("<main", 1)[1]
    assert "ours" not in main and " cases" not in main.split('id="cases-table"', 1)[1]  # no list, no count
    assert "source_type" not in main.split("<form", 1)[0] and "400" not in main


def test_an_htmx_refusal_answers_in_the_table_with_the_marked_filters_out_of_band(client, lead_workspace):
    response = client.get("/cases/?source_type=BOTH", headers={"HX-Request": "true", "X-Filter-Focus": "1"})
    html = response.get_data(as_text=True)
    assert response.status_code == 400 and "HX-Retarget" not in response.headers
    assert html.lstrip().startswith('<section id="cases-table"')
    assert _summary(html) == SUMMARY + f"Source: {SOURCE_WORDS}."
    assert '<div id="filter-grid" class="filter-fields" hx-swap-oob="true">' in html
    assert _marked(html) == (["c-src"], ["c-src"])
    # The next search after it brings the filters back unmarked.
    html = client.get("/cases/?source_type=AUTO", headers={"HX-Request": "true", "X-Filter-Errors": "1"}
                      ).get_data(as_text=True)
    assert '<div id="filter-grid" class="filter-fields" hx-swap-oob="true">' in html and "aria-invalid" not in html
