"""A reviewer's work end to end in headless Chromium (SPEC 8; issue 6)."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from reviewapp.actors import Actor
from reviewapp.models import Feedback, Run
from reviewapp.services import demo, importers, runs, tool_calls

from ..shared_data import tau_bench_file
from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser
SYSTEM = Actor.system_actor()


@pytest.fixture
def demo_world(session, make):
    ws = make.workspace(slug="demo", name="Demo on-call")
    demo.load(session, SYSTEM, ws.id)
    record = json.loads(tau_bench_file().read_text())[0]
    run_id, doc, _ = importers.tau_bench_run(record, "gpt-4o-airline")
    tau = runs.upsert_run(session, SYSTEM, ws.id, run_id, doc).run
    user = make.user(ws, username="rita.reviewer")
    return {"ws": ws, "user": user, "tau": tau, "record": record}


def _run_pk(session, run_id: str) -> int:
    return session.query(Run).filter_by(run_id=run_id).one().id


def _feedback_post(response) -> bool:
    return response.url.endswith("/feedback") and response.request.method == "POST"


def _wait_saved(thumbs):
    thumbs.locator(".fb-status .saved").wait_for()


def test_review_an_imported_tau_bench_run(new_page, demo_world, session):
    """Log in, open the τ-bench run from the list, rate the answer, change the rating and
    see the verdict follow, reload and see it restored, delete it."""
    page = new_page()
    log_in(page, "rita.reviewer")
    tau = demo_world["tau"]
    page.get_by_role("link", name=re.compile(re.escape(tau.query[:30]))).click()
    page.wait_for_url(f"**/runs/{tau.id}")
    assert page.locator("h1").inner_text().startswith(tau.query[:30])
    assert "without a time axis" in page.locator(".timeline").inner_text()
    expected_calls = sum(len(m.get("tool_calls") or []) for m in demo_world["record"]["traj"])
    assert page.locator(".tl-row").count() == expected_calls
    answer = page.locator(".answer .thumbs")
    verdict = page.locator(f"#run-{tau.id}-verdict")
    assert "No verdict yet" in verdict.inner_text()

    answer.get_by_role("button", name=re.compile("^Helpful")).click()
    _wait_saved(page.locator(".answer .thumbs"))
    page.locator(f"#run-{tau.id}-verdict .badge-feedback-useful").wait_for()

    page.locator(".answer .thumbs").get_by_role("button", name=re.compile("^Not helpful")).click()
    page.locator(f"#run-{tau.id}-verdict .badge-feedback-not_useful").wait_for()
    details = page.locator(".answer .fb-details")
    details.locator("select[name=reason]").select_option("incomplete")
    details.locator("textarea[name=correction]").fill("Offer the certificate-first payment split.")
    # The "saved" mark of the thumbs-down click is already on the page: wait for the
    # details' own answer, else the reload can overtake the save.
    with page.expect_response(lambda r: r.request.method == "POST"):
        details.get_by_role("button", name="Save details").click()
    _wait_saved(page.locator(".answer .thumbs"))

    page.reload()
    restored = page.locator(".answer .thumbs")
    assert restored.locator('.thumb[data-rating="negative"]').get_attribute("aria-pressed") == "true"
    assert "Your rating: Incomplete" in restored.locator(".fb-status").inner_text()
    assert "Not useful" in page.locator(f"#run-{tau.id}-verdict").inner_text()

    # The active thumb: delete. Awaited by its own answer before the reload, like the
    # saves above (a "saved" mark is no proof that this request was answered).
    with page.expect_response(lambda r: r.url.endswith("/delete")
                              and r.request.method == "POST") as deleted:
        restored.locator('.thumb[data-rating="negative"]').click()
    assert deleted.value.status == 200
    page.locator(".answer .thumbs .fb-status .saved").wait_for()
    page.reload()
    assert page.locator('.answer .thumbs .thumb[aria-pressed="true"]').count() == 0
    session.rollback()  # end the test thread's read snapshot: the server wrote meanwhile
    assert session.query(Feedback).count() == 0


def test_rate_the_answer_and_a_citation_then_reload(new_page, demo_world, session):
    pk = _run_pk(session, "demo-chat-checkout-502")
    page = new_page()
    log_in(page, "rita.reviewer")
    page.goto(f"/runs/{pk}")
    page.locator(".answer .thumbs").get_by_role("button", name=re.compile("^Helpful")).click()
    _wait_saved(page.locator(".answer .thumbs"))
    citation = page.locator(".citation").nth(1)
    # Each save is awaited by its own answer: the row's "saved" mark is already on the page
    # from the thumb before the details are sent, so it cannot tell the two saves apart.
    with page.expect_response(_feedback_post) as thumbed:
        citation.locator(".thumbs").get_by_role("button", name=re.compile("^Not helpful")).click()
    assert thumbed.value.status == 200
    form = page.locator(".citation").nth(1).locator(".fb-details")
    form.wait_for()
    form.locator("select[name=reason]").select_option("citation")
    form.locator("textarea[name=correction]").fill("Cite the runbook revision from 2026-11.")
    expect(form.locator("select[name=reason]")).to_have_value("citation")
    with page.expect_response(_feedback_post) as detailed:
        form.get_by_role("button", name="Save details").click()
    assert detailed.value.status == 200
    assert "reason=citation" in (detailed.value.request.post_data or "")
    _wait_saved(page.locator(".citation").nth(1).locator(".thumbs"))

    page.reload()
    assert page.locator('.answer .thumb[data-rating="positive"]').get_attribute("aria-pressed") == "true"
    cited = page.locator(".citation").nth(1)
    assert cited.locator('.thumb[data-rating="negative"]').get_attribute("aria-pressed") == "true"
    assert cited.locator("select[name=reason]").input_value() == "citation"
    assert cited.locator("textarea[name=correction]").input_value() == "Cite the runbook revision from 2026-11."
    assert "Useful" in page.locator(f"#run-{pk}-verdict").inner_text()
    session.rollback()  # end the test thread's read snapshot: the server wrote meanwhile
    rows = {(f.target_type, f.subject_key): f.rating for f in session.query(Feedback)}
    assert rows == {("chat_message", ""): "positive", ("citation", "c2"): "negative"}


def test_review_three_runs_with_the_keyboard_alone(new_page, make, session):
    ws = make.workspace()
    made = [make.run(ws, query=f"Keyboard question {i}?") for i in range(3)]
    user = make.user(ws, username="kim.keys")
    page = new_page()
    log_in(page, "kim.keys")
    page.goto("/queue")
    visited: list[str] = []
    for _ in range(3):
        # Wait for a run page we have not rated yet: after "n" the old page is still
        # current until the queue's redirect lands, and it matches the same pattern.
        page.wait_for_url(lambda url: re.search(r"/runs/\d+\?queue=1$", url) is not None and url not in visited)
        page.wait_for_load_state()
        visited.append(page.url)
        page.locator("#queue-progress progress").wait_for()
        page.keyboard.press("j")
        page.keyboard.press("+")
        page.locator(".thumbs.is-focused .fb-status .saved").wait_for()
        page.keyboard.press("n")
    page.get_by_text("You have rated every run in this list").wait_for()
    session.rollback()  # end the test thread's read snapshot: the server wrote meanwhile
    rated = {f.run_pk for f in session.query(Feedback).filter_by(author_id=user.id, rating="positive")}
    assert rated == {r.id for r in made}


def test_shortcuts_do_not_fire_while_typing_and_question_mark_shows_help(new_page, demo_world, session):
    pk = _run_pk(session, "demo-chat-checkout-502")
    page = new_page()
    log_in(page, "rita.reviewer")
    page.goto(f"/runs/{pk}")
    page.locator(".answer .thumbs").get_by_role("button", name=re.compile("^Not helpful")).click()
    textarea = page.locator(".answer textarea[name=comment]")
    textarea.fill("")
    textarea.type("j+n-k?")
    assert textarea.input_value() == "j+n-k?"
    assert page.url.endswith(f"/runs/{pk}")
    page.locator("h1").click()
    page.keyboard.press("?")
    assert page.locator("#shortcuts").is_visible()


def test_an_answer_with_html_and_foreign_images_renders_inert(new_page, make, session, live_server):
    ws = make.workspace()
    evil = ('Look: <img src=x onerror=alert(1)> <script>alert(2)</script>\n\n'
            '[click me](javascript:alert(3)) and ![tracker](https://tracker.invalid/pixel.png) '
            '<a href="https://evil.invalid" onclick="alert(4)">html link</a>')
    run = make.run(ws, answer=evil, messages=[{"id": "a", "role": "assistant", "content": evil}])
    make.user(ws, username="xss.checker")
    page = new_page()
    dialogs, outside = [], []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(live_server) else None)
    log_in(page, "xss.checker")
    page.goto(f"/runs/{run.id}")
    page.wait_for_load_state("networkidle")
    prose = page.locator(".answer .prose")
    assert prose.locator("img, script, [onclick], [onerror]").count() == 0
    assert "<script>alert(2)</script>" in prose.inner_text()
    prose.get_by_text("click me", exact=False).click()
    page.wait_for_timeout(300)
    assert dialogs == [] and outside == []
    assert prose.locator("a[href^='javascript']").count() == 0


def test_a_running_runs_timeline_gains_a_call_ingested_while_open(new_page, demo_world, session):
    ws = demo_world["ws"]
    pk = _run_pk(session, "demo-chat-running")
    session.commit()  # end the read: the server writes (login) before this session does
    page = new_page()
    log_in(page, "rita.reviewer")
    page.goto(f"/runs/{pk}")
    timeline = page.locator(f"#run-{pk}-timeline")
    assert timeline.locator(".tl-row").count() == 1
    assert "Live" in timeline.inner_text()
    tool_calls.apply_events(session, SYSTEM, ws.id, [
        {"id": "live-call-2", "run_id": "demo-chat-running", "event": "started",
         "tool_name": "search_logs", "arguments": {"cluster": "search-prod"}}])
    page.locator(f"#run-{pk}-timeline .tl-row", has_text="search_logs").wait_for(timeout=8000)
    # The run ends: the page reloads once and the live view stops polling.
    runs.upsert_run(session, SYSTEM, ws.id, "demo-chat-running",
                    {"session_id": "demo-chat-session-4", "kind": "chat",
                     "query": "Is the search cluster healthy right now?", "status": "SUCCESS",
                     "answer": "Yes: all 12 nodes are green."})
    page.get_by_text("all 12 nodes are green").wait_for(timeout=8000)
    assert page.locator(f"#run-{pk}-timeline[hx-trigger]").count() == 0


@pytest.mark.parametrize("width, height, label", [(1280, 900, "desktop"), (390, 844, "phone")])
def test_screenshots_of_the_list_and_run_pages(new_page, demo_world, session, make, width, height,
                                              label):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    # Two reviewers who disagree on the chat answer, so the screenshots show ratings.
    from reviewapp.models import Message
    from reviewapp.services import feedback

    answer = session.query(Message).filter_by(run_pk=_run_pk(session, "demo-chat-checkout-502"),
                                              role="assistant").one()
    other = make.user(demo_world["ws"], username="omar.ops")
    feedback.upsert_feedback(session, make.actor(other), "chat_message", answer.id, None, "positive")
    feedback.upsert_feedback(session, make.actor(demo_world["user"]), "chat_message", answer.id, None,
                             "negative", reason="incomplete", comment="Misses the rollback risk.")
    page = new_page(width, height)
    log_in(page, "rita.reviewer")
    page.screenshot(path=str(SCREENSHOTS / f"runs-list-{label}.png"), full_page=True)
    for run_id, name in (("demo-chat-checkout-502", "run-chat"), ("demo-aiops-payment-errors", "run-aiops"),
                         ("tau-gpt-4o-airline-t0-r0", "run-tau-bench")):
        page.goto(f"/runs/{_run_pk(session, run_id)}")
        page.locator(".tl-row").first.wait_for()
        if name == "run-aiops":
            page.locator(".tl-row summary").nth(1).click()
            page.locator(".tool-call-detail").first.wait_for()
        page.screenshot(path=str(SCREENSHOTS / f"{name}-{label}.png"), full_page=True)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{name} scrolls sideways at {width}px"


def test_filters_live_in_the_url_and_the_back_button_restores_the_list(new_page, demo_world):
    page = new_page()
    log_in(page, "rita.reviewer")
    rows = page.locator("#runs-table tbody tr")
    everything = rows.count()
    table = page.locator("#runs-table")
    page.select_option("#kind", "aiops")
    page.wait_for_url(re.compile(r"kind=aiops"))
    expect(rows).to_have_count(2)
    assert table.is_visible() and page.locator("form.filters").count() == 1
    assert "2 matching" in page.locator("#runs-table .counts").inner_text()
    # A shared link opens the same list.
    shared = new_page()
    log_in(shared, "rita.reviewer")
    shared.goto(page.url)
    assert shared.locator("#runs-table tbody tr").count() == 2
    page.go_back()
    expect(rows).to_have_count(everything)
    assert "kind=aiops" not in page.url
