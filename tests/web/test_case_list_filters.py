"""The case list's workspace filter (new-user walk, 2026-12-03): a workspace the reader is
not in answered "0 matching"; it is refused, naming the field."""

from __future__ import annotations

from html import unescape


def test_a_workspace_id_the_reader_is_not_in_is_refused_by_name(client, make, lead_workspace):
    other = make.workspace()
    make.case(other, title="theirs")
    make.case(lead_workspace, title="ours")
    for unknown in (other.id, 999_999):
        response = client.get(f"/cases/?workspace={unknown}")
        html = unescape(response.get_data(as_text=True))
        assert response.status_code == 400
        assert f"workspace: you have no workspace '{unknown}'" in html
        assert "0 matching" not in html and "theirs" not in html
    html = client.get(f"/cases/?workspace={lead_workspace.id}").get_data(as_text=True)
    assert "ours" in html and "theirs" not in html
