"""axe-core finds no serious or critical accessibility violation (issue 6)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from reviewapp.actors import Actor
from reviewapp.models import Run
from reviewapp.services import demo

from .conftest import log_in

pytestmark = pytest.mark.browser
AXE = Path(__file__).parent / "vendor" / "axe.min.js"
AXE_SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"


def _violations(page) -> list[str]:
    # The page's CSP forbids injected scripts; only this test context bypasses it.
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("""async () => {
        const r = await axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}});
        return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                       nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
    }""")
    return [f"{v['impact']}: {v['id']} ({v['help']}) at {v['nodes']}" for v in result
            if v["impact"] in ("serious", "critical")]


def test_vendored_axe_is_the_pinned_release():
    assert hashlib.sha256(AXE.read_bytes()).hexdigest() == AXE_SHA256


@pytest.mark.parametrize("width", [1280, 390])
def test_list_and_run_pages_have_no_serious_violation(new_page, session, make, width):
    ws = make.workspace(slug="demo")
    demo.load(session, Actor.system_actor(), ws.id)
    make.user(ws, username="ada.access")
    page = new_page(width, 900, bypass_csp=True)
    log_in(page, "ada.access")
    found = {"list": _violations(page)}
    runs = session.query(Run).order_by(Run.id).all()
    if width < 600:  # the phone layout: the list above, and the richest run page
        runs = [r for r in runs if r.run_id == "demo-chat-checkout-502"]
    for run in runs:
        page.goto(f"/runs/{run.id}")
        if page.locator(".tl-row").count():  # an opened call's details are checked too
            page.locator(".tl-row summary").first.click()
        page.wait_for_load_state("networkidle")
        found[run.run_id] = _violations(page)
    page.goto("/queue")
    found["queue"] = _violations(page)
    assert {name: v for name, v in found.items() if v} == {}


def test_the_check_itself_reports_a_violation(new_page, live_server):
    """The helper is not vacuous: a form field without a label is reported."""
    page = new_page(bypass_csp=True)
    page.set_content('<html lang="en"><head><title>t</title></head><body><main>'
                     '<input type="text"><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw='
                     'AAAAAAQABAAACAkQBADs="></main></body></html>')
    assert any("label" in v or "image-alt" in v for v in _violations(page))
