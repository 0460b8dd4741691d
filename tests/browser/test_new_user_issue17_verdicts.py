"""Issue 17, items 2-4 as a person sees them at 1280 and 390 px: a withdrawn case says so,
a triage item's automatic changes are in its history with their time, and a rating of
text the agent later changed says "given on an earlier version"."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from reviewapp.actors import Role
from reviewapp.models import Case
from reviewapp.services import feedback, runs

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser
WIDTHS = [1280, 390]


def _doc(answer: str) -> dict:
    return {"session_id": "s-v17", "kind": "chat", "query": "Why is checkout slow?", "answer": answer,
            "status": "SUCCESS", "messages": [
                {"id": "u1", "role": "user", "content": "Why is checkout slow?"},
                {"id": "a1", "role": "assistant", "content": answer}]}


@pytest.mark.parametrize("width", WIDTHS)
def test_verdict_flip_withdraws_the_case_and_logs_the_item(new_page, make, session, width):
    ws = make.workspace(slug="demo")
    make.user(ws, Role.LEAD, username="lena.lead")
    reviewer = make.actor(make.user(ws, username="rita.reviewer"))
    run = runs.upsert_run(session, make.system, ws.id, "r-v17", _doc("The disk is full.")).run
    answer = next(m for m in run.messages if m.role == "assistant")
    feedback.upsert_feedback(session, reviewer, "chat_message", answer.id, None, "negative",
                             reason="incorrect")
    feedback.upsert_feedback(session, reviewer, "chat_message", answer.id, None, "positive", switch=True)
    feedback.upsert_feedback(session, reviewer, "chat_message", answer.id, None, "negative", switch=True)
    case_id = session.query(Case).one().case_id
    runs.upsert_run(session, make.system, ws.id, "r-v17", _doc("The network is down."))

    page = new_page(width=width)
    log_in(page, "lena.lead")
    page.goto("/cases/")
    assert case_id not in page.content()  # gone from the library
    page.goto(f"/cases/{case_id}")
    expect(page.locator(".case-withdrawn")).to_contain_text("Withdrawn from the library")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"issue17-case-withdrawn-{width}.png"))

    page.goto("/triage/")
    page.locator("tr.triage-row td.query a").first.click()
    history = page.locator(".item-history")
    expect(history).to_contain_text("Resolved automatically: the run's verdict became useful")
    expect(history).to_contain_text("Reopened automatically: the run was judged not useful again")
    assert history.locator("time").count() == 2
    assert page.locator("#note").input_value() == ""  # the lead's note holds no automatic text
    assert "Case of this run" not in page.locator("main").inner_text()
    expect(page.locator("td .earlier-version")).to_have_text("given on an earlier version")
    history.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / f"issue17-triage-history-{width}.png"))

    reviewer_page = new_page(width=width)
    log_in(reviewer_page, "rita.reviewer")
    reviewer_page.goto(f"/runs/{run.id}")
    mark = reviewer_page.locator(".answer .thumbs .earlier-version")
    expect(mark).to_have_text(re.compile("given on an earlier version"))
    mark.scroll_into_view_if_needed()
    reviewer_page.screenshot(path=str(SCREENSHOTS / f"issue17-earlier-version-{width}.png"))
