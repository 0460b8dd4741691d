"""Queue, case, export and dashboard pages: access, htmx vs plain, 409s, downloads (SPEC 8, 10)."""

from __future__ import annotations

import csv
import io
import json
import re
from html.parser import HTMLParser

import pytest

from reviewapp.actors import Role
from reviewapp.domain.fault_categories import FAULT_CATEGORIES, GROUPS
from reviewapp.models import TriageItem


@pytest.fixture
def site(make):
    ws = make.workspace()
    users = {role: make.user(ws, role) for role in Role}
    lead2 = make.user(ws, Role.LEAD)
    run = make.run(ws, query="Why is checkout-service returning 502s?")
    item = make.triage_item(run)
    case = make.case(ws, run=run)
    return type("Site", (), dict(ws=ws, users=users, lead2=lead2, run=run, item=item, case=case))


HTMX = {"HX-Request": "true"}


def _reviewer_requests(site):
    i, c, r = site.item.id, site.case.case_id, site.run.id
    return [
        ("get", "/triage/", None), ("get", f"/triage/{i}", None),
        ("post", f"/triage/{i}/state", {"version": "1", "state": "triaged"}),
        ("post", f"/triage/{i}/assign", {"version": "1", "assignee_id": ""}),
        ("post", "/triage/bulk", {"items": f"{i}:1", "action": "move", "state": "triaged"}),
        ("get", f"/cases/{c}/edit", None), ("post", f"/cases/{c}/edit", {"version": "1", "title": "x"}),
        ("get", f"/cases/new?run={r}", None), ("post", f"/cases/new?run={r}", {"title": "x"}),
        ("get", "/exports/", None), ("get", "/exports/cases.csv", None),
        ("get", "/exports/feedback.jsonl", None), ("get", "/exports/evalset.jsonl", None),
        ("get", "/dashboard/", None),
    ]


def test_reviewer_gets_the_same_403_everywhere(client, login, site):
    login(site.users[Role.REVIEWER])
    messages = set()
    for method, url, data in _reviewer_requests(site):
        response = getattr(client, method)(url, data=data)
        assert response.status_code == 403, url
        html = response.get_data(as_text=True)
        messages.add(html.split('<section class="card error-page">', 1)[1].split("</section>", 1)[0])
    assert len(messages) == 1
    assert "Not available to you" in (only := messages.pop()) and "AUTH_FORBIDDEN" in only
    assert client.get("/cases/").status_code == 200  # reading cases is fine
    assert client.get(f"/cases/{site.case.case_id}").status_code == 200


def test_list_filters_offer_the_vocabularies_of_the_models(client, login, site):
    """The triage list's kinds and the case library's sources come from the models'
    enums (issue 12: no vocabulary restated in a template), so each select offers them."""
    login(site.users[Role.LEAD])
    triage_page = client.get("/triage/").get_data(as_text=True)
    kinds = triage_page.split('id="f-kind"', 1)[1].split("</select>", 1)[0]
    assert re.findall(r'<option value="(\w*)"', kinds) == ["", "chat", "aiops"]
    cases_page = client.get("/cases/").get_data(as_text=True)
    sources = cases_page.split('id="c-src"', 1)[1].split("</select>", 1)[0]
    assert re.findall(r'<option value="(\w*)"', sources) == ["", "AUTO", "MANUAL"]


@pytest.mark.parametrize("role, status", [(Role.LEAD, 403), (Role.ADMIN, 200)])
def test_exports_are_admin_only(client, login, site, role, status):
    login(site.users[role])
    assert client.get("/exports/").status_code == status
    assert client.get("/exports/cases.csv").status_code == status


def test_foreign_and_missing_items_get_identical_403s(client, login, site, make):
    foreign = make.triage_item(make.run(make.workspace()))
    login(site.users[Role.LEAD])
    a = client.get(f"/triage/{foreign.id}")
    b = client.get("/triage/999999")
    assert a.status_code == b.status_code == 403
    assert a.get_data() == b.get_data()
    c = client.post(f"/triage/{foreign.id}/state", data={"version": "1", "state": "triaged"},
                    headers=HTMX)
    d = client.post("/triage/999999/state", data={"version": "1", "state": "triaged"}, headers=HTMX)
    assert c.status_code == d.status_code == 403 and c.get_data() == d.get_data()


@pytest.mark.parametrize("role, links", [
    (Role.REVIEWER, ["Runs", "Review queue", "Queues", "Cases"]),
    (Role.LEAD, ["Runs", "Review queue", "Queues", "Triage", "Disputes", "Cases", "Dashboard"]),
    (Role.ADMIN, ["Runs", "Review queue", "Queues", "Triage", "Disputes", "Cases", "Dashboard",
                  "Exports", "Admin"]),
])
def test_nav_links_follow_the_role(client, login, site, role, links):
    login(site.users[role])
    html = client.get("/").get_data(as_text=True)
    block = html.split('<nav class="nav"', 1)[1].split("</nav>", 1)[0]
    assert re.findall(r">([A-Za-z ]+)</a>", block) == links


def test_queue_page_lists_and_filters(client, login, site, make):
    other = make.triage_item(make.run(site.ws, kind="aiops", query="Alert DiskPressure"))
    login(site.users[Role.LEAD])
    html = client.get("/triage/").get_data(as_text=True)
    assert f'id="triage-row-{site.item.id}"' in html and f'id="triage-row-{other.id}"' in html
    assert f'value="{site.item.id}:1"' in html  # the bulk checkbox carries the version
    fragment = client.get("/triage/?kind=aiops", headers=HTMX)
    body = fragment.get_data(as_text=True)
    assert body.lstrip().startswith('<section id="triage-table"')
    assert f'triage-row-{other.id}' in body and f'triage-row-{site.item.id}"' not in body
    assert "HX-Request" in fragment.headers.get("Vary", "")
    bad = client.get("/triage/?score_min=abc")
    assert bad.status_code == 400 and "score_min" in bad.get_data(as_text=True)


def test_item_page_shows_ratings_and_history(client, login, site, make):
    make.feedback_row(site.run, site.users[Role.REVIEWER], reason="incorrect",
                      comment="Wrong — it was the DB 数据库", correction="Restart the pool.")
    login(site.users[Role.LEAD])
    html = client.get(f"/triage/{site.item.id}").get_data(as_text=True)
    for text in ("Wrong — it was the DB 数据库", "Restart the pool.", "<td data-label=\"Reason\">Incorrect</td>",  # the label
                 site.users[Role.REVIEWER].username, "Feedback history", "Case of this run"):
        assert text in html


def test_htmx_row_action_swaps_the_row(client, login, site):
    login(site.users[Role.LEAD])
    response = client.post(f"/triage/{site.item.id}/assign", headers=HTMX,
                           data={"version": "1", "assignee_id": str(site.lead2.id), "next": "/triage/"})
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert html.lstrip().startswith(f'<tr id="triage-row-{site.item.id}"')
    assert f'value="{site.item.id}:2"' in html and "Assignment saved." in html
    assert f'<option value="{site.lead2.id}" selected>' in html


def test_plain_form_post_redirects_303(client, login, site, session):
    login(site.users[Role.LEAD])
    response = client.post(f"/triage/{site.item.id}/state",
                           data={"version": "1", "state": "triaged", "next": "/triage/?state=open"})
    assert response.status_code == 303 and response.headers["Location"] == "/triage/?state=open"
    session.expire_all()
    assert session.get(TriageItem, site.item.id).state == "triaged"
    evil = client.post(f"/triage/{site.item.id}/state",
                       data={"version": "2", "state": "resolved", "next": "https://evil.example/"})
    assert evil.status_code == 303 and evil.headers["Location"] == "/"


def test_stale_htmx_action_gets_409_and_the_current_row(client, login, site):
    login(site.users[Role.LEAD])
    client.post(f"/triage/{site.item.id}/assign", data={"version": "1", "assignee_id": str(site.lead2.id)})
    stale = client.post(f"/triage/{site.item.id}/state", headers=HTMX,
                        data={"version": "1", "state": "resolved"})
    assert stale.status_code == 409
    html = stale.get_data(as_text=True)
    assert "HX-Retarget" not in stale.headers  # the row itself is swapped, with the news
    assert f'value="{site.item.id}:2"' in html
    assert f'<option value="{site.lead2.id}" selected>' in html
    # the change was this lead's own, from another tab: not "someone else"
    assert "changed by you, in another tab or window, since your page was loaded" in html
    assert "someone else" not in html


def test_stale_plain_action_gets_a_409_page_with_the_current_state(client, login, site):
    login(site.users[Role.LEAD])
    client.post(f"/triage/{site.item.id}/note", data={"version": "1", "note": "first note"})
    stale = client.post(f"/triage/{site.item.id}/note", data={"version": "1", "note": "mine"})
    assert stale.status_code == 409
    html = stale.get_data(as_text=True)
    assert "first note" in html and "someone else" not in html
    assert "This item was changed by you, in another tab or window, since your page was loaded" in html


def test_a_409_page_names_the_other_lead_who_changed_the_item(app_factory, client, login, site):
    """The 409 page said "changed by someone else" whoever it was: it names the lead."""
    other = app_factory().test_client()
    login(site.lead2, c=other)
    other.post(f"/triage/{site.item.id}/note", data={"version": "1", "note": "lead2 was here"})
    login(site.users[Role.LEAD])
    stale = client.post(f"/triage/{site.item.id}/note", data={"version": "1", "note": "mine"})
    assert stale.status_code == 409
    html = stale.get_data(as_text=True)
    assert f"This item was changed by {site.lead2.username} since your page was loaded" in html
    assert "lead2 was here" in html and "mine" in html


def test_a_stale_triage_note_or_category_shows_the_users_own_version(client, login, site):
    """A note typed on a page that went stale is not lost: the 409 page shows it (as the
    case editor's does), and the category typed too."""
    login(site.users[Role.LEAD])
    client.post(f"/triage/{site.item.id}/state", data={"version": "1", "state": "triaged"})
    stale = client.post(f"/triage/{site.item.id}/note",
                        data={"version": "1", "note": "my long careful note <b>x</b>"})
    assert stale.status_code == 409
    html = stale.get_data(as_text=True)
    assert "Your version (not saved)" in html and "my long careful note &lt;b&gt;x&lt;/b&gt;" in html
    stale = client.post(f"/triage/{site.item.id}/category",
                        data={"version": "1", "fault_category": "DISK_FULL_TYPED"})
    assert stale.status_code == 409
    assert "DISK_FULL_TYPED" in stale.get_data(as_text=True)


def test_bulk_htmx_reports_the_stale_item_and_swaps_every_row(client, login, site, make):
    more = [make.triage_item(make.run(site.ws)) for _ in range(2)]
    login(site.users[Role.LEAD])
    client.post(f"/triage/{more[0].id}/note", data={"version": "1", "note": "bumped"})
    items = [f"{site.item.id}:1", f"{more[0].id}:1", f"{more[1].id}:1"]
    response = client.post("/triage/bulk", headers=HTMX,
                           data={"items": items, "action": "move", "state": "wont_fix"})
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "2 of 3 item(s) changed." in html
    assert ("Changed by you, in another tab or window, since your page was loaded, so not changed: "
            f"item #{more[0].id}.") in html
    for item in (site.item, *more):
        assert f'<tr id="triage-row-{item.id}" class="triage-row' in html
    assert html.count('hx-swap-oob="true"') == 3


def test_bulk_says_changed_by_you_once_with_the_items(client, login, site, make):
    """New-user walk: a bulk action over stale items said "Item #N — changed by someone
    else: changed by someone else since your page was loaded; not changed" for each item.
    It is said once, naming the items, in the htmx result and in the no-JS flash."""
    more = [make.triage_item(make.run(site.ws)) for _ in range(3)]
    login(site.users[Role.LEAD])
    for item in more[:2]:
        client.post(f"/triage/{item.id}/note", data={"version": "1", "note": "bumped"})
    items = [f"{site.item.id}:1", *(f"{item.id}:1" for item in more)]
    response = client.post("/triage/bulk", headers=HTMX,
                           data={"items": items, "action": "move", "state": "wont_fix"})
    result = response.get_data(as_text=True).split("<template>")[0]
    lines = [" ".join(re.sub(r"<[^>]+>", "", li).split()) for li in re.findall(r"<li>(.*?)</li>", result, re.S)]
    assert lines == ["Changed by you, in another tab or window, since your page was loaded, so not changed: "
                     f"items #{more[0].id} and #{more[1].id}."]
    assert result.count("changed by you") + result.count("Changed by you") == 1
    # Without JavaScript: the same sentence once in the flash.
    client.post(f"/triage/{more[2].id}/note", data={"version": "1", "note": "bumped"})
    foreign = make.triage_item(make.run(make.workspace()))
    plain = client.post("/triage/bulk", data={"items": [f"{site.item.id}:2", f"{more[2].id}:1", f"{more[0].id}:1",
                                                        f"{foreign.id}:1"],
                                              "action": "move", "state": "triaged", "next": "/triage/"})
    assert plain.status_code == 303
    page = client.get("/triage/").get_data(as_text=True)
    flash = " ".join(re.search(r'<div class="flash flash-error">(.*?)</div>', page, re.S).group(1).split())
    assert flash == ("1 of 4 item(s) changed. Changed by you, in another tab or window, since your page was loaded, "
                     f"so not changed: items #{more[2].id} and #{more[0].id}. "
                     f"Not found, or not yours, so not changed: item #{foreign.id}.")


def test_bulk_groups_stale_items_by_who_changed_them(app_factory, client, login, site, make):
    """Stale items of a bulk action are named once per person who changed them."""
    more = [make.triage_item(make.run(site.ws)) for _ in range(3)]
    other = app_factory().test_client()
    login(site.lead2, c=other)
    for item in (more[0], more[2]):
        other.post(f"/triage/{item.id}/note", data={"version": "1", "note": "lead2's"})
    login(site.users[Role.LEAD])
    client.post(f"/triage/{more[1].id}/note", data={"version": "1", "note": "mine"})
    items = [f"{site.item.id}:1", *(f"{item.id}:1" for item in more)]
    response = client.post("/triage/bulk", headers=HTMX,
                           data={"items": items, "action": "move", "state": "wont_fix"})
    result = response.get_data(as_text=True).split("<template>")[0]
    lines = [" ".join(re.sub(r"<[^>]+>", "", li).split()) for li in re.findall(r"<li>(.*?)</li>", result, re.S)]
    assert lines == [
        f"Changed by {site.lead2.username} since your page was loaded, so not changed: "
        f"items #{more[0].id} and #{more[2].id}.",
        f"Changed by you, in another tab or window, since your page was loaded, so not changed: item #{more[1].id}."]


def test_bulk_plain_flashes_and_redirects(client, login, site):
    login(site.users[Role.LEAD])
    response = client.post("/triage/bulk", data={
        "items": f"{site.item.id}:1", "action": "assign", "assignee_id": str(site.lead2.id),
        "next": "/triage/"})
    assert response.status_code == 303 and response.headers["Location"] == "/triage/"
    assert "1 of 1 item(s) changed." in client.get("/triage/").get_data(as_text=True)


def test_case_edit_offers_proposals_and_saves_with_version(client, login, site, session):
    login(site.users[Role.LEAD])
    page = client.get(f"/cases/{site.case.case_id}/edit").get_data(as_text=True)
    # Offered beside the (empty) stored fields, not filled in (tests/web/test_case_edit.py).
    assert "Proposed from the query: checkout-service" in page and 'value="checkout-service"' not in page
    assert "Proposed from the query: HTTP_502" in page and 'value="HTTP_502"' not in page
    form = {"version": "1", "title": "502 after OOM", "fault_category": "DEPLOYMENT",
            "error_code": "OOMKilled", "service": "checkout-service", "root_cause": "r", "solution": "s"}
    saved = client.post(f"/cases/{site.case.case_id}/edit", data=form)
    assert saved.status_code == 303
    stale = client.post(f"/cases/{site.case.case_id}/edit", data={**form, "title": "again"})
    assert stale.status_code == 409 and "502 after OOM" in stale.get_data(as_text=True)
    invalid = client.post(f"/cases/{site.case.case_id}/edit", data={**form, "version": "2", "title": ""})
    assert invalid.status_code == 422


def test_new_case_page_for_a_run_with_a_case_points_to_it(client, login, site, make):
    login(site.users[Role.LEAD])
    html = client.get(f"/cases/new?run={site.run.id}").get_data(as_text=True)
    assert f"/cases/{site.case.case_id}/edit" in html and "already has a case" in html
    conflict = client.post(f"/cases/new?run={site.run.id}", data={"title": "dup"})
    assert conflict.status_code == 409
    fresh = make.run(site.ws)
    created = client.post(f"/cases/new?run={fresh.id}", data={"title": "manual one"})
    assert created.status_code == 303 and created.headers["Location"].startswith("/cases/")
    # A double click on "Create case" lands on the case the first click made, no 409.
    again = client.post(f"/cases/new?run={fresh.id}", data={"title": "manual one"})
    assert again.status_code == 303 and again.headers["Location"] == created.headers["Location"]
    detail = client.get(created.headers["Location"]).get_data(as_text=True)
    assert "MANUAL" in detail and fresh.run_id in detail


def test_admin_downloads_a_streamed_csv_with_neutralised_formulas(client, login, site, make):
    make.case(site.ws, title="=HYPERLINK(\"http://evil\")", root_cause="数据库\n🚀 הפריסה")
    login(site.users[Role.ADMIN])
    response = client.get("/exports/cases.csv?bom=1")
    assert response.status_code == 200 and response.is_streamed
    assert response.mimetype == "text/csv"
    assert re.match(r'attachment; filename="cases-\d{8}T\d{6}Z\.csv"',
                    response.headers["Content-Disposition"])
    assert response.headers["X-Export-Rows"] == "2"
    data = response.get_data()
    assert data.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    titles = {r["title"] for r in rows}
    assert "'=HYPERLINK(\"http://evil\")" in titles
    assert "数据库\n🚀 הפריסה" in {r["root_cause"] for r in rows}


def test_admin_downloads_filtered_jsonl(client, login, site, make):
    make.case(site.ws, title="wanted", service="payment-api")
    make.case(site.ws, title="other", service="checkout")
    login(site.users[Role.ADMIN])
    response = client.get("/exports/cases.jsonl?service=PAYMENT-API")
    lines = [json.loads(line) for line in response.get_data(as_text=True).splitlines()]
    assert [line["title"] for line in lines] == ["wanted"]
    assert client.get("/exports/evalset.csv").status_code == 400
    assert client.get("/exports/cases.xlsx").status_code == 400
    assert client.get("/exports/people.csv").status_code == 400
    assert client.get("/exports/feedback.csv?rating=bad").status_code == 400


def test_dashboard_renders_svg_without_inline_styles(client, login, site):
    # The triage factory sets the verdict through the one verdict write, which keeps
    # the dashboard's roll-ups: the verdict chart is there without a rebuild.
    login(site.users[Role.LEAD])
    response = client.get("/dashboard/")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "style-src 'self'" in response.headers["Content-Security-Policy"]
    assert " style=" not in html and "<style" not in html
    # four charts and the "no failed tool calls" / "no disliked tools" messages; a table of
    # numbers for each of six
    assert html.count("<svg") == 4 and "No failed tool calls in this range." in html
    assert "No tool call rated not helpful in this range." in html
    assert html.count('<table class="visually-hidden">') == 6


def test_csrf_is_enforced_on_queue_actions(app_factory, make, site):
    app = app_factory(WTF_CSRF_ENABLED=True)
    c = app.test_client()
    page = c.get("/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page) or \
        re.search(r'name="csrf_token" value="([^"]+)"', page)
    from tests.factories import DEFAULT_PASSWORD

    c.post("/login", data={"username": site.users[Role.LEAD].username,
                           "password": DEFAULT_PASSWORD, "csrf_token": token.group(1)})
    page = c.get("/triage/").get_data(as_text=True)
    token = re.search(r'"X-CSRFToken": "([^"]+)"', page).group(1)
    missing = c.post(f"/triage/{site.item.id}/state", data={"version": "1", "state": "triaged"})
    assert missing.status_code == 400
    ok = c.post(f"/triage/{site.item.id}/state", data={"version": "1", "state": "triaged"},
                headers={**HTMX, "X-CSRFToken": token})
    assert ok.status_code == 200


def test_a_non_admin_gets_403_before_any_format_or_filter_error(client, login, site):
    login(site.users[Role.LEAD])
    for url in ("/exports/evalset.csv", "/exports/cases.xlsx", "/exports/people.csv",
                "/exports/feedback.csv?rating=bad"):
        assert client.get(url).status_code == 403, url


def test_lead_of_a_sees_nothing_of_b_on_the_pages(client, login, site, make):
    b = make.workspace()
    hidden_run = make.run(b, query="secret question of B")
    hidden_item = make.triage_item(hidden_run)
    hidden_case = make.case(b, run=hidden_run, title="secret case of B")
    login(site.users[Role.LEAD])
    assert "secret question of B" not in client.get("/triage/").get_data(as_text=True)
    assert "secret case of B" not in client.get("/cases/?q=secret").get_data(as_text=True)
    assert client.get(f"/triage/{hidden_item.id}").status_code == 403
    assert client.get(f"/cases/{hidden_case.case_id}").status_code == 403
    assert client.get(f"/cases/new?run={hidden_run.id}").status_code == 403
    # refused as a workspace the lead does not have, in the triage list's words (400)
    dashboard = client.get(f"/dashboard/?workspace={b.id}")
    assert dashboard.status_code == 400
    assert f"you have no workspace &#39;{b.id}&#39;" in dashboard.get_data(as_text=True)


def test_a_case_links_back_to_its_run_and_the_run_page_to_its_case(client, login, site, make):
    login(site.users[Role.LEAD])
    case_page = client.get(f"/cases/{site.case.case_id}").get_data(as_text=True)
    assert f'href="/runs/{site.run.id}"' in case_page
    run_page = client.get(f"/runs/{site.run.id}").get_data(as_text=True)
    assert f'href="/cases/{site.case.case_id}"' in run_page  # straight to the existing case
    caseless = make.run(site.ws)
    assert f'href="/cases/new?run={caseless.id}"' in client.get(f"/runs/{caseless.id}").get_data(as_text=True)
    item_page = client.get(f"/triage/{site.item.id}").get_data(as_text=True)
    assert f'href="/runs/{site.run.id}"' in item_page


def test_the_run_page_offers_a_reviewer_no_case_creation_but_the_existing_case(client, login, site):
    login(site.users[Role.REVIEWER])
    html = client.get(f"/runs/{site.run.id}").get_data(as_text=True)
    assert "/cases/new?run=" not in html and f'href="/cases/{site.case.case_id}"' in html


def test_invalid_category_on_the_item_page_keeps_the_typed_value_and_names_the_problem(
        client, login, site, session):
    login(site.users[Role.LEAD])
    typed = "not a valid category!"
    response = client.post(f"/triage/{site.item.id}/category",
                           data={"version": "1", "fault_category": typed})
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    assert f'value="{typed}"' in html and 'aria-invalid="true"' in html
    assert 'id="category-error"' in html and "<h1" in html and "Fault category" in html
    session.expire_all()
    assert session.get(TriageItem, site.item.id).fault_category is None


def test_the_conflict_page_shows_a_readable_time(client, login, site):
    login(site.users[Role.LEAD])
    client.post(f"/triage/{site.item.id}/note", data={"version": "1", "note": "first note"})
    html = client.post(f"/triage/{site.item.id}/note", data={"version": "1", "note": "mine"}
                       ).get_data(as_text=True)
    assert re.search(r"<time datetime=\"[^\"]+\"[^>]*>\d{4}-\d\d-\d\d \d\d:\d\d UTC</time>", html)
    assert not re.search(r">\s*\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+", html)


def test_case_form_keeps_what_was_typed_when_a_service_rule_refuses_a_field(client, login, site):
    login(site.users[Role.LEAD])
    fresh_form = {"title": "Disk full", "fault_category": "=HYPERLINK(1)", "root_cause": "logs",
                  "solution": "rotate them"}
    created = client.post(f"/cases/new?run={site.run.id}", data=fresh_form)
    assert created.status_code in (409, 422)  # the site's run already has a case
    edit = client.post(f"/cases/{site.case.case_id}/edit", data={**fresh_form, "version": "1"})
    assert edit.status_code == 422
    html = edit.get_data(as_text=True)
    assert 'value="Disk full"' in html and "rotate them" in html and "logs" in html
    assert 'value="=HYPERLINK(1)"' in html and 'aria-invalid="true"' in html


def test_a_stale_case_edit_shows_the_users_own_version(client, login, site):
    login(site.users[Role.LEAD])
    form = {"version": "1", "title": "first", "fault_category": "NETWORK"}
    assert client.post(f"/cases/{site.case.case_id}/edit", data=form).status_code == 303
    stale = client.post(f"/cases/{site.case.case_id}/edit",
                        data={**form, "title": "my careful rewrite", "solution": "my steps"})
    assert stale.status_code == 409
    html = stale.get_data(as_text=True)
    assert "Your version (not saved)" in html and "my careful rewrite" in html and "my steps" in html
    # the lead's own save from another tab: not "someone else"
    assert "This case was changed by you, in another tab or window, since your page was loaded" in html


def test_every_triage_state_shows_the_registrys_label(client, login, site, make, monkeypatch):
    """The pages take state labels from domain/triage_flow.py, never from their own
    copies: with the registry's labels changed, the badges, tabs, filter and bulk-move
    choices show the new ones."""
    from reviewapp.domain import triage_flow

    labels = {"new": "Fresh one", "triaged": "Looked at", "resolved": "Sorted out",
              "wont_fix": "Left alone"}
    for state, label in labels.items():
        monkeypatch.setitem(triage_flow.STATE_LABELS, state, label)
    items = {state: make.triage_item(make.run(site.ws), state=state) for state in labels}
    login(site.users[Role.LEAD])
    listing = client.get("/triage/").get_data(as_text=True)
    for state, item in items.items():
        row = listing.split(f'id="triage-row-{item.id}"', 1)[1].split("</tr>", 1)[0]
        assert f'<span class="badge badge-triage-{state}">{labels[state]}' in row
        page = client.get(f"/triage/{item.id}").get_data(as_text=True)
        assert f'<span class="badge badge-triage-{state}">{labels[state]}' in page
    tabs = listing.split('id="triage-tabs"', 1)[1].split("</nav>", 1)[0]
    assert re.findall(r'>([^<>]+) <span class="count">', tabs) == [
        "All", "Open", "Fresh one", "Looked at", "Sorted out", "Left alone"]
    state_filter = listing.split('id="f-state"', 1)[1].split("</select>", 1)[0]
    assert re.findall(r">([^<>]+)</option>", state_filter) == [
        "All", "Open (fresh one + looked at)", "Fresh one", "Looked at", "Sorted out", "Left alone"]
    bulk = listing.split('id="bulk-state"', 1)[1].split("</select>", 1)[0]
    assert re.findall(r">([^<>]+)</option>", bulk) == [
        "Looked at (or reopen)", "Sorted out", "Left alone"]
    # The compact row's move button for a closed item still says "Reopen"; an open one
    # uses the triaged state's label.
    new_row = listing.split(f'id="triage-row-{items["new"].id}"', 1)[1].split("</tr>", 1)[0]
    assert re.findall(r'<button type="submit"[^>]*>([^<]+)</button>', new_row)[-3:] == [
        "Looked at", "Resolve", "Won&#39;t fix"]


def test_the_registrys_own_labels_show_on_the_queue(client, login, site, make):
    item = make.triage_item(make.run(site.ws), state="wont_fix")
    login(site.users[Role.LEAD])
    listing = client.get("/triage/").get_data(as_text=True)
    row = listing.split(f'id="triage-row-{item.id}"', 1)[1].split("</tr>", 1)[0]
    assert '<span class="badge badge-triage-wont_fix">Won&#39;t fix' in row
    assert re.findall(r'<button type="submit"[^>]*>([^<]+)</button>', row)[-1] == "Reopen"


def test_saved_reasons_read_as_the_workspace_labels_them_on_the_queue_and_item_pages(client, login, make):
    ws = make.workspace(feedback_reasons=[
        {"code": "xss_reason", "label": "<i>Made up</i> & wrong", "polarity": "negative"}])
    lead, reviewer = make.user(ws, Role.LEAD), make.user(ws)
    run = make.run(ws)
    item = make.triage_item(run)
    make.feedback_row(run, reviewer, reason="xss_reason")
    login(lead)
    escaped = "&lt;i&gt;Made up&lt;/i&gt; &amp; wrong"
    queue = client.get("/triage/").get_data(as_text=True)
    assert f'<span class="badge badge-reason">{escaped}</span>' in queue
    page = client.get(f"/triage/{item.id}").get_data(as_text=True)
    assert f'<td data-label="Reason">{escaped}</td>' in page
    # The Reviewer reason field's suggestions carry the code as their value (the filter
    # takes codes), labelled: nowhere else does the code show.
    suggestions = queue.split('<datalist id="reason-codes">')[1].split("</datalist>")[0]
    assert suggestions == f'<option value="xss_reason">{escaped}</option>'
    shown = queue.replace(suggestions, "")
    assert "xss_reason" not in shown and "xss reason" not in page and "<i>Made up" not in page


def test_a_case_shows_root_cause_and_solution_as_the_run_page_shows_an_answer(client, login, site,
                                                                              make):
    """An AUTO case copies the answer's Markdown; its page showed the backticks and stars
    (seen in the 2026-12-02 walk). Rendered through the one sanitising renderer now."""
    case = make.case(site.ws, run=make.run(site.ws), root_cause="Pool **exhausted** on `db-1`.",
                     solution="Run `ACL SETUSER app >NEW` <script>alert(1)</script>")
    login(site.users[Role.LEAD])
    html = client.get(f"/cases/{case.case_id}").get_data(as_text=True)
    assert "<strong>exhausted</strong>" in html and "<code>db-1</code>" in html
    assert "<code>ACL SETUSER app &gt;NEW</code>" in html
    assert "`db-1`" not in html and "<script>alert" not in html


def test_the_export_reason_picker_offers_the_workspaces_own_reasons(client, login, make):
    """The feedback export's reason list offered the app's default codes
    (``config.FEEDBACK_REASONS``), not the reasons the workspace rates with; it now lists
    the workspace's codes (what the export filters by) with its labels."""
    ws = make.workspace(feedback_reasons=[
        {"code": "wrong_flight", "label": "Wrong <flight>", "polarity": "negative"}])
    login(make.user(ws, Role.ADMIN))
    html = client.get("/exports/").get_data(as_text=True)
    datalist = html.split('id="xf-reasons"', 1)[1].split("</datalist>", 1)[0]
    assert '<option value="wrong_flight" label="Wrong &lt;flight&gt;">' in datalist
    assert 'value="incomplete"' not in datalist  # a default this workspace replaced


def test_a_case_page_names_its_category_in_words_with_the_code_as_tooltip(client, login, site, make):
    """Issue 17 item 13 on the case page: 'GENERAL' read as a code; a category dropped
    from the workspace's list since stays as its code."""
    known = make.case(site.ws, run=make.run(site.ws), fault_category="RETRIEVAL_MISS")
    dropped = make.case(site.ws, run=make.run(site.ws), fault_category="LEGACY_THING")
    login(site.users[Role.LEAD])
    html = client.get(f"/cases/{known.case_id}").get_data(as_text=True)
    assert '<dd title="RETRIEVAL_MISS">Retrieval miss</dd>' in html
    html = client.get(f"/cases/{dropped.case_id}").get_data(as_text=True)
    assert '<dd title="LEGACY_THING">LEGACY_THING</dd>' in html


def test_the_triage_item_without_js_shows_the_runs_start_in_the_workspaces_time_zone(client, login, make, session):
    """The workspace's time zone setting did nothing on the item page (times read UTC)."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    ws.settings = {**(ws.settings or {}), "time_zone": "Europe/Berlin"}
    session.commit()
    item = make.triage_item(make.run(ws, started_at="2026-05-01T12:00:00Z"))
    login(lead)
    html = client.get(f"/triage/{item.id}").get_data(as_text=True)
    started = re.search(r"<dt>Started</dt><dd>(<time [^>]*>[^<]*</time>)", html).group(1)
    assert started == '<time datetime="2026-05-01T12:00:00+00:00" title="2026-05-01T12:00:00+00:00">2026-05-01 14:00 UTC+02:00</time>'


def test_the_case_page_without_js_shows_its_times_in_the_workspaces_time_zone(client, login, make, session):
    """The workspace's time zone setting did nothing on the case page (times read UTC)."""
    from datetime import UTC, datetime

    ws = make.workspace()
    reviewer = make.user(ws, Role.REVIEWER)
    ws.settings = {**(ws.settings or {}), "time_zone": "Europe/Berlin"}
    session.commit()
    case = make.case(ws, created_at=datetime(2026, 5, 1, 12, 0, tzinfo=UTC))
    login(reviewer)
    html = client.get(f"/cases/{case.case_id}").get_data(as_text=True)
    updated = re.search(r"<dt>Updated</dt><dd [^>]*>(<time [^>]*>[^<]*</time>)", html).group(1)
    assert updated == '<time datetime="2026-05-01T12:00:00+00:00" title="2026-05-01T12:00:00+00:00">2026-05-01 14:00 UTC+02:00</time>'


def test_why_an_item_was_opened_reads_from_the_one_registry(client, login, make):
    """Issue 12: the "Opened by" filter's options, the queue row's note and the item
    page's sentence come from domain/triage_flow.OPENED (spelled out here)."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    by_verdict = make.triage_item(make.run(ws, query="Verdict run?"))
    by_part = make.triage_item(make.run(ws, query="Part run?"), opened_reason="negative_target",
                               verdict=False)
    login(lead)
    page = client.get("/triage/?state=open").get_data(as_text=True)
    select = page[page.index('<select id="f-opened"'):]
    select = select[:select.index("</select>")]
    assert re.findall(r'<option value="([^"]*)" ?>([^<]*)</option>', select) == [
        ("", "Any"), ("not_useful", "not useful verdict"),
        ("negative_target", "negative rating of a part")]
    notes = re.findall(r'<span title="negative_target">([^<]*)</span>', page)
    assert notes == ["opened because a part was rated not helpful"]
    assert '<span title="not_useful">' not in page
    assert 'selected>not useful verdict' in client.get("/triage/?opened=not_useful").get_data(as_text=True)
    for item, why in ((by_verdict, "the run was judged not useful"),
                      (by_part, "a part of the run was rated not helpful")):
        detail = client.get(f"/triage/{item.id}").get_data(as_text=True)
        assert f'<span title="{item.opened_reason}">{why}</span>' in detail


def _accept_form(html):
    found = re.search(r'<form [^>]*class="action-block accept">(.*?)</form>', html, re.S)
    return found.group(1) if found else None


def test_the_item_page_offers_the_proposal_under_its_workspace_label_only_from_the_list(
        client, login, make, session):
    """The item page said "Proposed: WRONG_ROOT_CAUSE" and offered "Accept the proposal
    “WRONG_ROOT_CAUSE”" although the workspace names it, and kept offering it after the
    workspace dropped the category. It shows the workspace's label, and offers nothing
    the list does not hold."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    item = make.triage_item(make.run(ws))  # no tool calls: the rules propose NO_EVIDENCE
    ws.settings = {"fault_categories": ["GENERAL", {"code": "NO_EVIDENCE", "label": "Looked <nothing> up",
                                                    "group": "agent"}]}
    session.commit()
    login(lead)
    html = client.get(f"/triage/{item.id}").get_data(as_text=True)
    hint = re.search(r'<small id="category-hint" class="hint">(.*?)</small>', html, re.S).group(1)
    assert re.match(r'Proposed: <strong title="NO_EVIDENCE">Looked &lt;nothing&gt; up</strong>, because ', hint)
    accept = _accept_form(html)
    assert re.search(r'<button type="submit">(.*?)</button>', accept).group(1) == \
        "Accept the proposal “Looked &lt;nothing&gt; up”"
    assert 'name="fault_category" value="NO_EVIDENCE"' in accept
    assert [(value, text) for value, text, _, _ in _category_select(html).options] == [
        ("", "No category"), ("GENERAL", "General / other"), ("NO_EVIDENCE", "Looked <nothing> up")]
    assert "Looked &lt;nothing&gt; up</option>" in html
    ws.settings = {"fault_categories": ["GENERAL", "PAYMENTS"]}
    session.commit()
    html = client.get(f"/triage/{item.id}").get_data(as_text=True)
    assert _accept_form(html) is None and "NO_EVIDENCE" not in html
    assert "No proposal from this workspace's categories." in html


def test_a_refused_accept_goes_back_to_the_item_page_with_the_error(client, login, make, session):
    """Accepting a proposal from a page loaded before the workspace dropped its category
    gave a 400 at /triage/<id>/category. It goes back to the item page (303), the error
    on it, and nothing is saved."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    item = make.triage_item(make.run(ws))
    login(lead)
    accept = _accept_form(client.get(f"/triage/{item.id}").get_data(as_text=True))
    form = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', accept))
    assert form["fault_category"] == "NO_EVIDENCE" and form["proposal"] == "1"
    ws.settings = {"fault_categories": ["GENERAL", "PAYMENTS"]}
    session.commit()
    refused = client.post(f"/triage/{item.id}/category", data=form)
    assert refused.status_code == 303 and refused.headers["Location"] == f"/triage/{item.id}"
    page = client.get(refused.headers["Location"]).get_data(as_text=True)
    assert re.search(r'<div class="flash flash-error">([^<]*)</div>', page).group(1) == (
        "The proposal was not accepted: &#39;NO_EVIDENCE&#39; is not a category of this workspace; "
        "use one of General / other, Payments")  # the labels, as the select shows them
    session.expire_all()
    assert session.get(TriageItem, item.id).fault_category is None
    # A typed value still comes back with the page (400) and the text as typed.
    typed = client.post(f"/triage/{item.id}/category", data={**form, "proposal": ""})
    assert typed.status_code == 400 and 'value="NO_EVIDENCE"' in typed.get_data(as_text=True)


def test_a_refused_export_filter_shows_the_export_page_with_the_field_and_what_was_chosen(
        client, login, site):
    """A filter the export refuses (dates the wrong way round) answers 400 with the export
    page itself: the field named, the chosen values still in the form, nothing downloaded
    (found in a browser walk: a bare error page whose only way on was "Back to the runs")."""
    login(site.users[Role.ADMIN])
    response = client.get(f"/exports/feedback.csv?workspace={site.ws.id}&date_from=2026-12-31"
                          "&date_to=2026-01-01&reason=incorrect")
    assert response.status_code == 400 and "Content-Disposition" not in response.headers
    html = response.get_data(as_text=True)
    assert "&#34;Created from&#34; must not be after &#34;to&#34;." in html
    assert 'value="2026-12-31"' in html and 'value="incorrect"' in html
    assert "Download CSV" in html


def test_the_conflict_page_names_states_and_verdicts_as_the_pages_do(client, login, site):
    """The 409 page's current values read as the triage pages word them ("Won't fix",
    "Not useful"), not as stored codes ("wont_fix", "not_useful")."""
    login(site.users[Role.LEAD])
    client.post(f"/triage/{site.item.id}/state", data={"version": "1", "state": "wont_fix"})
    stale = client.post(f"/triage/{site.item.id}/note", data={"version": "1", "note": "mine"})
    assert stale.status_code == 409
    facts = re.findall(r"<dt>([^<]+)</dt><dd[^>]*>([^<]*)</dd>", stale.get_data(as_text=True))
    current = {key: value.strip() for key, value in facts}
    assert current["State"] == "Won&#39;t fix", current
    assert current["Verdict"] == "Not useful", current


def test_a_refused_export_fills_only_its_own_form_and_keeps_the_bom_tick(client, login, site):
    """After a refused feedback export, the feedback form alone holds what was chosen
    (the decisions form, which has the same date fields, stays empty), its BOM box stays
    ticked, and the error sits in that form's card."""
    login(site.users[Role.ADMIN])
    response = client.get(f"/exports/feedback.csv?workspace={site.ws.id}&date_from=2026-12-31"
                          "&date_to=2026-01-01&bom=1")
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    feedback = html[html.index('id="x-feedback"'):html.index('id="x-decisions"')]
    decisions = html[html.index('id="x-decisions"'):html.index('id="x-eval"')]
    cases = html[:html.index('id="x-feedback"')]
    assert re.search(r'<input id="xf-from" name="date_from" aria-invalid="true"[^>]*value="2026-12-31"', feedback)
    assert re.search(r'<input type="checkbox" name="bom" value="1" checked>', feedback)
    assert "&#34;Created from&#34; must not be after &#34;to&#34;." in feedback
    assert 'value="2026-12-31"' not in decisions and "must not be after" not in decisions
    assert 'name="bom" value="1" checked' not in cases
    assert f'<option value="{site.ws.id}" selected' not in cases + decisions


def test_an_unknown_export_kind_shows_its_error_above_the_forms(client, login, site):
    login(site.users[Role.ADMIN])
    response = client.get("/exports/nothing.csv?bom=1")
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    assert html.count("Nothing was downloaded: kind: must be one of") == 1
    assert html.index("Nothing was downloaded") < html.index('id="x-cases"')


class _SelectParser(HTMLParser):
    """The options of ``<select id=...>``: (value, text, selected, optgroup label)."""

    def __init__(self, select_id: str) -> None:
        super().__init__()
        self.select_id, self.inside, self.group, self.options, self.attrs = select_id, False, None, [], None
        self.labels: list[str] = []
        self._option: list | None = None
        self._label = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "label" and attrs.get("for") == self.select_id:
            self._label = True
            self.labels.append("")
        if tag == "select" and attrs.get("id") == self.select_id:
            self.inside, self.attrs = True, attrs
        elif self.inside and tag == "optgroup":
            self.group = attrs.get("label")
        elif self.inside and tag == "option":
            self._option = [attrs.get("value"), "", "selected" in attrs, self.group]

    def handle_data(self, data):
        if self._option is not None:
            self._option[1] += data
        if self._label:
            self.labels[-1] += data

    def handle_endtag(self, tag):
        if tag == "label":
            self._label = False
        elif tag == "option" and self._option is not None:
            self.options.append((self._option[0], self._option[1].strip(), *self._option[2:]))
            self._option = None
        elif tag == "optgroup":
            self.group = None
        elif tag == "select":
            self.inside = False


def _category_select(html: str) -> _SelectParser:
    parser = _SelectParser("fault_category")
    parser.feed(html)
    return parser


def test_the_fault_category_is_picked_from_a_labelled_select_of_the_workspaces_categories(
        client, login, make, session):
    """New-user walk: the category was a free-text box checked against a list, and a wrong
    entry got an error naming ~18 codes in one paragraph. It is a select of the
    workspace's categories (the registry's by default), grouped by kind, labelled, with
    the saved category selected; a saved code the list no longer holds stays selectable
    as itself, so the page never shows a category the item does not have."""
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    item = make.triage_item(make.run(ws))
    login(lead)
    html = client.get(f"/triage/{item.id}").get_data(as_text=True)
    select = _category_select(html)
    assert select.attrs is not None, "no <select id=fault_category>"
    assert select.attrs["name"] == "fault_category" and select.labels == ["Fault category"]
    assert 'list="triage-categories"' not in html and "<datalist" not in html
    assert select.options[0] == ("", "No category", True, None)
    assert [(value, text) for value, text, _, _ in select.options[1:]] == list(FAULT_CATEGORIES.choices())
    assert {value: group for value, _, _, group in select.options[1:]} == {
        row.code: GROUPS[row.group] for row in FAULT_CATEGORIES}
    assert not any(selected for _, _, selected, _ in select.options[1:])

    # Choosing one saves it, and the page comes back with it selected.
    saved = client.post(f"/triage/{item.id}/category", data={"version": "1", "fault_category": "NETWORK"})
    assert saved.status_code == 303
    session.expire_all()
    assert session.get(TriageItem, item.id).fault_category == "NETWORK"
    select = _category_select(client.get(f"/triage/{item.id}").get_data(as_text=True))
    assert [value for value, _, selected, _ in select.options if selected] == ["NETWORK"]

    # The workspace's own list, and a saved code it no longer holds.
    ws.settings = {"fault_categories": ["GENERAL", {"code": "PAYMENTS", "label": "Payments"}]}
    session.commit()
    select = _category_select(client.get(f"/triage/{item.id}").get_data(as_text=True))
    assert [(value, text, selected) for value, text, selected, _ in select.options] == [
        ("", "No category", False), ("GENERAL", "General / other", False), ("PAYMENTS", "Payments", False),
        ("NETWORK", "NETWORK (no longer listed)", True)]


def test_the_assignee_filter_shows_a_former_lead_who_holds_items(client, login, site, make):
    """A former lead (now a reviewer) who still holds an item: ?assignee=<their id> filtered
    right, but the Assignee select had no option for them and read "Anyone"."""
    former = site.users[Role.REVIEWER]
    held = make.triage_item(make.run(site.ws), assignee=former)
    login(site.users[Role.LEAD])
    html = client.get(f"/triage/?assignee={former.id}").get_data(as_text=True)
    select = html.split('id="f-assignee"', 1)[1].split("</select>", 1)[0]
    assert re.findall(r"<option[^>]*selected[^>]*>([^<]*)</option>", select) == [former.username]
    assert f'id="triage-row-{held.id}"' in html and f'id="triage-row-{site.item.id}"' not in html
    bulk = html.split('id="bulk-assignee"', 1)[1].split("</select>", 1)[0]
    assert former.username not in bulk  # still not someone items can be assigned to
