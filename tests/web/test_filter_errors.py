"""A refused filter value re-shows its page's filter form with the error next to the field
in plain words, status 400 — never a bare error page (new-user findings, 2026-12-01)."""

from __future__ import annotations

import re
from html import unescape

import pytest


def test_a_reversed_dashboard_range_is_shown_next_to_the_date_field(client, lead_workspace):
    response = client.get("/dashboard/?date_from=2026-12-31&date_to=2026-11-01")
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert '<form method="get" action="/dashboard/"' in html  # the page, with its form
    # the typed values kept, the From field marked and described by the message
    assert re.search(r'id="d-from" type="date" name="date_from"\s+value="2026-12-31" '
                     r'aria-invalid="true" aria-describedby="d-from-error"', html)
    assert 'value="2026-11-01"' in html
    assert '<small id="d-from-error" class="error" role="alert">From must not be after To.</small>' in html
    assert "date_to" not in html.split('id="d-from-error"', 1)[1].split("</small>", 1)[0]


def test_a_bad_dashboard_date_names_its_field(client, lead_workspace):
    response = client.get("/dashboard/?date_to=tomorrow")
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert 'id="d-to-error"' in html and 'value="tomorrow"' in html


def test_the_dashboard_form_of_a_refused_filter_is_still_only_for_leads(client, make, login):
    ws = make.workspace()
    login(make.user(ws))
    assert client.get("/dashboard/?date_from=2026-12-31&date_to=2026-11-01").status_code == 403



def response_has_form(html):
    return 'role="search" aria-label="Filter runs"' in html


def test_an_unknown_sort_is_shown_at_the_sort_field(client, lead_workspace):
    response = client.get("/?sort=bogus")
    html = response.get_data(as_text=True)
    assert response.status_code == 400 and response_has_form(html)
    assert 'aria-invalid="true" aria-describedby="sort-error"' in html
    error = html.split('<small id="sort-error" class="error">', 1)[1].split("</small>", 1)[0]
    assert error.startswith("choose ") and "Newest first" in error and "score_desc" not in error


def test_a_bad_score_is_shown_at_the_score_field(client, lead_workspace):
    response = client.get("/?score_min=abc")
    html = response.get_data(as_text=True)
    assert response.status_code == 400 and response_has_form(html)
    assert re.search(r'aria-label="Score from" aria-invalid="true"', html) or \
        re.search(r'aria-invalid="true"[^>]*aria-label="Score from"', html)


def test_a_garbage_page_link_is_shown_on_the_list_page(client, lead_workspace):
    response = client.get("/?cursor=garbage&kind=chat")
    html = response.get_data(as_text=True)
    assert response.status_code == 400 and response_has_form(html)
    assert '<p class="error list-error" role="alert">Page link: it is not a link to a page' in html
    assert '<a href="/?kind=chat">First page</a>' in html


@pytest.mark.parametrize(("query", "label"), [("score_min=150", "Score from"),
                                              ("score_max=-1", "Score to")])
def test_an_out_of_range_score_reads_as_one_sentence_naming_the_field(client, lead_workspace, query, label):
    """New-user finding: the list's summary read "Score from: Number must be between 0 and
    100.." (the validator's period, then the sentence's own)."""
    response = client.get(f"/?{query}")
    html = response.get_data(as_text=True)
    assert response.status_code == 400 and response_has_form(html)
    summary = html.split('<p class="error" role="alert">', 1)[1].split("</p>", 1)[0]
    assert " ".join(summary.split()) == ("Some filters are not valid; fix the fields marked above: "
                                         f"{label}: must be between 0 and 100.")
    assert f'<small id="{"score_min" if label == "Score from" else "score_max"}-error" class="error">must be between 0 and 100</small>' in html
    assert ".." not in summary


@pytest.mark.parametrize(("query", "label"), [("score_min=abc", "Score from"), ("score_max=1.5", "Score to")])
def test_a_score_that_is_no_number_reads_as_one_message_naming_the_field(client, lead_workspace, query, label):
    """Browser-walk finding: ``?score_min=abc`` showed two messages, "Not a valid integer
    value." and "must be between 0 and 100"; now one, which the summary names."""
    response = client.get(f"/?{query}")
    html = response.get_data(as_text=True)
    assert response.status_code == 400 and response_has_form(html)
    summary = html.split('<p class="error" role="alert">', 1)[1].split("</p>", 1)[0]
    assert " ".join(summary.split()) == ("Some filters are not valid; fix the fields marked above: "
                                         f"{label}: must be a whole number between 0 and 100.")
    assert html.count('class="error">') == 1
    box = "score_min" if label == "Score from" else "score_max"
    assert f'<small id="{box}-error" class="error">must be a whole number between 0 and 100</small>' in html
    assert "Not a valid integer" not in html


@pytest.mark.parametrize("query", ["score_min=&score_max=", "q=checkout&score_min=&score_max=&sort=newest",
                                   "score_min=%20&score_max="])
def test_empty_score_boxes_are_no_filter(client, lead_workspace, query):
    """Regression of 8b56c2d found in a browser walk: the filter form always sends both
    score boxes, empty when unused, and an empty box was refused ("must be a whole
    number"), so every search, Apply and sort answered 400 with no runs."""
    response = client.get(f"/?{query}")
    html = response.get_data(as_text=True)
    assert response.status_code == 200, html[:2000]
    assert 'class="error"' not in html and 'role="alert"' not in html.split("<main", 1)[-1]


RUNS_MANY = "kind=batch&score_min=80&score_max=10&sort=bogus"


def _controls(html):
    """The ids of the runs filters marked invalid, in the page's order; which has autofocus."""
    form = html.split('aria-label="Filter runs"', 1)[1].split("</form>", 1)[0]
    controls = re.findall(r"<(?:input|select)\b[^>]*>", form)
    marked = [re.search(r'\sid="([^"]+)"', c).group(1) for c in controls if 'aria-invalid="true"' in c]
    focused = [re.search(r'\sid="([^"]+)"', c).group(1) for c in controls if re.search(r"\sautofocus\b", c)]
    return marked, focused


def _runs_summary(html):
    return unescape(" ".join(html.split('<p class="error" role="alert">', 1)[1].split("</p>", 1)[0].split()))


@pytest.mark.parametrize("headers", [{}, {"HX-Request": "true", "X-Filter-Focus": "1"}])
def test_several_refused_run_filters_are_each_named_and_the_first_is_focused(client, lead_workspace, headers):
    """New-user walk: the form's own refusals hid the service's (a reversed score range,
    an unknown sort), and of those only the first was named. Each is named by its label,
    in the page's order, and marked; the first takes the focus (the queue forms' way)."""
    response = client.get(f"/?{RUNS_MANY}", headers=headers)
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert _runs_summary(html) == (
        "Some filters are not valid; fix the fields marked above: Kind: choose Chat or AIOps; "
        "Score to: must not be below the minimum score; Sort: choose Newest first, Oldest first, Highest evidence "
        "score, Lowest evidence score, Most failed tool calls, Most tool calls or Best match (with a search).")
    if headers:
        assert html.lstrip().startswith('<section id="runs-table"')
        html = html.split('<div id="filter-grid"', 1)[1]
        html = '<form aria-label="Filter runs"' + html + "</form>"
    assert _controls(html) == (["kind", "score_max", "sort"], ["kind"])
    assert 'value="80"' in html and 'value="10"' in html


def test_a_refusal_of_a_filter_sent_by_typing_leaves_the_focus_where_it_is(client, lead_workspace):
    """The runs list asks as one types in the search, picks an option or leaves a changed
    box: those answers must not take the focus from where the person is. Only a submitted
    form (the page says so in X-Filter-Focus) moves it."""
    response = client.get(f"/?{RUNS_MANY}", headers={"HX-Request": "true"})
    html = response.get_data(as_text=True)
    assert response.status_code == 400 and 'aria-invalid="true"' in html
    assert not re.search(r"\sautofocus\b", html)


def test_both_refused_score_boxes_each_name_their_box(client, lead_workspace):
    """Screenshot of the multi-error state: two boxes refused showed "must be between 0 and
    100" twice under the pair, saying neither which box was which."""
    html = client.get("/?score_min=150&score_max=-1").get_data(as_text=True)
    assert '<small id="score_min-error" class="error">Score from: must be between 0 and 100</small>' in html
    assert '<small id="score_max-error" class="error">Score to: must be between 0 and 100</small>' in html
    assert re.search(r'<input aria-describedby="score_max-error" aria-invalid="true" aria-label="Score to"', html)


def test_an_unknown_workspace_name_is_named_with_the_other_refused_filters(client, lead_workspace):
    html = client.get("/?workspace=nope&score_min=80&score_max=10").get_data(as_text=True)
    assert _runs_summary(html) == ("Some filters are not valid; fix the fields marked above: Workspace: you have "
                                   "no workspace 'nope'; Score to: must not be below the minimum score.")
    assert _controls(html) == (["workspace", "score_max"], ["workspace"])


def test_a_workspace_id_the_user_is_not_in_is_named_and_shown_though_they_have_one(client, make, lead_workspace):
    """New-user walk: ``/?workspace=77`` said "No items match these filters." and, the user
    having one workspace, showed no Workspace field to fix. It is refused like an unknown
    name, the field shown with the message, whether the workspace exists or not."""
    other = make.workspace()
    make.run(other)
    for unknown in (other.id, 999_999):
        response = client.get(f"/?workspace={unknown}&score_min=80&score_max=10")
        html = response.get_data(as_text=True)
        assert response.status_code == 400
        assert _runs_summary(html) == ("Some filters are not valid; fix the fields marked above: Workspace: you "
                                       f"have no workspace '{unknown}'; Score to: must not be below the minimum score.")
        assert _controls(html) == (["workspace", "score_max"], ["workspace"])
        assert (f'<small id="workspace-error" class="error">you have no workspace &#39;{unknown}&#39;</small>'
                in html)
        assert "No items match" not in html
    assert client.get(f"/?workspace={lead_workspace.id}").status_code == 200
