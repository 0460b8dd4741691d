"""The case list's Category column (new-user walk, 2026-12-03): it showed the stored codes
(``GENERAL``, ``NO_EVIDENCE``) while the case page says the label ("General / other"):
the list shows the label of the case's workspace's categories, the code as its title."""

from __future__ import annotations

import re
from html import unescape

from reviewapp.actors import Role
from reviewapp.models import Membership


def _category_cells(html: str) -> list[tuple[str, str]]:
    """(title, text) of every Category cell, top to bottom."""
    cells = re.findall(r'<td([^>]*data-label="Category"[^>]*)>(.*?)</td>', html, re.S)
    out = []
    for attributes, cell in cells:
        title = re.search(r'title="([^"]*)"', attributes)
        out.append((unescape(title.group(1)) if title else "", unescape(re.sub(r"<[^>]+>", "", cell)).strip()))
    return out


def test_the_case_list_shows_each_category_by_its_label(client, make, login, session):
    built_in = make.workspace(name="Built-in list")
    custom = make.workspace(name="Own list", fault_categories=[
        "GENERAL", {"code": "PAYMENTS", "label": "Payments & billing"}])
    lead = make.user(built_in, Role.LEAD)
    session.add(Membership(user_id=lead.id, workspace_id=custom.id, role="lead"))
    session.commit()
    login(lead)
    make.case(built_in, title="general one", fault_category="GENERAL")
    make.case(built_in, title="agent one", fault_category="NO_EVIDENCE")
    make.case(custom, title="payments one", fault_category="PAYMENTS")
    make.case(custom, title="dropped code", fault_category="LEGACY_THING")
    html = client.get("/cases/").get_data(as_text=True)
    # newest first: the order the cases were made, reversed
    assert _category_cells(html) == [
        ("LEGACY_THING", "LEGACY_THING"),  # a code the workspace's list no longer holds: the code
        ("PAYMENTS", "Payments & billing"),
        ("NO_EVIDENCE", "No evidence"),
        ("GENERAL", "General / other"),
    ]
