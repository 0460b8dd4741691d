"""Issue 14: the outcome panel of an imported tau-bench run, as a person sees it at 1280
and 390 px (screenshots in test-output/screenshots)."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from reviewapp.actors import Actor
from reviewapp.services import importers, runs

from ..shared_data import tau_bench_file
from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser
SYSTEM = Actor.system_actor()


@pytest.mark.parametrize("width", [1280, 390])
def test_outcome_panel_of_a_tau_bench_run(new_page, session, make, width):
    ws = make.workspace(slug="tau", name="tau-bench")
    make.user(ws, username="rita.reviewer")
    record = next(r for r in json.loads(tau_bench_file().read_text()) if r["reward"] == 0)
    run_id, doc, _ = importers.tau_bench_run(record, "gpt-4o-airline")
    run = runs.upsert_run(session, SYSTEM, ws.id, run_id, doc).run
    runs.set_outcome(session, SYSTEM, ws.id, run_id, {
        "external_outcome": "fail", "external_outcome_detail": {
            **doc["external_outcome_detail"],
            "checks": [{"name": "database state", "passed": False, "detail": "hash differs"},
                       {"name": "outputs", "passed": True}]}})
    page = new_page(width=width)
    log_in(page, "rita.reviewer")
    page.goto(f"/runs/{run.id}")
    panel = page.locator("section.outcome")
    expect(panel).to_be_visible()
    expect(panel.locator(".badge-outcome")).to_have_text("fail")
    expect(panel).to_contain_text("1 of 2 passed")
    missed = doc["external_outcome_detail"]["missed_actions"]
    expect(panel.locator(".outcome-missed li")).to_have_count(len(missed))
    overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    panel.screenshot(path=str(SCREENSHOTS / f"outcome-panel-{width}.png"))
    page.screenshot(path=str(SCREENSHOTS / f"outcome-run-{width}.png"), full_page=False)
