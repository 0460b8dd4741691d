"""The team-review pages (issue 16) in a browser at phone and laptop width: they render
their figures, do not scroll sideways with long reviewer names, and leave a screenshot
in test-output/screenshots for a person to look at."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role

from .conftest import PASSWORD, SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


@pytest.fixture
def team(make):
    ws = make.workspace(name="Checkout on-call")
    make.user(ws, Role.LEAD, username="team.lead")
    names = ["ann", "bob", "carmen.with-a-rather-long-username", "dev"]
    people = [make.user(ws, username=n) for n in names]
    # 12 runs; each reviewer rates some; a few disagreements.
    pattern = "++-+--+-++-+"
    for i in range(12):
        run = make.run(ws, started_at=f"2026-11-{10 + i:02d}T10:00:00Z")
        for j, person in enumerate(people):
            if (i + j) % 4 == 3:
                continue  # missing rating
            sign = pattern[(i + (j == 2) * (i % 3 == 0)) % 12]
            make.feedback_row(run, person, rating="positive" if sign == "+" else "negative")
    return ws


@pytest.mark.parametrize("width", [390, 1280])
def test_agreement_page(new_page, team, width):
    page = new_page(width, 900)
    log_in(page, "team.lead")
    page.goto("/dashboard/agreement?min_shared=3")
    assert page.locator("h1").inner_text() == "Reviewer agreement"
    assert page.locator("svg.chart").count() == 1
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"agreement-{width}.png"), full_page=True)
    assert overflow <= 0
    assert PASSWORD  # the fixture users share the browser tests' password


@pytest.fixture
def judged(make, session, team):
    # Judged runs: mostly score 30 (the tau-bench picture), a few disagreements.
    for i in range(14):
        run = make.run(team, f"judged-{i}", query=f"Can I change flight {i} to Friday? " + "x" * 60,
                       started_at=f"2026-10-{10 + i:02d}T12:00:00Z")
        run.feedback = "useful" if i % 3 else "not_useful"
        run.evidence_score = 30 if i < 11 else 65 + i
        run.verifier_verdict = ("PASS", "LOW_CONFID", "REJECT")[i % 3]
        run.external_outcome = "pass" if i % 2 else "fail"
    session.commit()
    return team


@pytest.mark.parametrize("width", [390, 1280])
def test_alignment_page(new_page, judged, width):
    page = new_page(width, 900)
    log_in(page, "team.lead")
    page.goto("/dashboard/alignment?date_from=2026-10-01&date_to=2026-10-31")
    assert page.locator("h1").inner_text() == "Automatic evaluation vs people"
    assert "score exactly 30" in page.locator(".score-warning").inner_text()
    page.locator("details summary").first.click()
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"alignment-{width}.png"), full_page=True)
    assert overflow <= 0
