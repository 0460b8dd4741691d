"""Bad values in HTML routes get 400 naming the field, never 500 (SPEC 9, 10): integers
beyond the database's integer range and dates beyond the years data can have."""

from __future__ import annotations

import pytest

HUGE = "99999999999999999999999"  # beyond every database integer
BIG = str(2**31)  # one past PostgreSQL's integer


@pytest.fixture
def lead(make, login):
    ws = make.workspace()
    user = make.user(ws, role="admin")
    login(user)
    return ws, user


@pytest.mark.parametrize("value", [HUGE, BIG, "-1", "0"])
@pytest.mark.parametrize(("url", "field"), [
    ("/queue?after={}", "after"),
    ("/cases/new?run={}", "run"),
])
def test_out_of_range_ids_in_a_query_are_400_naming_the_field(client, lead, url, field, value):
    response = client.get(url.format(value))
    assert response.status_code == 400, response.status_code
    assert field in response.get_data(as_text=True)


@pytest.mark.parametrize("value", [HUGE, BIG])
def test_an_out_of_range_assignee_is_400_naming_the_field(client, lead, make, value):
    run = make.run(lead[0])
    item = make.triage_item(run)
    response = client.post(f"/triage/{item.id}/assign", data={"version": item.version, "assignee_id": value})
    assert response.status_code == 400
    assert "assignee_id" in response.get_data(as_text=True)


@pytest.mark.parametrize("token", [f"{HUGE}:1", f"1:{HUGE}", f"{BIG}:1"])
@pytest.mark.parametrize("action", ["assign", "move"])
def test_out_of_range_bulk_items_are_refused_naming_items(client, lead, token, action):
    """Without JavaScript a refused selection goes back to the list, which says why
    (new-user walk: the bare error page); htmx gets it at the bulk controls (400)."""
    response = client.post("/triage/bulk", data={"items": [token], "action": action, "state": "triaged",
                                                  "assignee_id": ""})
    assert response.status_code == 303
    html = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "Nothing was changed: each item must be an id and a version." in html
    swapped = client.post("/triage/bulk", headers={"HX-Request": "true"}, data={
        "items": [token], "action": action, "state": "triaged", "assignee_id": ""})
    assert swapped.status_code == 400
    assert "Nothing was changed: each item must be an id and a version." in swapped.get_data(as_text=True)


@pytest.mark.parametrize("field", ["date_from", "date_to"])
@pytest.mark.parametrize("value", ["9999-12-31", "0001-01-01", "1999-12-31", "2101-01-01"])
@pytest.mark.parametrize("url", ["/dashboard/?{}={}", "/exports/feedback.csv?{}={}", "/exports/decisions.csv?{}={}",
                                 "/exports/feedback.jsonl?{}={}", "/triage/?{}={}"])
def test_dates_beyond_the_data_years_are_400_naming_the_field(client, lead, url, field, value):
    response = client.get(url.format(field, value))
    assert response.status_code == 400, (url, response.status_code)
    assert field in response.get_data(as_text=True)


def test_dates_within_the_years_still_work(client, lead):
    assert client.get("/dashboard/?date_from=2000-01-01&date_to=2100-12-31").status_code == 200
