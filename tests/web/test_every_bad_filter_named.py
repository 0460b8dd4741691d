"""The dashboard, exports and audit log pages name every refused filter at once (filters
review, 2026-12-03): each named only its first, so a second bad field showed up only
after the first was fixed (as the runs, triage and case lists do: ``params.Refusals``)."""

from __future__ import annotations

import html as html_lib
import re

from reviewapp.actors import Role


def _invalid_ids(html):
    return re.findall(r'<(?:input|select) id="([^"]+)"[^>]*aria-invalid="true"', html)


def _focused(html):
    return re.findall(r'<(?:input|select) id="([^"]+)"[^>]*\sautofocus', html)


def _text(fragment):
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def test_the_dashboard_names_each_bad_filter_beside_its_field(client, make, login):
    ws, other = make.workspace(), make.workspace()
    user = make.user(ws, Role.LEAD)
    make.user(other)  # a second workspace the lead does not lead: the select shows one
    login(user)
    response = client.get("/dashboard/?workspace=a+b&date_from=2026-13-01&date_to=tomorrow")
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert _invalid_ids(html) == ["d-ws", "d-from", "d-to"]
    for field_id, words in (("d-ws", "Workspace must be a workspace's number or its short name (e.g. demo)."),
                            ("d-from", "From must be a date like 2026-11-30."),
                            ("d-to", "To must be a date like 2026-11-30.")):
        small = re.search(rf'<small id="{field_id}-error"[^>]*>(.*?)</small>', html, re.S)
        assert small and _text(small.group(1)) == words
    assert 'value="2026-13-01"' in html and 'value="tomorrow"' in html  # kept as typed


def test_the_feedback_export_names_each_bad_filter_by_its_label(client, make, login):
    ws = make.workspace()
    login(make.user(ws, Role.ADMIN))
    response = client.get("/exports/feedback.csv?date_from=2026-13-01&rating=up&kind=batch")
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    note = _text(re.search(r'<p id="xf-error" [^>]*>(.*?)</p>', html, re.S).group(1))
    assert note == ('Nothing was downloaded: "Created from" must be a date like 2026-11-30; '
                    '"Rating" must be one of positive, negative; "Run kind" must be one of chat, aiops.')
    assert sorted(_invalid_ids(html)) == ["xf-from", "xf-kind", "xf-rating"]
    assert _focused(html) == ["xf-from"]


def test_the_decisions_export_names_a_bad_workspace_and_a_bad_day_at_once(client, make, login):
    ws = make.workspace()
    login(make.user(ws, Role.ADMIN))
    html = client.get("/exports/decisions.csv?workspace=a+b&date_to=tomorrow").get_data(as_text=True)
    note = _text(re.search(r'<p id="xd-error" [^>]*>(.*?)</p>', html, re.S).group(1))
    assert note == ('Nothing was downloaded: "Workspace" must be a workspace\'s number or its short name (e.g. demo); '
                    '"to" must be a date like 2026-11-30.')
    assert sorted(_invalid_ids(html)) == ["xd-to", "xd-ws"]


def test_an_export_names_every_parameter_it_does_not_take_at_once(client, make, login):
    ws = make.workspace()
    login(make.user(ws, Role.ADMIN))
    html = client.get("/exports/evalset.jsonl?colour=red&size=9").get_data(as_text=True)
    note = _text(re.search(r'<p id="xe-error" [^>]*>(.*?)</p>', html, re.S).group(1))
    assert note == ('Nothing was downloaded: colour: not a filter of this export; it takes: "Workspace"; '
                    'size: not a filter of this export; it takes: "Workspace".')


def test_the_audit_log_names_a_bad_action_and_a_bad_page_link_on_its_own_page(client, make, login):
    """It answered the site's bare "Please check what was sent (400)" page naming only the
    action, by its code, with the list of every action code."""
    ws = make.workspace()
    login(make.user(ws, Role.ADMIN))
    response = client.get(f"/admin/{ws.id}/audit?action=bogus&cursor=junk")
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert "Please check what was sent" not in html
    assert f'action="/admin/{ws.id}/audit"' in html  # the log's own page, its filter form
    alert = _text(re.search(r'<p class="error" role="alert"[^>]*>(.*?)</p>', html, re.S).group(1))
    assert alert == ("Some filters are not valid; fix the fields marked above: Action: choose one of the "
                     "actions in the list; Page link: it is not a link to a page of this log (it may be cut off "
                     "or old); start again from the first page.")
    assert _invalid_ids(html) == ["a-action"] and _focused(html) == ["a-action"]
    assert "workspace.create" not in alert
    assert client.get(f"/admin/{ws.id}/audit?action=member.add").status_code == 200


def test_an_export_names_a_parameter_it_does_not_take_with_its_bad_filters(client, make, login):
    ws = make.workspace()
    login(make.user(ws, Role.ADMIN))
    for kind, query, words in (
            ("feedback", "colour=red&rating=up", '"Rating" must be one of positive, negative'),
            ("cases", "colour=red&source_type=BOTH", '"Source" must be one of Automatic (a useful verdict) (AUTO), '
                                                    'Added by a person (MANUAL)'),
            ("decisions", "colour=red&date_to=tomorrow", '"to" must be a date like 2026-11-30'),
            ("evalset", "colour=red&workspace=0", '"Workspace" must be a workspace id')):
        html = client.get(f"/exports/{kind}.jsonl?{query}").get_data(as_text=True)
        note = _text(re.search(r'<p id="x.-error" [^>]*>(.*?)</p>', html, re.S).group(1))
        assert note.startswith("Nothing was downloaded: colour: not a filter of this export; it takes: "), kind
        assert note.endswith(f"; {words}."), kind
