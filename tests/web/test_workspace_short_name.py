"""A list's workspace filter takes the workspace's short name everywhere (filters review,
2026-12-03): the runs list read ``?workspace=demo`` while the triage and case lists took
only a number, and refused the name. An unknown name is refused in the runs list's words;
a lead who is only a reviewer in a workspace is told so, not "you have no workspace"."""

from __future__ import annotations

import re
from html import unescape

from reviewapp.actors import Role
from reviewapp.models import Membership

SUMMARY = "Some filters are not valid; fix the fields marked above: "


def _summary(html, table):
    body = html.split(f'<section id="{table}"', 1)[1]
    return unescape(" ".join(body.split('<p class="error" role="alert">', 1)[1].split("</p>", 1)[0].split()))


def _two_workspaces(make, login, role=Role.LEAD):
    alpha, beta = make.workspace(slug="alpha-team"), make.workspace(slug="beta-team")
    user = make.user(alpha, role)
    make.session.add(Membership(user_id=user.id, workspace_id=beta.id, role=role.value))
    make.session.commit()
    login(user)
    return alpha, beta


def test_the_triage_list_takes_a_workspace_short_name(client, make, login):
    alpha, beta = _two_workspaces(make, login)
    ours = make.triage_item(make.run(alpha, query="alpha question"))
    theirs = make.triage_item(make.run(beta, query="beta question"))
    response = client.get("/triage/?workspace=beta-team")
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert f"triage-row-{theirs.id}" in html and f"triage-row-{ours.id}" not in html
    select = html.split('<select id="f-workspace"', 1)[1].split("</select>", 1)[0]
    assert re.search(rf'<option value="{beta.id}" selected>', select)  # the select shows it
    # The state tabs keep the workspace (by its number, as the select sends it).
    assert f"workspace={beta.id}" in html.split('id="triage-tabs"', 1)[1].split("</nav>", 1)[0]


def test_the_case_list_takes_a_workspace_short_name(client, make, login):
    alpha, beta = _two_workspaces(make, login, Role.REVIEWER)
    make.case(alpha, title="alpha case")
    make.case(beta, title="beta case")
    response = client.get("/cases/?workspace=beta-team")
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "beta case" in html and "alpha case" not in html
    assert re.search(rf'<option value="{beta.id}" selected>', html)


def test_an_unknown_short_name_is_refused_in_the_runs_lists_words_on_each_list(client, make, login):
    alpha, _ = _two_workspaces(make, login)
    stranger = make.workspace(slug="gamma-team")
    make.case(stranger, title="gamma case")
    for name in ("gamma-team", "no-such-team"):  # a stranger's and none: the same words
        words = f"Workspace: you have no workspace '{name}'."
        for path, table in (("/", "runs-table"), ("/triage/", "triage-table"), ("/cases/", "cases-table")):
            response = client.get(f"{path}?workspace={name}")
            html = response.get_data(as_text=True)
            assert response.status_code == 400, path
            assert _summary(html, table) == SUMMARY + words, path
            assert "gamma case" not in html


def test_a_lead_who_only_reviews_in_a_workspace_is_told_so_on_the_triage_list(client, make, login):
    """They have that workspace (its runs and cases are theirs to read): "you have no
    workspace" was wrong. By number or by name, they are told they do not triage there."""
    alpha = make.workspace(slug="alpha-team")
    beta = make.workspace(slug="beta-team", name="Beta Team")
    user = make.user(alpha, Role.LEAD)
    make.session.add(Membership(user_id=user.id, workspace_id=beta.id, role=Role.REVIEWER.value))
    make.session.commit()
    login(user)
    for value in (str(beta.id), "beta-team"):
        response = client.get(f"/triage/?workspace={value}")
        html = response.get_data(as_text=True)
        assert response.status_code == 400
        assert _summary(html, "triage-table") == SUMMARY + (
            "Workspace: you are a reviewer in Beta Team; only its leads and admins triage there.")
        assert "you have no workspace" not in html
