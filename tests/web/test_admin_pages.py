"""Admin pages and the own-account page (SPEC 8): the flows, the one-time secrets, the
password change at first login, and cross-workspace isolation beyond the access matrix:
an admin of W1 naming W1 in the URL but a user or token of W2 gets the answer of a
missing id, and nothing of W2 changes."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from reviewapp.actors import Actor, Role
from reviewapp.domain.fault_categories import FAULT_CATEGORIES
from reviewapp.models import AuditEvent, IngestToken, Membership, User
from reviewapp.services import admin

from ..factories import DEFAULT_PASSWORD

MISSING = 987654321


@pytest.fixture
def site(make, session):
    w1, w2 = make.workspace(slug="w1", name="One"), make.workspace(slug="w2", name="Two")
    a1, a2 = make.user(w1, Role.ADMIN, username="a1"), make.user(w2, Role.ADMIN, username="a2")
    member2 = make.user(w2, Role.REVIEWER, username="member2")
    shared = make.user(w1, Role.REVIEWER, username="shared")
    session.add(Membership(user_id=shared.id, workspace_id=w2.id, role="lead"))
    session.commit()
    token2 = admin.create_token(session, Actor.system_actor(), w2.id, "w2-agent").token
    return type("Site", (), dict(w1=w1, w2=w2, a1=a1, a2=a2, member2=member2, shared=shared,
                                 token2=token2))


def _w2_state(session, site) -> tuple:
    session.rollback()
    users = session.execute(select(User.id, User.active, User.password_hash, User.session_token,
                                   User.must_change_password).order_by(User.id)).all()
    members = session.execute(select(Membership.user_id, Membership.workspace_id, Membership.role)
                              .where(Membership.workspace_id == site.w2.id)
                              .order_by(Membership.user_id)).all()
    tokens = session.execute(select(IngestToken.id, IngestToken.revoked)
                             .where(IngestToken.workspace_id == site.w2.id)).all()
    session.rollback()
    return users, members, tokens


@pytest.mark.parametrize("path, data", [
    ("members/{member2}/role", {"role": "admin"}),
    ("members/{member2}/remove", {}),
    ("members/{member2}/active", {"active": "0"}),
    ("members/{member2}/active", {"active": "0", "confirm": "1"}),
    ("members/{member2}/password", {"password": "taken-over-1"}),
    ("members/{shared}/active", {"active": "0"}),  # a member of W1, but also of W2
    ("members/{shared}/active", {"active": "0", "confirm": "1"}),
    ("members/{shared}/password", {"password": "taken-over-1"}),
    ("tokens/{token2}/revoke", {}),
    ("tokens/{token2}/revoke", {"confirm": "1"}),
    ("members/{member2}/remove", {"confirm": "1"}),
])
def test_an_admin_of_w1_cannot_reach_w2_through_w1_urls(client, login, session, site, path, data):
    login(site.a1)
    before = _w2_state(session, site)
    ids = {"member2": site.member2.id, "shared": site.shared.id, "token2": site.token2.id}
    real = client.post(f"/admin/{site.w1.id}/" + path.format(**ids), data=data)
    missing = client.post(f"/admin/{site.w1.id}/" + path.format(**dict.fromkeys(ids, MISSING)), data=data)
    assert real.status_code == 403
    assert (real.status_code, real.get_data()) == (missing.status_code, missing.get_data())
    assert _w2_state(session, site) == before


def test_the_members_page_shows_only_the_workspace_and_marks_shared_accounts(client, login, site):
    login(site.a1)
    html = client.get(f"/admin/{site.w1.id}/members").get_data(as_text=True)
    assert "shared" in html and "a1" in html
    assert "member2" not in html and ">a2<" not in html and "Two" not in html
    row = html.split(f'id="member-{site.shared.id}"', 1)[1].split("</tr>", 1)[0]
    assert "Shared account" in row and "Deactivate" not in row


def test_admin_creates_an_account_who_must_change_the_password_first(client, login, session, site,
                                                                    app_factory):
    login(site.a1)
    page = client.post(f"/admin/{site.w1.id}/members/new", data={"username": "nina", "role": "lead"})
    assert page.status_code == 200 and page.headers["Cache-Control"] == "no-store"
    password = re.search(r'id="ot-pw"[^>]*value="([^"]+)"', page.get_data(as_text=True)).group(1)
    assert password not in client.get(f"/admin/{site.w1.id}/members").get_data(as_text=True)

    nina = app_factory().test_client()  # another app: Flask-Login caches the user in g
    assert nina.post("/login", data={"username": "nina", "password": password}).status_code == 303
    blocked = nina.get("/")
    assert blocked.status_code == 303 and blocked.headers["Location"].endswith("/account/")
    wrong = nina.post("/account/password", data={"current_password": "nope-nope",
                                                 "new_password": "ninas-own-1", "confirm": "ninas-own-1"})
    assert wrong.status_code == 400 and "is not your current password" in wrong.get_data(as_text=True)
    ok = nina.post("/account/password", data={"current_password": password,
                                              "new_password": "ninas-own-1", "confirm": "ninas-own-1"})
    assert ok.status_code == 303
    assert nina.get("/").status_code == 200  # still logged in, no longer sent to the account page
    session.rollback()
    assert session.scalar(select(User.must_change_password).where(User.username == "nina")) is False


def test_token_secret_is_shown_once_and_never_in_the_audit_log(client, login, session, site):
    login(site.a1)
    created = client.post(f"/admin/{site.w1.id}/tokens", data={"name": "agent-prod"})
    # The secret is on the POST's own answer (never in the session cookie: see
    # test_no_one_time_secret_travels_in_a_cookie); a reload in a browser turns into a GET
    # of the tokens page (app.js replaces the history entry), which shows no secret.
    assert created.status_code == 201
    assert created.headers["Cache-Control"] == "no-store"
    page = created.get_data(as_text=True)
    secret = re.search(r'id="nt-secret"[^>]*value="(rvw_[^"]+)"', page).group(1)
    assert "data-replace-history" in page
    listing = client.get(f"/admin/{site.w1.id}/tokens").get_data(as_text=True)  # the reload
    assert secret not in listing and "agent-prod" in listing and ">a1<" in listing
    assert listing.count("<td data-label=\"Name\">agent-prod</td>") == 1  # no duplicate
    session.rollback()
    rows = session.execute(select(AuditEvent.before, AuditEvent.after, AuditEvent.target_label)).all()
    assert secret not in repr(rows)


def _session_cookies(app, response) -> list[tuple[str, object]]:
    """Every cookie the response sets: its raw value and, for the Flask session cookie,
    the decoded session (signed, not encrypted: anyone holding the cookie can read it)."""
    serializer = app.session_interface.get_signing_serializer(app)
    found = []
    for header in response.headers.getlist("Set-Cookie"):
        name, _, rest = header.partition("=")
        value = rest.split(";", 1)[0]
        decoded = serializer.loads(value) if name == app.config["SESSION_COOKIE_NAME"] and value \
            else None
        found.append((value, decoded))
    return found


def _assert_not_in_cookies(app, response, secret: str) -> None:
    for raw, decoded in _session_cookies(app, response):
        assert secret not in raw and secret not in repr(decoded)


def test_no_one_time_secret_travels_in_a_cookie(app, client, login, make, site):
    """A new token's secret, a new account's and a reset's one-time password: on the
    answer's page only, in no Set-Cookie of that answer nor of the next page's."""
    pavel = make.user(site.w1, username="pavel")
    login(site.a1)
    answers = {
        "token": client.post(f"/admin/{site.w1.id}/tokens", data={"name": "agent-cookie"}),
        "account": client.post(f"/admin/{site.w1.id}/members/new",
                               data={"username": "olga", "role": "reviewer"}),
        "reset": client.post(f"/admin/{site.w1.id}/members/{pavel.id}/password", data={}),
    }
    patterns = {"token": r'id="nt-secret"[^>]*value="(rvw_[^"]+)"',
                "account": r'id="ot-pw"[^>]*value="([^"]+)"',
                "reset": r'id="ot-pw"[^>]*value="([^"]+)"'}
    for what, answer in answers.items():
        assert answer.status_code in (200, 201), (what, answer.status_code)
        secret = re.search(patterns[what], answer.get_data(as_text=True)).group(1)
        assert len(secret) >= 8
        _assert_not_in_cookies(app, answer, secret)
        after = client.get(f"/admin/{site.w1.id}/tokens")
        _assert_not_in_cookies(app, after, secret)
        # The session as the browser now holds it carries no secret either.
        cookie = client.get_cookie(app.config["SESSION_COOKIE_NAME"])
        held = app.session_interface.get_signing_serializer(app).loads(cookie.value) if cookie else {}
        assert secret not in repr(held), what


def test_refused_change_shows_the_reason_on_the_page(client, login, site):
    login(site.a1)
    response = client.post(f"/admin/{site.w1.id}/members/{site.a1.id}/role", data={"role": "reviewer"})
    assert response.status_code == 409 and "last admin" in response.get_data(as_text=True)
    response = client.post(f"/admin/{site.w1.id}/members/add", data={"username": "ghost", "role": "lead"})
    assert response.status_code == 400 and "username: no account" in response.get_data(as_text=True)


def test_account_page_lists_own_memberships(client, login, site):
    login(site.shared)
    html = client.get("/account/").get_data(as_text=True)
    assert re.findall(r"<tr><td>(\w+) <span", html) == ["One", "Two"]


def test_admin_nav_link_only_for_admins(client, login, site):
    login(site.shared)
    assert 'href="/admin/"' not in client.get("/").get_data(as_text=True)
    assert client.get("/admin/").status_code == 403


def test_own_password_change_rotates_other_sessions(client, login, site, app_factory):
    other = app_factory().test_client()
    login(site.shared, c=other)
    login(site.shared)
    response = client.post("/account/password", data={
        "current_password": DEFAULT_PASSWORD, "new_password": "fresh-pass-9", "confirm": "fresh-pass-9"})
    assert response.status_code == 303
    assert client.get("/account/").status_code == 200
    assert other.get("/account/").status_code == 303  # the other copy is logged out


def test_audit_log_page_and_exports_hold_the_workspace_events_only(client, login, session, site):
    login(site.a1)
    client.post(f"/admin/{site.w1.id}/members/{site.shared.id}/role", data={"role": "lead"})
    page = client.get(f"/admin/{site.w1.id}/audit").get_data(as_text=True)
    assert "Role changed" in page and "shared" in page and "w2-agent" not in page
    csv_text = client.get(f"/admin/{site.w1.id}/audit.csv").get_data(as_text=True)
    lines = csv_text.splitlines()
    assert lines[0] == ("id,created_at,workspace_id,actor,action,target_type,target_id,target,"
                        "changed,before,after")
    assert [line.split(",")[4] for line in lines[1:]] == ["workspace.create", "member.role"]
    import json
    rows = [json.loads(line) for line in client.get(
        f"/admin/{site.w1.id}/audit.jsonl?action=member.role").get_data(as_text=True).splitlines()]
    assert [(r["actor"], r["before"], r["after"]) for r in rows] == [
        ("a1", {"role": "reviewer"}, {"role": "lead"})]
    assert client.get(f"/admin/{site.w2.id}/audit.csv").status_code == 403


def test_an_admin_creates_a_workspace_becomes_its_admin_and_renames_it(client, login, session, site):
    login(site.a1)
    response = client.post("/admin/workspaces", data={"slug": "fresh", "name": "Fresh"})
    assert response.status_code == 303
    session.rollback()
    from reviewapp.models import Workspace
    ws = session.scalars(select(Workspace).where(Workspace.slug == "fresh")).one()
    assert session.scalar(select(Membership.role).where(Membership.workspace_id == ws.id,
                                                        Membership.user_id == site.a1.id)) == "admin"
    assert client.post(f"/admin/{ws.id}/rename", data={"name": "Fresh on-call"}).status_code == 303
    assert "Fresh on-call" in client.get("/admin/").get_data(as_text=True)
    taken = client.post("/admin/workspaces", data={"slug": "w2", "name": "Clash"})
    assert taken.status_code == 409 and "already exists" in taken.get_data(as_text=True)
    lead = client.post(f"/admin/{site.w2.id}/rename", data={"name": "Taken over"})
    assert lead.status_code == 403


def test_a_stale_settings_tab_gets_409_and_keeps_what_was_typed(client, login, site):
    """A stale tab's save (409) refilled the fields with the other tab's values and put
    what was typed in a block below, easy to lose on the next save."""
    login(site.a1)
    page = client.get(f"/admin/{site.w1.id}/settings").get_data(as_text=True)
    version = re.search(r'name="version" value="(\d+)"', page).group(1)
    values = {m.group(1): m.group(2) for m in re.finditer(
        r'<textarea id="set-\w+" name="(\w+)"[^>]*>([^<]*)</textarea>', page)}
    form = {"version": version, **values, "time_zone": "Asia/Tokyo"}
    assert client.post(f"/admin/{site.w1.id}/settings", data=form).status_code == 303
    stale = client.post(f"/admin/{site.w1.id}/settings", data={**form, "time_zone": "America/Lima"})
    html = stale.get_data(as_text=True)
    assert stale.status_code == 409
    assert "changed by you, in another tab or window, since this page was loaded; nothing was saved" in html
    # What this tab typed stays in the fields (as for a stale rating, commit 5438546), the
    # value saved now beside each field that differs, and the form carries the new version.
    assert re.search(r'<input type="text" id="set-time_zone" name="time_zone" value="([^"]*)"', html
                     ).group(1) == "America/Lima"
    assert re.findall(r'<small class="saved-now[^"]*">Saved now: <q>([^<]*)</q></small>', html) == ["Asia/Tokyo"]
    assert re.search(r'name="version" value="(\d+)"', html).group(1) == str(int(version) + 1)
    assert "(not saved)</summary>" not in html and "What you typed is kept in the fields" in html


def test_a_one_time_password_set_for_a_member_names_the_member(client, login, make, site):
    """The reset's one-time password is shown under the member's name (it was an
    anonymous "One-time password" heading: whose it was, the admin had to remember)."""
    make.user(site.w1, Role.REVIEWER, username="olga")
    olga = next(m for m in admin.list_members(make.session, Actor.system_actor(), site.w1.id)
                if m.username == "olga")
    login(site.a1)
    page = client.post(f"/admin/{site.w1.id}/members/{olga.user_id}/password", data={"password": ""})
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert re.search(r'<h2 id="ot-h">([^<]+)</h2>', html).group(1) == "One-time password for olga"


def test_a_settings_change_reads_with_labels_default_included(client, login, session, site):
    """The audit log showed the stored key (`FAULT_CATEGORIES` in the page's small
    capitals) and JSON values; a first change of the categories also read 'null → …'.
    The change reads under the setting's label, lists as comma-separated labels, the
    default (what the app applied) marked; the stored event keeps its raw values."""
    login(site.a1)
    view = admin.get_settings(session, Actor.system_actor(), site.w1.id)
    form = {"version": view.version, **view.values,
            "fault_categories": "GENERAL | General | incident\nPAYMENTS | Pay<b>ments</b> | incident",
            "triage_negative_targets": "1"}
    assert client.post(f"/admin/{site.w1.id}/settings", data=form).status_code == 303
    html = client.get(f"/admin/{site.w1.id}/audit").get_data(as_text=True)
    changes = re.search(r'<td class="changes"[^>]*>(.*?)</td>', html, re.S).group(1)
    terms = [re.sub(r"\s+", " ", t).strip() for t in re.findall(r"<dt[^>]*>(.*?)</dt>", changes, re.S)]
    assert terms == ["Fault categories (triage and cases)", "Negative part ratings open triage items"]
    values = [re.sub(r"<[^>]+>|\s+", " ", d).split() for d in re.findall(r"<dd>(.*?)</dd>", changes, re.S)]
    defaults = ", ".join(c.label for c in FAULT_CATEGORIES)
    assert " ".join(values[0]) == f"(default) {defaults} → General, Pay&lt;b&gt;ments&lt;/b&gt;"
    assert " ".join(values[1]) == "(default) off → on"
    assert "fault_categories" not in changes and "&#34;" not in changes and "null" not in changes
    event = session.scalars(select(AuditEvent).where(AuditEvent.action == "settings.change")).one()
    assert event.after["fault_categories"][1] == {"code": "PAYMENTS", "label": "Pay<b>ments</b>",
                                                  "group": "incident"}


def test_audit_log_shows_a_role_change_unquoted_under_its_label(client, login, session, site):
    """A role change read `ROLE "reviewer" → "lead"` (JSON strings)."""
    login(site.a1)
    client.post(f"/admin/{site.w1.id}/members/{site.shared.id}/role", data={"role": "lead"})
    html = client.get(f"/admin/{site.w1.id}/audit").get_data(as_text=True)
    changes = re.search(r'<td class="changes"[^>]*>(.*?)</td>', html, re.S).group(1)
    assert re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", changes)).strip() == "Role reviewer → lead"


def test_audit_log_shows_renamed_names_and_token_names_as_readable_text(client, login, session, site):
    """A rename to `tau-bench R&D 'airline'` read `"tau-bench R\\u0026D \\u0027airline\\u0027"`
    in the log (values went through `tojson`); they read as typed, HTML-escaped once."""
    login(site.a1)
    assert client.post(f"/admin/{site.w1.id}/rename",
                       data={"name": "tau-bench R&D 'airline'"}).status_code == 303
    client.post(f"/admin/{site.w1.id}/tokens", data={"name": "agent-<i>prod</i>"})
    html = client.get(f"/admin/{site.w1.id}/audit").get_data(as_text=True)
    changes = " ".join(re.findall(r'<td class="changes"[^>]*>(.*?)</td>', html, re.S))
    assert "R&amp;D &#39;airline&#39;" in changes
    assert "\\u00" not in html and "<i>prod</i>" not in html


def test_clearing_the_fault_categories_is_refused_beside_the_field(client, login, session, site):
    """Clearing the 'Fault categories' box and saving said "Settings saved." and stored
    only GENERAL. It is refused (400) with the error beside that field, the box left as
    typed (empty), and nothing stored."""
    login(site.a1)
    view = admin.get_settings(session, Actor.system_actor(), site.w1.id)
    refused = client.post(f"/admin/{site.w1.id}/settings",
                          data={"version": view.version, **view.values, "fault_categories": " \r\n"})
    html = refused.get_data(as_text=True)
    assert refused.status_code == 400 and "Settings saved." not in html
    field = re.search(r'<div class="field has-error">(.*?)</div>', html, re.S).group(1)
    assert 'name="fault_categories"' in field and 'aria-invalid="true"' in field
    assert re.search(r'<small id="set-fault_categories-error" class="error">([^<]*)</small>', field).group(1) == \
        "list at least one category (write GENERAL to keep only the default)"
    session.expire_all()
    stored = session.get(type(site.w1), site.w1.id)
    assert "fault_categories" not in (stored.settings or {})
    assert stored.settings_version == view.version


def _changes_of(html: str, event_id: int) -> list[tuple[str, str]]:
    """(label, value) of each change of the event's row on the log page, tags dropped."""
    row = re.search(rf'<tr id="audit-{event_id}">(.*?)</tr>', html, re.S).group(1)
    cell = re.search(r'<td class="changes"[^>]*>(.*?)</td>', row, re.S).group(1)

    def text(part: str) -> str:
        return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", part)).strip()

    return [(text(dt), text(dd)) for dt, dd in
            re.findall(r"<dt[^>]*>(.*?)</dt>\s*<dd[^>]*>(.*?)</dd>", cell, re.S)]


def test_queue_items_released_read_as_a_count_or_none_not_as_a_change(
        client, login, session, make, site):
    """New-user finding: the log read "Held queue items released 0 → —" for a
    deactivation that released nothing. What a removal or deactivation released is what
    the action did, not a value that changed: it reads as one value, "none" for 0; the
    stored event keeps the counts (exports, and "nothing was released" is a fact)."""
    from reviewapp.services import queue_work
    from reviewapp.services import review_queues as rq

    holder = make.user(site.w1, Role.REVIEWER, username="holder")
    idle = make.user(site.w1, Role.REVIEWER, username="idle")
    make.run(site.w1)
    queue, _ = rq.create_queue(session, make.actor(site.a1), site.w1.id, "All runs", {})
    assert queue_work.next_item(session, make.actor(holder), queue.id) is not None
    login(site.a1)
    assert client.post(f"/admin/{site.w1.id}/members/{idle.id}/active",
                       data={"active": "0", "confirm": "1"}).status_code == 303
    assert client.post(f"/admin/{site.w1.id}/members/{holder.id}/remove",
                       data={"confirm": "1"}).status_code == 303
    session.rollback()
    events = {e.action: e for e in session.scalars(
        select(AuditEvent).where(AuditEvent.workspace_id == site.w1.id))}
    deactivated, removed = events["user.deactivate"], events["member.remove"]
    assert (deactivated.before["held_items"], removed.before["held_items"]) == (0, 1)
    html = client.get(f"/admin/{site.w1.id}/audit").get_data(as_text=True)
    assert _changes_of(html, deactivated.id) == [
        ("Active", "yes → no"), ("Held queue items released", "none"),
        ("Assigned queue items released", "none")]
    assert _changes_of(html, removed.id) == [
        ("Held queue items released", "1"), ("Queues that named them as a reviewer", "none"),
        ("Assigned queue items released", "none"), ("Role", "reviewer → —")]
    assert "0 →" not in html and "→ 0" not in html


def _field_block(html: str, field_id: str) -> str:
    """The ``<div class="field ...">`` holding the control ``field_id``: its label, control, error."""
    start = html.rindex('<div class="field', 0, html.index(f'id="{field_id}"'))
    return html[start:html.index("</div>", html.index(f'id="{field_id}"'))]


@pytest.mark.parametrize(("data", "field_id", "label", "reason"), [
    ({"current_password": "nope-nope", "new_password": "fresh-pass-9", "confirm": "fresh-pass-9"},
     "current_password", "Current password", "is not your current password"),
    ({"current_password": DEFAULT_PASSWORD, "new_password": "short", "confirm": "short"},
     "new_password", "New password", "must be at least 8 characters"),
    ({"current_password": DEFAULT_PASSWORD, "new_password": "fresh-pass-9", "confirm": "fresh-pass-8"},
     "confirm", "New password again", "The two new passwords differ."),
])
def test_a_refused_password_change_names_the_field_by_its_label_beside_it(client, login, site, data,
                                                                          field_id, label, reason):
    """User-walk finding: the account page said 'new_password: must be at least 8
    characters' (the service's field code) above the form. Now the reason stands beside
    the field its label names, as on the other forms, and no field code is shown."""
    login(site.shared)
    page = client.post("/account/password", data=data)
    html = page.get_data(as_text=True)
    assert page.status_code == 400
    assert f"{field_id}:" not in html
    block = _field_block(html, field_id)
    assert "has-error" in block and f">{label}" in block and reason in block
    assert 'aria-invalid="true"' in block
