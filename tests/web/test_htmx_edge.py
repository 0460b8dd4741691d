"""Every htmx header goes through ``web/htmx.py`` (issue 12 point 4): no other module
sets an ``HX-*`` response header or reads an ``HX-*`` request header, and no template
reads request headers at all; the runs list's "Add to queue" still comes back to the
page it was sent from, or to the list for an htmx swap."""

from __future__ import annotations

import html
import re
from pathlib import Path

from reviewapp.actors import Role
from reviewapp.services import review_queues as rq

PACKAGE = Path(__file__).resolve().parents[2] / "reviewapp"
TEMPLATES = PACKAGE.parent / "templates"


def test_hx_headers_only_in_web_htmx():
    touching = sorted(
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in PACKAGE.rglob("*.py") if path != PACKAGE / "web" / "htmx.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"""(headers(\.get)?\(|headers\[)\s*["']HX-""", line))
    assert touching == []
    in_templates = sorted(
        f"{path.relative_to(TEMPLATES)}:{number}" for path in TEMPLATES.rglob("*.html")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "request.headers" in line)
    assert in_templates == []


def test_add_to_queue_comes_back_to_the_page_or_the_list(client, login, make, session):
    ws = make.workspace()
    lead = make.user(ws, Role.LEAD)
    make.run(ws, query="Chat question?")
    rq.create_queue(session, make.actor(lead), ws.id, "Q", {"kind": "aiops"})
    login(lead)

    def back(**headers):
        page = client.get(f"/?kind=chat&workspace={ws.id}", headers=headers).get_data(as_text=True)
        return html.unescape(re.search(r'name="next" value="([^"]*)"', page).group(1))

    assert back() == f"/?kind=chat&workspace={ws.id}"
    swapped = back(**{"HX-Request": "true"})
    assert swapped.startswith("/?") and set(swapped[2:].split("&")) == {"kind=chat",
                                                                          f"workspace={ws.id}"}
    # A history restore gets the whole page but is still sent by htmx: the list, as before.
    assert back(**{"HX-Request": "true", "HX-History-Restore-Request": "true"}) == swapped
