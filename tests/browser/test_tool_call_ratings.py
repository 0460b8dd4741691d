"""Rating what the agent did (issue 19) in headless Chromium: thumbs on a failed tool
call of a τ-bench run with a reason and a comment, found again after a reload; the same
without JavaScript; ``j`` / ``k`` reach the timeline's rows."""

from __future__ import annotations

import json
import re

import pytest

from reviewapp.actors import Actor
from reviewapp.models import Feedback, Membership
from reviewapp.services import feedback, importers, runs

from ..shared_data import tau_bench_file
from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser
SYSTEM = Actor.system_actor()


@pytest.fixture
def tau_world(session, make):
    """The first τ-bench run whose import has a failed tool call, and a reviewer."""
    ws = make.workspace(slug="tau", name="τ-bench")
    for record in json.loads(tau_bench_file().read_text()):
        run_id, doc, _ = importers.tau_bench_run(record, "gpt-4o-airline")
        failed = [c for c in doc.get("tool_calls") or [] if c.get("status") == "failed"]
        if failed:
            break
    run = runs.upsert_run(session, SYSTEM, ws.id, run_id, doc).run
    user = make.user(ws, username="tess.tools")
    calls = doc["tool_calls"]
    index = calls.index(failed[0])  # 0-based position among the calls, in call order
    error = str(failed[0].get("error") or "")
    first_line = next(line.strip() for line in error.splitlines() if line.strip())
    return {"run": run, "user": user, "call": failed[0], "index": index,
            "first_line": first_line, "calls": len(calls), "record": record}


def _failed_row(page, call_id: str):
    return page.locator(".tl-row").filter(has=page.locator(f'input[name=subject_id][value="{call_id}"]')).first


def _assert_stored(session, user, run, call_id, comment):
    session.rollback()  # end the test thread's read snapshot: the server wrote meanwhile
    rows = [(f.target_type, f.target_id, f.subject_key, f.rating, f.reason, f.comment)
            for f in session.query(Feedback).filter_by(author_id=user.id)]
    assert rows == [("tool_call", run.id, call_id, "negative", "incorrect", comment)]


def test_rate_a_failed_tool_call_with_reason_and_comment_then_reload(new_page, tau_world, session):
    run, call = tau_world["run"], tau_world["call"]
    page = new_page(1280, 900)
    log_in(page, "tess.tools")
    page.goto(f"/runs/{run.id}")
    assert page.locator(".tl-row .thumbs").count() == tau_world["calls"]
    row = _failed_row(page, call["id"])
    # The failed row says why without being opened.
    assert row.locator(".tl-error").inner_text().strip() == tau_world["first_line"]
    assert row.locator("details.tl-call").get_attribute("open") is None

    row.get_by_role("button", name=re.compile("Not helpful")).click()
    form = _failed_row(page, call["id"]).locator(".fb-details")
    form.wait_for()
    form.locator("select[name=reason]").select_option("incorrect")
    comment = "Said the flight was changed; this call failed."
    form.locator("textarea[name=comment]").fill(comment)
    # The thumb's own "saved" is already on the row: wait for this save's answer instead.
    with page.expect_response(lambda r: r.url.endswith("/feedback")
                              and r.request.method == "POST") as saved:
        form.get_by_role("button", name="Save details").click()
    assert saved.value.status == 200
    _failed_row(page, call["id"]).locator(".fb-status .saved").wait_for()

    page.reload()
    row = _failed_row(page, call["id"])
    assert row.locator('.thumb[data-rating="negative"]').get_attribute("aria-pressed") == "true"
    assert row.locator("select[name=reason]").input_value() == "incorrect"
    assert row.locator("textarea[name=comment]").input_value() == comment
    assert "Your rating: Incorrect" in row.locator(".fb-status").inner_text()
    _assert_stored(session, tau_world["user"], run, call["id"], comment)


def test_rate_a_tool_call_without_javascript_returns_to_its_row(new_page, tau_world, session):
    run, call = tau_world["run"], tau_world["call"]
    page = new_page(390, 844, java_script_enabled=False)
    log_in(page, "tess.tools")
    page.goto(f"/runs/{run.id}")
    _failed_row(page, call["id"]).get_by_role("button", name=re.compile("Not helpful")).click()
    page.wait_for_url(re.compile(rf"/runs/{run.id}\?.*#fb-tool_call-"))
    row = _failed_row(page, call["id"])
    assert row.locator('.thumb[data-rating="negative"]').get_attribute("aria-pressed") == "true"
    more = row.locator("details.fb-more")
    if more.get_attribute("open") is None:
        more.locator("summary").click()
    comment = "No JavaScript: still rated."
    row.locator("select[name=reason]").select_option("incorrect")
    row.locator("textarea[name=comment]").fill(comment)
    row.get_by_role("button", name="Save details").click()
    page.wait_for_url(re.compile(rf"/runs/{run.id}\?.*#fb-tool_call-"))
    row = _failed_row(page, call["id"])
    assert row.locator("textarea[name=comment]").input_value() == comment
    _assert_stored(session, tau_world["user"], run, call["id"], comment)


def test_j_and_k_walk_through_the_tool_calls(new_page, tau_world, session):
    run = tau_world["run"]
    page = new_page(1280, 900)
    log_in(page, "tess.tools")
    page.goto(f"/runs/{run.id}")
    targets = page.locator("[data-target]")
    first_call = next(i for i in range(targets.count())
                      if targets.nth(i).evaluate("el => !!el.closest('.tl-row')"))
    for _ in range(first_call + 2):  # to the second tool call
        page.keyboard.press("j")
    focused = page.locator(".thumbs.is-focused")
    assert focused.evaluate("el => [...document.querySelectorAll('.tl-row')].indexOf(el.closest('.tl-row'))") == 1
    page.keyboard.press("k")
    assert page.locator(".thumbs.is-focused").evaluate(
        "el => [...document.querySelectorAll('.tl-row')].indexOf(el.closest('.tl-row'))") == 0
    page.keyboard.press("+")
    page.locator(".tl-row .thumbs.is-focused .fb-status .saved").wait_for()
    session.rollback()
    assert [(f.target_type, f.rating) for f in session.query(Feedback)] == [("tool_call", "positive")]


def test_a_long_message_expands_in_place_and_turns_are_rated_in_the_conversation(
        new_page, tau_world, session):
    """Issue 19 "long messages" and issue 17 item 5: the τ-bench system prompt (cut on
    the page) opens where it is, its preview replaced, not repeated; the conversation is
    the main reading path with thumbs on the assistant turns and links to their calls."""
    run = tau_world["run"]
    page = new_page(1280, 900)
    log_in(page, "tess.tools")
    page.goto(f"/runs/{run.id}")
    conversation = page.locator("section.conversation-main")
    assert conversation.is_visible()
    # The conversation comes before the answer card and the timeline.
    order = page.evaluate("""() => ['.conversation-main', '.answer', '.timeline'].map(
        s => document.querySelector(s).getBoundingClientRect().top)""")
    assert order == sorted(order)
    system = conversation.locator(".msg-system")
    preview, full = system.locator(".preview-text"), system.locator(".full-text")
    assert preview.is_visible() and not full.is_visible()
    system.locator(".show-all > summary").click()
    assert full.is_visible() and not preview.is_visible()
    prompt = next(m["content"] for m in tau_world["record"]["traj"] if m["role"] == "system")
    assert full.inner_text().strip() == prompt.strip()
    # A turn that called a tool links to the call's timeline row.
    link = conversation.locator(".turn-calls a").first
    target = link.get_attribute("href")
    assert page.locator(target).count() == 1 and target.startswith("#call-")
    # Rate the first assistant turn; it is stored as a conversation_turn rating.
    turn = conversation.locator(".msg-assistant .thumbs").first
    turn.get_by_role("button", name=re.compile("Not helpful")).click()
    conversation.locator(".msg-assistant .thumbs").first.locator(".fb-status .saved").wait_for()
    session.rollback()
    assert [(f.target_type, f.rating) for f in session.query(Feedback)] == [
        ("conversation_turn", "negative")]


def test_an_opened_call_keeps_the_width_of_a_phone_when_someone_rated_it(new_page, tau_world, session, make):
    """At 390 px a tool call another reviewer rated shows "All reviewers: ..." beside its
    thumbs; that line must not take the row's width from the opened call (found in a
    browser walk: the arguments got ~100 px and wrapped the JSON letter by letter)."""
    run, call_id = tau_world["run"], tau_world["call"]["id"]
    other = make.user(make.workspace(), username="olga.other")
    session.add(Membership(user_id=other.id, workspace_id=run.workspace_id, role="reviewer"))
    session.commit()
    feedback.upsert_feedback(session, make.actor(other), "tool_call", run.id, call_id, "negative")
    session.commit()
    page = new_page(390, 844)
    log_in(page, tau_world["user"].username)
    page.goto(f"/runs/{run.id}")
    row = _failed_row(page, call_id)
    assert "olga.other" in row.locator(".thumbs").inner_text() or "1" in row.locator(".fb-others").inner_text()
    row.locator("summary").first.click()
    row.locator("pre").first.wait_for()
    widths = row.evaluate("r => [r.getBoundingClientRect().width, r.querySelector('.tl-call').getBoundingClientRect().width]")
    assert widths[1] >= 0.85 * widths[0], widths


def test_an_opened_call_nobody_rated_keeps_the_width_of_a_phone(new_page, tau_world):
    """At 390 px an opened call nobody rated had its thumbs beside it, so its arguments got
    ~238 of 340 px and the JSON wrapped between a key and its value (found in a browser
    walk after the rated case above was fixed): opened, the thumbs go below it."""
    run, call_id = tau_world["run"], tau_world["call"]["id"]
    page = new_page(390, 844)
    log_in(page, tau_world["user"].username)
    page.goto(f"/runs/{run.id}")
    row = _failed_row(page, call_id)
    assert row.locator(".fb-others").count() == 0
    row.locator("summary").first.click()
    row.locator("pre").first.wait_for()
    widths = row.evaluate("r => [r.getBoundingClientRect().width, r.querySelector('.tl-call').getBoundingClientRect().width]")
    assert widths[1] >= 0.85 * widths[0], widths


@pytest.mark.parametrize("width", [1280, 1024])
def test_the_bars_line_up_with_the_axis_whoever_rated_a_row(new_page, session, make, width):
    """Second new-user walk: a row that others rated ("All reviewers: 👎 2 reviewer,
    reviewer2") widened its thumbs column and moved its bar track left of the other rows'
    and of the "0 ms" axis: each row's track must span the axis's ticks."""
    ws = make.workspace()
    calls = [{"id": f"tc-{i}", "tool_name": name, "status": "completed",
              "started_at": f"2026-11-27T10:00:0{2 * i}Z", "completed_at": f"2026-11-27T10:00:0{2 * i + 1}Z"}
             for i, name in enumerate(("knowledge_search", "query_logs", "query_metrics"))]
    run = make.run(ws, kind="aiops", query="Alert: checkout 502", answer="Pods restarting.",
                   messages=[], tool_calls=calls)
    me = make.user(ws, username="tess.tools")
    for name in ("reviewer", "reviewer2"):
        other = make.user(ws, username=name)
        feedback.upsert_feedback(session, make.actor(other), "tool_call", run.id, "tc-0", "negative")
    session.commit()
    page = new_page(width, 900)
    log_in(page, me.username)
    page.goto(f"/runs/{run.id}")
    assert "reviewer, reviewer2" in _failed_row(page, "tc-0").locator(".fb-others").inner_text()
    ticks = page.locator(".tl-ticks").first.bounding_box()
    tracks = page.locator(".tl-row .tl-track").evaluate_all(
        "ts => ts.map(t => { const r = t.getBoundingClientRect(); return [r.left, r.right]; })")
    assert len(tracks) == 3
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".timeline").first.screenshot(path=str(SCREENSHOTS / f"timeline-rated-{width}.png"))
    for left, right in tracks:
        assert abs(left - ticks["x"]) <= 1 and abs(right - (ticks["x"] + ticks["width"])) <= 1, (
            tracks, ticks)


def test_the_bars_line_up_on_a_phone_whoever_rated_a_row(new_page, session, make):
    """Third new-user walk: at 390 px a row the viewer rated (its thumbs and "Why?" go below
    the row) had a wider bar track than the unrated rows (thumbs beside them), so the bars
    did not line up; and a call with no end event had its "no end event" squeezed onto four
    lines. Every row's track has the axis's left and width; the label takes two lines at most."""
    ws = make.workspace()
    calls = [{"id": f"tc-{i}", "tool_name": name, "status": "completed",
              "started_at": f"2026-11-27T10:00:0{2 * i}Z", "completed_at": f"2026-11-27T10:00:0{2 * i + 1}Z"}
             for i, name in enumerate(("knowledge_search", "query_logs", "query_metrics"))]
    calls.append({"id": "tc-3", "tool_name": "get_kubernetes_pod_status", "status": "started",
                  "started_at": "2026-11-27T10:00:07Z"})
    run = make.run(ws, kind="aiops", query="Alert: checkout 502", answer="Pods restarting.",
                   messages=[], tool_calls=calls)
    me = make.user(ws, username="tess.tools")
    feedback.upsert_feedback(session, make.actor(me), "tool_call", run.id, "tc-0", "negative")
    feedback.upsert_feedback(session, make.actor(me), "tool_call", run.id, "tc-1", "positive")
    other = make.user(ws, username="reviewer2")
    feedback.upsert_feedback(session, make.actor(other), "tool_call", run.id, "tc-2", "negative")
    session.commit()
    page = new_page(390, 844)
    log_in(page, me.username)
    page.goto(f"/runs/{run.id}")
    ticks = page.locator(".tl-ticks").first.bounding_box()
    tracks = page.locator(".tl-row .tl-track").evaluate_all(
        "ts => ts.map(t => { const r = t.getBoundingClientRect(); return [r.left, r.width]; })")
    assert len(tracks) == 4
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".timeline").first.screenshot(path=str(SCREENSHOTS / "timeline-rated-390.png"))
    for left, width in tracks:
        assert abs(left - ticks["x"]) <= 1 and abs(width - ticks["width"]) <= 1, (tracks, ticks)
    # The calls' bars are not a sliver of the phone's width.
    assert ticks["width"] >= 200, ticks
    # An opened call takes the row's width below its summary, its track still in line.
    _failed_row(page, "tc-1").locator("summary").first.click()
    _failed_row(page, "tc-1").locator(".tl-body").first.wait_for()
    opened = _failed_row(page, "tc-1").locator(".tl-track").bounding_box()
    page.locator(".timeline").first.screenshot(path=str(SCREENSHOTS / "timeline-rated-opened-390.png"))
    assert abs(opened["x"] - ticks["x"]) <= 1 and abs(opened["width"] - ticks["width"]) <= 1, (opened, ticks)
    row = _failed_row(page, "tc-3")
    lines = "e => Math.round(e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight))"
    assert row.locator(".tl-dur").inner_text().strip() == "no end event"
    assert row.locator(".tl-dur").evaluate(lines) <= 2 and row.locator(".tl-name code").evaluate(lines) <= 2, (
        row.locator(".tl-dur").evaluate(lines), row.locator(".tl-name code").evaluate(lines))
