"""Issue 14: the run page's outcome panel (label, reward, checks, missed actions) and
the runs list's outcome filter."""

from __future__ import annotations

import re

import pytest

from reviewapp.domain.outcome import MAX_ITEMS, outcome_view
from reviewapp.services import unrated_runs
from reviewapp.services.runs import RunFilters

DETAIL = {"source": "sregym", "reward": 0.25,
          "checks": [{"name": "diagnosis", "passed": True}, {"name": "mitigation", "passed": False,
                                                              "detail": "pod still Pending"}],
          "missed_actions": [{"name": "update_reservation_flights", "kwargs": {"reservation_id": "X1"}},
                             "restart <recommendation>"],
          "problem_id": "service_port_conflict"}


@pytest.fixture
def reviewer(make, login):
    ws = make.workspace()
    login(make.user(ws))
    return ws


def test_outcome_panel_shows_label_reward_checks_and_missed_actions(client, make, reviewer):
    run = make.run(reviewer, external_outcome="fail", external_outcome_detail=DETAIL)
    html = client.get(f"/runs/{run.id}").get_data(as_text=True)
    panel = html[html.index('aria-labelledby="outcome-h"'):]
    panel = panel[:panel.index("</section>")]
    assert "badge-outcome-fail" in panel and ">fail</span>" in panel
    assert "<dt>Reward</dt><dd>0.25</dd>" in panel
    assert "1 of 2 passed" in panel
    assert re.search(r'badge-pass">passed</span> diagnosis', panel)
    assert re.search(r'badge-fail">failed</span> mitigation', panel) and "pod still Pending" in panel
    assert 'update_reservation_flights({"reservation_id": "X1"})' in panel.replace("&#34;", '"')
    assert "restart &lt;recommendation&gt;" in panel  # escaped
    assert "<dt>problem_id</dt>" in panel and "(sregym)" in panel


def test_no_panel_without_outcome(client, make, reviewer):
    run = make.run(reviewer)
    assert 'aria-labelledby="outcome-h"' not in client.get(f"/runs/{run.id}").get_data(as_text=True)


def test_runs_list_filters_by_outcome(client, make, reviewer):
    make.run(reviewer, query="passed run", external_outcome="pass")
    make.run(reviewer, query="failed run", external_outcome="fail")
    html = client.get("/?outcome=FAIL").get_data(as_text=True)
    assert "failed run" in html and "passed run" not in html


def test_outcome_view_caps_and_tolerates_odd_detail():
    many = {"checks": [{"name": f"c{i}", "passed": i % 2 == 0} for i in range(MAX_ITEMS + 7)],
            "missed_actions": ["a"] * (MAX_ITEMS + 1), "reward": True}
    view = outcome_view("pass", many)
    assert (len(view.checks), len(view.missed_actions), view.hidden, view.reward) == (MAX_ITEMS, MAX_ITEMS, 8, None)
    assert outcome_view(None, None) is None
    assert outcome_view("x", [1, 2]).facts == [("detail", "[1, 2]")]
    assert outcome_view(None, {"checks": "nope", "note": "y" * 1000}).facts[0][1].endswith("…")


def test_review_queue_walks_only_the_runs_of_the_chosen_outcome(session, make):
    """The review queue takes the runs list's filters: with outcome=fail it offers the
    failed runs only, newest first, and counts only them (issue 14)."""
    ws = make.workspace()
    failed = [make.run(ws, external_outcome="fail") for _ in range(2)]
    make.run(ws, external_outcome="pass")
    make.run(ws)
    actor = make.actor(make.user(ws))
    state = unrated_runs.next_run(session, actor, RunFilters(outcome="FAIL"))
    assert state.run_pk == max(r.id for r in failed)
    assert (state.progress.reviewed, state.progress.total) == (0, 2)
    skipped = unrated_runs.next_run(session, actor, RunFilters(outcome="fail"), after_run_pk=state.run_pk)
    assert skipped.run_pk == min(r.id for r in failed)
