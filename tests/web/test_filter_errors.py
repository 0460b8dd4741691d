"""A refused filter value re-shows its page's filter form with the error next to the field
in plain words, status 400 — never a bare error page (new-user findings, 2026-12-01)."""

from __future__ import annotations

import re

import pytest

from reviewapp.actors import Role


@pytest.fixture
def lead(make, login):
    ws = make.workspace()
    user = make.user(ws, Role.LEAD)
    login(user)
    return ws


def test_a_reversed_dashboard_range_is_shown_next_to_the_date_field(client, lead):
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


def test_a_bad_dashboard_date_names_its_field(client, lead):
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


def test_an_unknown_sort_is_shown_at_the_sort_field(client, lead):
    response = client.get("/?sort=bogus")
    html = response.get_data(as_text=True)
    assert response.status_code == 400 and response_has_form(html)
    assert 'aria-invalid="true" aria-describedby="sort-error"' in html
    error = html.split('<small id="sort-error" class="error">', 1)[1].split("</small>", 1)[0]
    assert error.startswith("must be one of ") and "newest" in error


def test_a_bad_score_is_shown_at_the_score_field(client, lead):
    response = client.get("/?score_min=abc")
    html = response.get_data(as_text=True)
    assert response.status_code == 400 and response_has_form(html)
    assert re.search(r'aria-label="Score from" aria-invalid="true"', html) or \
        re.search(r'aria-invalid="true"[^>]*aria-label="Score from"', html)


def test_a_garbage_page_link_is_shown_on_the_list_page(client, lead):
    response = client.get("/?cursor=garbage&kind=chat")
    html = response.get_data(as_text=True)
    assert response.status_code == 400 and response_has_form(html)
    assert '<p class="error list-error" role="alert">Page link: it is not a link to a page' in html
    assert '<a href="/?kind=chat">First page</a>' in html
