"""Issue 17 items 5, 6 and 9 as a person sees the run page in Chromium at laptop (1280 px)
and phone (390 px) width: the conversation as the reading path of a τ-bench run, the
timeline of calls with no end event, no case from a RUNNING run and the demo answer's
citation markers; and a tool name that wraps on a phone wraps at its underscores.
Screenshots go to test-output/screenshots/issue17-*.png."""

from __future__ import annotations

import json

import pytest

from reviewapp.actors import Actor, Role
from reviewapp.services import demo, importers, runs, tool_calls

from ..shared_data import tau_bench_file
from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser
SYSTEM = Actor.system_actor()
WIDTHS = [1280, 390]


def _shot(page, name: str, width: int) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"issue17-{name}-{width}.png"))


@pytest.fixture
def tau(session, make):
    """A τ-bench run that made tool calls in two turns or more, one of them with a name
    too long for a phone's timeline column (get_reservation_details), as imported, and a
    reviewer of its workspace."""
    ws = make.workspace(slug="tau", name="τ-bench")
    record = next(r for r in json.loads(tau_bench_file().read_text())
                  if sum(1 for m in r["traj"] if m.get("tool_calls")) >= 2
                  and any(len(c["function"]["name"]) >= 23 for m in r["traj"]
                          for c in m.get("tool_calls") or []))
    run_id, doc, _ = importers.tau_bench_run(record, "gpt-4o-airline")
    run = runs.upsert_run(session, SYSTEM, ws.id, run_id, doc).run
    make.user(ws, username="tess.tools")
    return {"run": run, "record": record}


@pytest.mark.parametrize("width", WIDTHS)
def test_the_conversation_is_the_reading_path_and_names_the_tools(new_page, tau, width):
    """Item 5: turns in order before the answer card and the timeline; an assistant turn
    that only called tools names them, each linked to its timeline row."""
    page = new_page(width=width, height=900)
    log_in(page, "tess.tools")
    page.goto(f"/runs/{tau['run'].id}")
    tops = page.evaluate("""() => ['.conversation-main', '.answer', '.timeline'].map(
        s => document.querySelector(s).getBoundingClientRect().top)""")
    assert tops == sorted(tops)
    called = [c["function"]["name"] for m in tau["record"]["traj"] if m["role"] == "assistant"
              for c in m.get("tool_calls") or []]
    links = page.locator("section.conversation-main .turn-calls a")
    assert links.all_inner_texts() == called
    for href in links.evaluate_all("els => els.map(e => e.getAttribute('href'))"):
        assert page.locator(href).count() == 1
    first = links.first
    first.scroll_into_view_if_needed()
    assert first.is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    _shot(page, "conversation", width)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_tool_name_wraps_at_its_underscores(new_page, tau, width):
    """A long snake_case tool name in a timeline row breaks after an underscore, never
    inside a word ("get_reservation_detai / ls" at 390 px, seen in the walk)."""
    page = new_page(width=width, height=900)
    log_in(page, "tess.tools")
    page.goto(f"/runs/{tau['run'].id}")
    names = page.locator(".timeline .tl-name code")
    assert names.count() >= 2
    names.first.scroll_into_view_if_needed()
    for i in range(names.count()):
        breaks = names.nth(i).evaluate("""el => {
            const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT), found = [];
            let top = null, before = "", node;
            while ((node = walk.nextNode())) {
                for (let k = 0; k < node.length; k++) {
                    const r = document.createRange(); r.setStart(node, k); r.setEnd(node, k + 1);
                    const t = Math.round(r.getBoundingClientRect().top);
                    if (top !== null && t > top + 2) found.push(before);
                    top = t; before += node.data[k];
                }
            }
            return found; }""")
        assert all(before.endswith("_") for before in breaks), breaks
    _shot(page, "tool-names", width)


@pytest.mark.parametrize("width", WIDTHS)
def test_open_calls_are_markers_on_an_axis_of_the_timed_calls(new_page, make, session, width):
    """Item 6: a call with no end event is a short marker from its start saying "no end
    event", not a full-width bar; the axis is the calls' 2 s, not the run's four days;
    a call that ended before it started says so."""
    ws = make.workspace(slug="tl")
    make.user(ws, username="tim")
    run = make.run(ws, status="SUCCESS", started_at="2026-01-01T00:00:00Z",
                   finished_at="2026-01-05T00:00:00Z", tool_calls=[
                       {"id": "done", "tool_name": "a", "status": "completed",
                        "started_at": "2026-01-01T00:00:00Z", "completed_at": "2026-01-01T00:00:02Z"},
                       {"id": "open", "tool_name": "b", "status": "started",
                        "started_at": "2026-01-01T00:00:01Z"}])
    tool_calls.apply_events(session, SYSTEM, ws.id, [
        {"id": "back", "run_id": run.run_id, "event": "completed", "tool_name": "c",
         "timestamp": "2026-01-01T00:00:01Z", "output": "ok"},
        {"id": "back", "run_id": run.run_id, "event": "started", "tool_name": "c",
         "timestamp": "2026-01-01T00:00:01.500Z"}])
    page = new_page(width=width, height=900)
    log_in(page, "tim")
    page.goto(f"/runs/{run.id}")
    rows = page.locator(".timeline .tl-row")
    assert rows.count() == 3

    def bar(i):
        track = rows.nth(i).locator(".tl-track").bounding_box()
        box = rows.nth(i).locator("rect.bar").bounding_box()
        return (box["x"] - track["x"]) / track["width"], box["width"] / track["width"]

    assert bar(0) == (0, pytest.approx(1, abs=0.01))  # the 2 s call spans the axis
    start, length = bar(1)
    assert start == pytest.approx(0.5, abs=0.01) and length < 0.05
    assert rows.nth(1).locator(".tl-dur").inner_text() == "no end event"
    assert "ended before it started" in rows.nth(2).locator(".tl-dur").inner_text()
    ticks = page.locator(".timeline .tl-ticks > span").all_inner_texts()
    assert ticks[0] == "0 ms" and ticks[-1] == "2.0 s"
    _shot(page, "open-calls", width)


@pytest.mark.parametrize("width", WIDTHS)
def test_no_case_from_a_running_run_and_the_demo_answer_cites_its_citations(new_page, make, session,
                                                                             width):
    """Item 9: a lead is not offered "Create a case from this run" while it is RUNNING
    (told when it can be), and the demo answer's markers are the labels of its citations."""
    ws = make.workspace(slug="demo", name="Demo on-call")
    make.user(ws, Role.LEAD, username="lena.lead")
    running = make.run(ws, status="RUNNING", query="Still thinking?")
    demo.load(session, SYSTEM, ws.id)
    page = new_page(width=width, height=900)
    log_in(page, "lena.lead")
    page.goto(f"/runs/{running.id}")
    assert page.get_by_role("button", name="Create a case from this run").count() == 0
    assert page.get_by_text("A case can be made once the run has ended").is_visible()
    _shot(page, "running-no-case", width)
    page.goto("/?q=Redis")
    page.locator("table.runs a[href^='/runs/']").first.click()
    answer = page.locator("section.answer")
    assert "[c1]" in answer.inner_text() and "[1]" not in answer.inner_text()
    labels = page.locator(".citation").all_inner_texts()
    assert any("c1" in label for label in labels), labels
