"""The dashboard's and the exports' workspace filter refuse a workspace the user may not
use as the triage and case lists do (tidy walk, 2026-12-04): a 400 with the field named
in the lists' words ("you have no workspace 'N'"; a member without the role is told
their role), where they answered a bare 403; and they take the workspace's short name,
as the lists do (``params.workspace_ref``), where they took only its number."""

from __future__ import annotations

import html as html_lib
import re

from reviewapp.actors import Role
from reviewapp.models import Membership


def _text(fragment: str) -> str:
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def _small(html: str, field_id: str) -> str:
    match = re.search(rf'<small id="{field_id}-error"[^>]*>(.*?)</small>', html, re.S)
    assert match, f"no error beside #{field_id}"
    return _text(match.group(1))


def _note(html: str, note_id: str) -> str:
    match = re.search(rf'<p id="{note_id}" [^>]*>(.*?)</p>', html, re.S)
    assert match, f"no error note #{note_id}"
    return _text(match.group(1))


def _user_in(make, home, role, *others):
    """A user with ``role`` in ``home`` and each (workspace, role) of ``others``."""
    user = make.user(home, role)
    for ws, other_role in others:
        make.session.add(Membership(user_id=user.id, workspace_id=ws.id, role=other_role.value))
    make.session.commit()
    return user


def test_the_dashboard_refuses_a_strangers_workspace_beside_its_field(client, make, login):
    home, stranger = make.workspace(slug="home-team"), make.workspace(slug="far-team")
    login(make.user(home, Role.LEAD))
    for typed in (str(stranger.id), "far-team", "no-such-team"):
        response = client.get(f"/dashboard/?workspace={typed}")
        html = response.get_data(as_text=True)
        assert response.status_code == 400, typed
        assert _small(html, "d-ws") == f"Workspace: you have no workspace '{typed}'."
        assert 'aria-invalid="true"' in re.search(r'<select id="d-ws"[^>]*>', html).group(0)


def test_the_dashboard_tells_a_reviewer_of_the_workspace_their_role(client, make, login):
    home = make.workspace(slug="home-team")
    beta = make.workspace(slug="beta-team", name="Beta Team")
    login(_user_in(make, home, Role.LEAD, (beta, Role.REVIEWER)))
    for typed in (str(beta.id), "beta-team"):
        response = client.get(f"/dashboard/?workspace={typed}")
        assert response.status_code == 400
        assert _small(response.get_data(as_text=True), "d-ws") == (
            "Workspace: you are a reviewer in Beta Team; only its leads and admins see its dashboard.")


def test_the_dashboard_takes_a_workspace_short_name(client, make, login):
    alpha = make.workspace(slug="alpha-team", name="Alpha")
    beta = make.workspace(slug="beta-team", name="Beta")
    login(_user_in(make, alpha, Role.LEAD, (beta, Role.LEAD)))
    response = client.get("/dashboard/?workspace=beta-team")
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    select = html.split('<select id="d-ws"', 1)[1].split("</select>", 1)[0]
    assert re.search(rf'<option value="{beta.id}" selected>', select)
    # the links to the team pages carry the workspace by its number
    assert f"/dashboard/agreement?workspace={beta.id}" in html


def test_the_agreement_page_takes_a_workspace_short_name(client, make, login):
    alpha = make.workspace(slug="alpha-team", name="Alpha")
    beta = make.workspace(slug="beta-team", name="Beta")
    login(_user_in(make, alpha, Role.LEAD, (beta, Role.LEAD)))
    by_name = client.get("/dashboard/agreement?workspace=beta-team")
    assert by_name.status_code == 200
    by_number = client.get(f"/dashboard/agreement?workspace={beta.id}")
    assert by_name.get_data(as_text=True) == by_number.get_data(as_text=True)


def test_every_export_refuses_a_strangers_workspace_by_its_label(client, make, login):
    home, stranger = make.workspace(slug="home-team"), make.workspace(slug="far-team")
    login(make.user(home, Role.ADMIN))
    for kind, fmt, prefix in (("cases", "csv", "xc"), ("feedback", "csv", "xf"),
                              ("decisions", "csv", "xd"), ("evalset", "jsonl", "xe")):
        for typed in (str(stranger.id), "far-team", "no-such-team"):
            response = client.get(f"/exports/{kind}.{fmt}?workspace={typed}")
            html = response.get_data(as_text=True)
            assert response.status_code == 400, (kind, typed)
            assert _note(html, f"{prefix}-error") == (
                f"Nothing was downloaded: \"Workspace\": you have no workspace '{typed}'.")
            assert 'aria-invalid="true"' in re.search(rf'<select id="{prefix}-ws"[^>]*>', html).group(0)


def test_an_export_tells_a_lead_of_the_workspace_their_role(client, make, login):
    home = make.workspace(slug="home-team")
    beta = make.workspace(slug="beta-team", name="Beta Team")
    login(_user_in(make, home, Role.ADMIN, (beta, Role.LEAD)))
    html = client.get("/exports/feedback.csv?workspace=beta-team").get_data(as_text=True)
    assert _note(html, "xf-error") == (
        'Nothing was downloaded: "Workspace": you are a lead in Beta Team; only its admins export its data.')


def test_the_feedback_export_takes_a_workspace_short_name(client, make, login):
    alpha = make.workspace(slug="alpha-team")
    beta = make.workspace(slug="beta-team")
    login(_user_in(make, alpha, Role.ADMIN, (beta, Role.ADMIN)))
    make.feedback_row(make.run(alpha), make.user(alpha), comment="alpha rating")
    make.feedback_row(make.run(beta), make.user(beta), comment="beta rating")
    response = client.get("/exports/feedback.csv?workspace=beta-team")
    assert response.status_code == 200
    body = response.get_data(as_text=True)
    assert "beta rating" in body and "alpha rating" not in body
    assert response.headers["X-Export-Rows"] == "1"
