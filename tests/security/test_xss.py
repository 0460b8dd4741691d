"""XSS proof (SPEC 3 "the answer is untrusted", 8): every payload of ``xss_corpus`` in
every user- or model-controlled field, every page that shows them, parsed with html5lib:
nothing a payload brings may be active, and every field must really be shown somewhere.
The browser half (Chromium: no dialog, no foreign request) is
``tests/browser/test_xss_browser.py``.
"""

from __future__ import annotations

import time

import pytest
from sqlalchemy import select

from reviewapp.models import Feedback

from ..factories import DEFAULT_PASSWORD
from . import xss_corpus as xc

HX = {"HX-Request": "true"}


@pytest.fixture
def viewer(make):
    return make.user(None, username="xss-viewer")


def _client(app, username):
    client = app.test_client()
    response = client.post("/login", data={"username": username, "password": DEFAULT_PASSWORD})
    assert response.status_code == 303, (username, response.status_code)
    return client


def _pages(t: xc.Target) -> list[tuple[str, dict]]:
    """The pages and fragments that show ``t``'s objects."""
    run = t.run.id
    pages = [
        (f"/runs/{run}", {}),
        (f"/runs/{run}/timeline", HX),
        (f"/triage/{t.item.id}", {}),
        (f"/cases/{t.case.case_id}", {}),
        (f"/cases/{t.case.case_id}/edit", {}),
        (f"/cases/new?run={run}", {}),
    ]
    for call_id in t.call_ids:
        pages.append((t.call_path(call_id), HX))
    if t.p % 4 == 0:  # the full page wraps the same fragment: a sample is enough
        pages.append((t.call_path(t.call_ids[1]), {}))
    return pages


LIST_PAGES = [
    ("/", {}), ("/", HX), ("/?q=zq", HX), ("/queue/progress", HX), ("/triage/", {}),
    ("/triage/", HX), ("/cases/", {}), ("/cases/", HX), ("/dashboard/", {}), ("/exports/", {}),
    ("/dashboard/agreement", {}), ("/dashboard/alignment", {}),
]


def test_no_payload_is_active_on_any_page(app_factory, make, session, viewer, record_property):
    """P payloads × F fields, rendered on every page that shows them (SPEC 3, 8)."""
    started = time.monotonic()
    targets = xc.build_world(make, session, viewer, range(len(xc.PAYLOADS)))
    built = time.monotonic()
    app = app_factory(RUNS_PAGE_SIZE=500, TRIAGE_PAGE_SIZE=500, CASES_PAGE_SIZE=500)
    client = _client(app, viewer.username)
    routes = app.url_map.bind("localhost")

    failures: list[str] = []
    seen_tags: set[str] = set()
    rendered = 0

    def check(url: str, headers: dict, client=client) -> str:
        nonlocal rendered
        response = client.get(url, headers=headers)
        html = response.get_data(as_text=True)
        if response.status_code != 200:
            failures.append(f"{url} {headers}: HTTP {response.status_code}")
            return html
        rendered += 1
        tree = xc.parse(html)
        for problem in xc.active_payloads(tree, routes):
            failures.append(f"{url} {headers}: {problem}")
        if xc.BIDI.search(html):
            failures.append(f"{url}: a bidi control character reaches the page unmarked")
        for evaluated in xc.TEMPLATE_EVALUATED:
            if evaluated in html:
                failures.append(f"{url}: a template payload was evaluated ({evaluated})")
        text = xc.text_and_attributes(tree)
        seen_tags.update(xc.tags_in(text))
        return text

    for t in targets:
        for url, headers in _pages(t):
            text = check(url, headers)
            if url == f"/runs/{t.run.id}" and "{" in xc.PAYLOADS[t.p] \
                    and xc.value("run.query", t.p) not in text:
                # Template syntax is shown as typed, never evaluated.
                failures.append(f"{url}: the query {xc.PAYLOADS[t.p]!r} is not shown verbatim")
    for url, headers in LIST_PAGES:
        check(url, headers)
    # The header shows the logged-in user's name: log in as a sample of the payload users
    # (a login costs a password hash; every username is also checked on the triage pages).
    for t in targets[:: max(1, len(targets) // 8)]:
        check("/", {}, _client(app, t.user.username))

    # An htmx rating re-renders the thumbs fragment with the payload in its fields.
    t = targets[0]
    row = session.scalar(select(Feedback).where(Feedback.author_id == viewer.id,
                                                Feedback.run_pk == t.run.id))
    response = client.post("/feedback", headers=HX, data={
        "target_type": "diagnostic_report", "target_id": row.target_id, "rating": "negative",
        "reason": "bogus-reason", "comment": xc.PAYLOADS[0], "correction": xc.PAYLOADS[5]})
    assert response.status_code == 422, response.status_code  # unknown reason: re-rendered
    failures.extend(f"thumbs 422 fragment: {p}" for p in xc.active_payloads(response.get_data(as_text=True), routes))

    expected_tags = {xc.tag(f, p) for f in xc.FIELDS for p in range(len(xc.PAYLOADS))}
    missing = expected_tags - seen_tags
    missing_fields = sorted({xc.FIELD_NAMES[int(tag[2:4])] for tag in missing})
    elapsed = time.monotonic() - started
    print(f"xss: {len(xc.PAYLOADS)} payloads × {len(xc.FIELDS)} fields "
          f"({len(expected_tags)} placements), {rendered} pages rendered, "
          f"world {built - started:.1f} s, total {elapsed:.1f} s")
    record_property("xss_payloads", len(xc.PAYLOADS))
    record_property("xss_fields", len(xc.FIELDS))
    assert len(xc.PAYLOADS) >= 40
    assert not failures, "\n".join(failures[:80]) + f"\n… {len(failures)} problems"
    assert not missing, f"fields no page showed: {missing_fields} ({len(missing)} placements)"


# Every query parameter a page reads: free-text ones, whose page echoes them in its
# filter form (200), and enumerated ones, whose 400 page names the bad value.
REFLECTED = [
    "/?q={p}&outcome={p}",
    "/?sort={p}&workspace={p}&kind={p}&score_min={p}",
    "/queue?q={p}",
    "/queue/progress?q={p}",
    "/triage/?reason={p}",
    "/triage/?state={p}&assignee={p}&date_from={p}&score_min={p}&kind={p}",
    "/cases/?q={p}&service={p}&error_code={p}&fault_category={p}",
    "/cases/?source_type={p}&workspace={p}",
    "/exports/?q={p}&service={p}&error_code={p}&fault_category={p}&workspace={p}",
    "/dashboard/?date_from={p}&workspace={p}",
    "/dashboard/agreement?date_to={p}&min_shared={p}",
    "/dashboard/alignment?date_to={p}&threshold={p}",
    "/nowhere/{p}",
]
HTMX_TOO = {REFLECTED[0], REFLECTED[4], REFLECTED[6]}  # list pages answering htmx with a fragment


def test_no_payload_in_the_address_or_a_form_is_reflected_active(app_factory, make):
    """Reflected XSS: every query parameter a page reads, an unknown address, the login
    form's echo of the typed username, all with every payload (SPEC 8)."""
    from urllib.parse import quote

    ws = make.workspace()
    user = make.user(ws, "admin")
    make.triage_item(make.run(ws))
    app = app_factory()  # clients of their own: nothing shared through the test's ``g``
    client = app.test_client()
    routes = app.url_map.bind("localhost")
    failures, rendered = [], 0
    anonymous = app.test_client()
    for payload in xc.PAYLOADS:
        # No password: the form is re-rendered (422) with the name echoed, and no slow
        # password hash runs; the 401 page renders the same form.
        response = anonymous.post("/login", data={"username": payload, "password": ""})
        assert response.status_code == 422
        failures.extend(f"login echo {payload!r}: {p}"
                        for p in xc.active_payloads(response.get_data(as_text=True), routes))
        response = anonymous.get(f"/login?next={quote(payload, safe='')}")
        failures.extend(f"login echo {payload!r}: {p}"
                        for p in xc.active_payloads(response.get_data(as_text=True), routes))
    assert client.post("/login", data={"username": user.username,
                                       "password": DEFAULT_PASSWORD}).status_code == 303
    statuses: dict[int, int] = {}
    for payload in xc.PAYLOADS:
        for template in REFLECTED:
            url = template.format(p=quote(payload, safe=""))
            fragment = template in HTMX_TOO
            for headers in ({}, HX) if fragment else ({},):
                response = client.get(url, headers=headers)
                rendered += 1
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                html = response.get_data(as_text=True)
                failures.extend(f"{url} {headers} ({response.status_code}): {p}"
                                for p in xc.active_payloads(html, routes))
                if response.status_code >= 500:
                    failures.append(f"{url}: HTTP {response.status_code}")
    print(f"reflected xss: {len(xc.PAYLOADS)} payloads × {len(REFLECTED)} addresses "
          f"(+3 as htmx), {rendered} responses, statuses {sorted(statuses.items())}")
    # The pages were rendered for the logged-in admin, not bounced to the login page.
    assert statuses.get(200, 0) + statuses.get(400, 0) > rendered // 2
    assert not failures, "\n".join(failures[:60])


# --------------------------------------------------------------------------- helpers' own proof

@pytest.mark.parametrize("html, expected", [
    ('<p>ok</p><script src="/static/js/app.js" defer></script>', []),
    ("<p><script>alert(1)</script></p>", ["<script src=None>alert(1)"]),
    ('<svg/onload="alert(1)">', ["<svg onload='alert(1)'>"]),
    ('<a href=" java&#x09;script:alert(1)">x</a>', ["<a href=' java\\tscript:alert(1)'>"]),
    ('<a href="DATA:text/html,x">x</a>', ["<a href='DATA:text/html,x'>"]),
    ("<iframe></iframe>", ["<iframe> element"]),
    ('<div hx-get="/logout" hx-trigger="load">', ["<div hx-get='/logout'>: not a route of the app for this method"]),
    ('<div hx-get="/runs/1/timeline?v=x">', []),
    ('<div hx-get="/exports/cases.csv">', ["<div hx-get='/exports/cases.csv'>: htmx request to exports.download, which no page swaps"]),
    ('<div hx-on:click="alert(1)">', ["<div hx-on:click='alert(1)'>: script-bearing htmx attribute"]),
    ("<p>&lt;script&gt;alert(1)&lt;/script&gt; {{7*7}}</p>", []),
])
def test_active_payload_detector(app, html, expected):
    """The detector finds what a browser (or htmx) would run, and passes escaped text."""
    assert xc.active_payloads(html, app.url_map.bind("localhost")) == expected


def test_bidi_controls_are_shown_as_visible_code_points(client, login, make):
    """U+202E and friends in model text reach the page as visible markers, in plain
    fields and in rendered Markdown alike (SPEC 3: model text is untrusted)."""
    ws = make.workspace()
    run = make.aiops_run(ws, query="invoice\u202egnp.exe", answer="**a\u2066b\u2069**",
                         report={"content": "x\u202ay\u202c"})
    login(make.user(ws))
    html = client.get(f"/runs/{run.id}").get_data(as_text=True)
    assert not xc.BIDI.search(html)
    text = xc.text_and_attributes(html)
    assert "invoice[U+202E]gnp.exe" in text
    assert "a[U+2066]b[U+2069]" in text
    assert "x[U+202A]y[U+202C]" in text


def test_bidi_marks_of_rtl_text_are_kept(client, login, make):
    """Hebrew / Arabic text and the LRM / RLM marks it needs round-trip unchanged (SPEC 10)."""
    ws = make.workspace()
    run = make.run(ws, query="שלום\u200f עולם \u200eabc مرحبا")
    login(make.user(ws))
    html = client.get(f"/runs/{run.id}").get_data(as_text=True)
    assert "שלום\u200f עולם \u200eabc مرحبا" in xc.text_and_attributes(html)
