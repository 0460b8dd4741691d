"""At phone width (390 px) every navigation link is on screen, and the dashboard's charts
keep readable text (new-user findings, 2026-12-01). Screenshots go to
test-output/screenshots/phone-*.png."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.fixture
def world(make):
    ws = make.workspace(slug="demo", name="Demo on-call")
    make.user(ws, Role.ADMIN, username="ada.admin")
    make.user(ws, Role.LEAD, username="lena.lead")
    for n in range(3):
        make.run(ws, self_evaluation={"verifier_evaluation": {"verdict": ("PASS", "LOW_CONFID", "REJECT")[n]}})
    return ws


def _shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"phone-{name}.png"), full_page=True)


@pytest.mark.parametrize("username", ["ada.admin", "lena.lead"])
def test_every_nav_link_is_visible_at_390_px(new_page, world, username):
    page = new_page(width=390, height=844)
    log_in(page, username)
    page.goto("/dashboard/")
    links = page.locator("nav.nav a")
    names = [t.strip() for t in links.all_inner_texts()]
    # a lead sees up to Dashboard; an admin also Exports and Admin (base.html, web/nav.py)
    for expected in ("Runs", "Review queue", "Triage", "Cases", "Dashboard"):
        assert expected in names, names
    if username == "ada.admin":
        assert "Exports" in names and "Admin" in names, names
    _shot(page, f"nav-{username}")
    for i in range(links.count()):
        box = links.nth(i).bounding_box()
        # wholly inside the 390 px viewport, without scrolling anything
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, (names[i], box)
        assert box["y"] >= 0 and box["y"] + box["height"] <= 844, (names[i], box)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_dashboard_chart_text_stays_readable_at_390_px(new_page, world):
    page = new_page(width=390, height=844)
    log_in(page, "lena.lead")
    page.goto("/dashboard/")
    _shot(page, "dashboard")
    # The SVG text is 11 px in the chart's own units; its drawn size is that times the
    # chart's scale (drawn width / viewBox width). At least 9 px on screen.
    sizes = page.evaluate("""() => [...document.querySelectorAll('svg.chart')].map(svg => {
        const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
        const text = svg.querySelector('text');
        return text ? parseFloat(getComputedStyle(text).fontSize) * scale : null; })""")
    sizes = [s for s in sizes if s is not None]
    assert sizes and min(sizes) >= 9, sizes
    # ... the page itself does not scroll sideways: each chart scrolls in its own box
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    box = page.locator(".chart-scroll").first
    assert box.evaluate("el => el.scrollWidth > el.clientWidth")
    assert box.get_attribute("tabindex") == "0"
