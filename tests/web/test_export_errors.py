"""A refused export names its fields by the labels its form shows, marks them invalid and
links them to the message (new-user finding, 2026-12-03: 'Nothing was downloaded:
date_from: must not be after date_to' on a form whose fields read "Created from" / "to",
nothing highlighted; Reason "bogus" downloaded an empty file)."""

from __future__ import annotations

import html as html_lib
import re

import pytest

from reviewapp.actors import Role
from reviewapp.domain.reasons import DEFAULT_REASONS


@pytest.fixture
def admin(make, login):
    ws = make.workspace()
    login(make.user(ws, Role.ADMIN))
    return ws


def _note(html: str, note_id: str) -> str:
    """The text of the refused export's error note ``note_id``."""
    match = re.search(rf'<p id="{note_id}" [^>]*>(.*?)</p>', html, re.S)
    assert match, f"no error note #{note_id}"
    return html_lib.unescape(re.sub(r"\s+", " ", match.group(1))).strip()


def _label(html: str, field_id: str) -> str:
    """The text of the form's ``<label for=field_id>``, read from the page itself."""
    return html_lib.unescape(re.search(rf'<label for="{field_id}">([^<]*)</label>', html).group(1))


def _tag(html: str, field_id: str) -> str:
    return re.search(rf'<(?:input|select) id="{field_id}"[^>]*>', html).group(0)


def _invalid_ids(html: str) -> set[str]:
    return set(re.findall(r'<(?:input|select) id="([^"]+)"[^>]*aria-invalid="true"', html))


def test_a_reversed_feedback_range_names_the_form_labels_and_marks_both_fields(client, admin):
    response = client.get("/exports/feedback.csv?date_from=2026-12-05&date_to=2026-12-01")
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    start, end = _label(html, "xf-from"), _label(html, "xf-to")
    assert (start, end) == ("Created from", "to")
    note = _note(html, "xf-error")
    assert note == f'Nothing was downloaded: "{start}" must not be after "{end}".'
    assert "date_" not in note
    assert _invalid_ids(html) == {"xf-from", "xf-to"}
    for field_id in ("xf-from", "xf-to"):
        assert 'aria-describedby="xf-error"' in _tag(html, field_id)
    # focus goes to the first offending field (the note is read with it, aria-describedby)
    assert "autofocus" in _tag(html, "xf-from") and "autofocus" not in _tag(html, "xf-to")
    assert len(re.findall(r"\sautofocus", html)) == 1
    assert 'value="2026-12-05"' in _tag(html, "xf-from")


@pytest.mark.parametrize("query, field_id, reason", [
    ("rating=up", "xf-rating", "must be one of positive, negative"),
    ("date_to=tomorrow", "xf-to", "must be a date like 2026-11-30"),
    ("date_from=2026-13-01", "xf-from", "must be a date like 2026-11-30"),
    ("kind=batch", "xf-kind", "must be one of chat, aiops"),
])
def test_a_bad_feedback_value_names_its_label(client, admin, query, field_id, reason):
    response = client.get(f"/exports/feedback.csv?{query}")
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    note = _note(html, "xf-error")
    assert note == f'Nothing was downloaded: "{_label(html, field_id)}" {reason}.'
    assert _invalid_ids(html) == {field_id}
    assert 'aria-describedby="xf-error"' in _tag(html, field_id) and "autofocus" in _tag(html, field_id)


def test_an_unknown_reason_is_refused_listing_the_workspace_reasons(client, admin):
    """Reason "bogus" downloaded an empty CSV, 200."""
    response = client.get("/exports/feedback.csv?reason=bogus")
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    listed = ", ".join(f"{row.label} ({row.code})" for row in DEFAULT_REASONS)
    assert _note(html, "xf-error") == f'Nothing was downloaded: "Reason" must be one of {listed}.'
    assert _invalid_ids(html) == {"xf-reason"}
    assert 'value="bogus"' in _tag(html, "xf-reason")
    assert client.get("/exports/feedback.csv?reason=incorrect").status_code == 200


def test_the_decisions_form_uses_its_own_labels(client, admin):
    html = client.get("/exports/decisions.csv?date_from=2026-12-05&date_to=2026-12-01").get_data(as_text=True)
    assert _note(html, "xd-error") == 'Nothing was downloaded: "Decided from" must not be after "to".'
    assert _invalid_ids(html) == {"xd-from", "xd-to"}


def test_a_bad_workspace_on_the_cases_form_is_named_by_its_label(client, admin):
    # A short name is a workspace as the case list takes it (``abc``: none such, refused
    # as another's id is, 400 in the case list's words); text that is neither a number
    # nor a name is named.
    none_such = client.get("/exports/cases.csv?workspace=abc")
    assert none_such.status_code == 400
    assert _note(none_such.get_data(as_text=True), "xc-error") == (
        "Nothing was downloaded: \"Workspace\": you have no workspace 'abc'.")
    response = client.get("/exports/cases.csv?workspace=Not+a+name")
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert _note(html, "xc-error") == ('Nothing was downloaded: "Workspace" must be a workspace\'s number '
                                       'or its short name (e.g. demo).')
    assert _invalid_ids(html) == {"xc-ws"}


def test_a_parameter_no_form_field_carries_keeps_its_name_and_marks_nothing(client, admin):
    """A hand-made URL: no field to mark, the note itself takes the focus."""
    html = client.get("/exports/feedback.csv?source_type=AUTO").get_data(as_text=True)
    note = _note(html, "xf-error")
    assert note.startswith("Nothing was downloaded: source_type: not a filter of this export; it takes: ")
    assert '"Created from"' in note
    assert _invalid_ids(html) == set()
    assert re.search(r'<p id="xf-error" [^>]*autofocus', html)
